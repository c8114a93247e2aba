#include "emulator/request.hpp"

#include "comm/errors.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

Request::~Request() {
  if (op_) fabric_->release(op_);
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (op_) fabric_->release(op_);
    fabric_ = other.fabric_;
    op_ = std::move(other.op_);
  }
  return *this;
}

void Request::wait() {
  RANKLAB_CHECK(valid(), "wait() on an empty Request");
  fabric_->wait(*op_, std::chrono::steady_clock::time_point::max(),
                Fabric::WaitMode::indefinite);
}

bool Request::wait_for(std::chrono::milliseconds timeout) {
  RANKLAB_CHECK(valid(), "wait_for() on an empty Request");
  return fabric_->wait(*op_, std::chrono::steady_clock::now() + timeout,
                       Fabric::WaitMode::until_deadline);
}

bool Request::test() {
  RANKLAB_CHECK(valid(), "test() on an empty Request");
  return fabric_->test(*op_);
}

RecvStatus Request::status() const {
  RANKLAB_CHECK(valid() && op_->done.load(std::memory_order_acquire),
                "status() of a Request that has not completed");
  return op_->status;
}

}  // namespace ranklab
