// The handle of a non-blocking operation (isend, irecv, a non-blocking collective).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "comm/matching.hpp"

namespace ranklab {

class Fabric;
namespace detail {
struct Operation;
}

/// Like c10d's Work or gloo's buffer handles: wait, wait_for, test. Move-only. Destroying
/// the handle of an unfinished operation makes it independent of the caller's buffers: a
/// send keeps a copy of its payload, a receive is cancelled (the trace shows it pending),
/// and a collective is waited for, as std::future's destructor does for std::async.
class [[nodiscard]] Request {
 public:
  Request() = default;
  Request(Request&&) noexcept = default;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  bool valid() const { return op_ != nullptr; }

  /// Blocks the calling rank until the operation completes. Throws DeadlockError when
  /// the run is declared deadlocked, PeerAbortedError when another rank failed,
  /// MismatchError when the two sides disagree, TimeoutError after the cluster timeout.
  void wait();

  /// Like wait, but gives up after `timeout` and returns false (the operation stays posted).
  [[nodiscard]] bool wait_for(std::chrono::milliseconds timeout);

  /// Non-blocking: true once complete (then throws like wait if it failed).
  [[nodiscard]] bool test();

  /// What a completed receive matched; for other operations, default values.
  RecvStatus status() const;

 private:
  friend class Fabric;
  Request(Fabric* fabric, std::shared_ptr<detail::Operation> op)
      : fabric_(fabric), op_(std::move(op)) {}

  Fabric* fabric_ = nullptr;
  std::shared_ptr<detail::Operation> op_;
};

}  // namespace ranklab
