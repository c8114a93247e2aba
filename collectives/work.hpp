// The handle of an asynchronous communicator call (c10d's Work).
#pragma once

#include <chrono>
#include <memory>

#include "emulator/request.hpp"

namespace ranklab {

namespace detail {
/// What a backend completes asynchronously. Implementations wrap an emulator Request or,
/// later, an MPI request.
class WorkImpl {
 public:
  virtual ~WorkImpl() = default;
  virtual void wait() = 0;
  virtual bool wait_for(std::chrono::milliseconds timeout) = 0;
  virtual bool test() = 0;
  virtual RecvStatus status() const = 0;
};
}  // namespace detail

/// Move-only. wait() blocks and throws what the operation failed with; test() polls;
/// status() tells what a completed receive matched. A default-constructed or completed
/// Work (returned by calls that ran synchronously) is already done.
class Work {
 public:
  Work() = default;
  explicit Work(std::unique_ptr<detail::WorkImpl> impl) : impl_(std::move(impl)) {}
  /// A handle on an emulator request.
  static Work from_request(Request request);

  void wait() {
    if (impl_) impl_->wait();
  }
  bool wait_for(std::chrono::milliseconds timeout) { return !impl_ || impl_->wait_for(timeout); }
  bool test() { return !impl_ || impl_->test(); }
  RecvStatus status() const { return impl_ ? impl_->status() : RecvStatus{}; }

 private:
  std::unique_ptr<detail::WorkImpl> impl_;
};

}  // namespace ranklab
