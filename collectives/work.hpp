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
/// Work (returned by calls that ran synchronously) is already done. An emulator request is
/// held inline (no allocation per call); other backends supply a WorkImpl.
class Work {
 public:
  Work() = default;
  explicit Work(std::unique_ptr<detail::WorkImpl> impl) : impl_(std::move(impl)) {}
  /// A handle on an emulator request.
  static Work from_request(Request request) {
    Work work;
    work.request_ = std::move(request);
    return work;
  }

  void wait() {
    if (request_.valid()) request_.wait();
    if (impl_) impl_->wait();
  }
  bool wait_for(std::chrono::milliseconds timeout) {
    if (request_.valid()) return request_.wait_for(timeout);
    return !impl_ || impl_->wait_for(timeout);
  }
  bool test() {
    if (request_.valid()) return request_.test();
    return !impl_ || impl_->test();
  }
  RecvStatus status() const {
    if (request_.valid()) return request_.status();
    return impl_ ? impl_->status() : RecvStatus{};
  }

 private:
  Request request_;
  std::unique_ptr<detail::WorkImpl> impl_;
};

}  // namespace ranklab
