// The handle of an asynchronous communicator call (c10d's Work), and the one way a backend
// completes a call asynchronously: it returns a Work holding its own detail::WorkImpl.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "comm/matching.hpp"

namespace ranklab {

namespace detail {
/// What a backend completes asynchronously: the emulator's fabric request, an MPI request.
/// wait() and test() throw what the operation failed with (comm/errors.hpp); destroying an
/// unfinished one follows the backend's rule for a dropped handle (emulator/request.hpp).
class WorkImpl {
 public:
  virtual ~WorkImpl() = default;
  virtual void wait() = 0;
  virtual bool wait_for(std::chrono::milliseconds timeout) = 0;
  virtual bool test() = 0;
  /// What a completed receive matched; default values for other operations.
  virtual RecvStatus status() const = 0;
};
}  // namespace detail

/// Move-only. wait() blocks and throws what the operation failed with; test() polls;
/// status() tells what a completed receive matched. A default-constructed Work (returned by
/// calls that ran synchronously) is already done. [[nodiscard]]: a Work dropped unwaited
/// is almost always a bug (a receive cancelled, a send's completion never checked); where
/// the backend's rule for a dropped handle is what is meant, say so with static_cast<void>.
///
/// A small implementation (up to kInlineBytes, nothrow movable: an emulator request is a
/// pointer and a shared_ptr) lives inside the Work, so a call allocates no handle; a
/// larger one is allocated once per call.
class [[nodiscard]] Work {
 public:
  static constexpr std::size_t kInlineBytes = 4 * sizeof(void*);

  Work() = default;
  explicit Work(std::unique_ptr<detail::WorkImpl> impl) : impl_(impl.release()) {}

  /// A Work holding `Impl(args...)`, inside the handle when it fits.
  template <typename Impl, typename... Args>
  static Work make(Args&&... args) {
    static_assert(std::is_base_of_v<detail::WorkImpl, Impl>);
    if constexpr (fits_inline<Impl>()) {
      Work work;
      work.impl_ = ::new (static_cast<void*>(work.storage_)) Impl(std::forward<Args>(args)...);
      work.relocate_ = &relocate<Impl>;
      return work;
    } else {
      return Work(std::make_unique<Impl>(std::forward<Args>(args)...));
    }
  }

  Work(Work&& other) noexcept { take(other); }
  Work& operator=(Work&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() { reset(); }

  void wait() {
    if (impl_) impl_->wait();
  }
  [[nodiscard]] bool wait_for(std::chrono::milliseconds timeout) {
    return !impl_ || impl_->wait_for(timeout);
  }
  [[nodiscard]] bool test() { return !impl_ || impl_->test(); }
  RecvStatus status() const { return impl_ ? impl_->status() : RecvStatus{}; }
  /// Whether the call is still the backend's to complete (false: it completed before it
  /// returned, a default-constructed Work).
  bool has_handle() const { return impl_ != nullptr; }

 private:
  template <typename Impl>
  static constexpr bool fits_inline() {
    return sizeof(Impl) <= kInlineBytes && alignof(Impl) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<Impl>;
  }
  // Moves the inline `Impl` at `from` into `to` and ends `from`'s lifetime.
  template <typename Impl>
  static detail::WorkImpl* relocate(detail::WorkImpl* from, void* to) noexcept {
    Impl* source = static_cast<Impl*>(from);
    Impl* moved = ::new (to) Impl(std::move(*source));
    source->~Impl();
    return moved;
  }

  bool is_inline() const { return relocate_ != nullptr; }
  void take(Work& other) noexcept {
    if (other.is_inline()) {
      impl_ = other.relocate_(other.impl_, storage_);
      relocate_ = other.relocate_;
    } else {
      impl_ = other.impl_;
    }
    other.impl_ = nullptr;
    other.relocate_ = nullptr;
  }
  void reset() noexcept {
    if (is_inline()) {
      impl_->~WorkImpl();
    } else {
      delete impl_;
    }
    impl_ = nullptr;
    relocate_ = nullptr;
  }

  detail::WorkImpl* impl_ = nullptr;  ///< in storage_ when relocate_ is set, else owned
  detail::WorkImpl* (*relocate_)(detail::WorkImpl*, void*) noexcept = nullptr;
  alignas(std::max_align_t) std::byte storage_[kInlineBytes];
};

}  // namespace ranklab
