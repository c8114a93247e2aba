// Run-time errors a Communicator call can throw, whatever the backend (the emulator, MPI).
// The root types (Error, UsageError, TraceError) live in traces/error.hpp so that the trace
// tools, which have no fibers, share them.
#pragma once

#include <fmt/format.h>

#include "traces/error.hpp"

namespace ranklab {

/// Thrown in every blocked rank when the run is declared deadlocked (exit code 3).
class DeadlockError : public Error {
 public:
  using Error::Error;
};

/// Thrown in a rank whose wait was cancelled because another rank failed (exit code 5).
class PeerAbortedError : public Error {
 public:
  using Error::Error;
};

/// Members of a collective, or the two sides of a message, disagree (exit code 4).
class MismatchError : public Error {
 public:
  using Error::Error;
};

/// A blocking wait outlived the cluster's timeout: the watchdog's verdict.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

}  // namespace ranklab

/// Throws UsageError("[file:line] message") when `cond` is false. For API misuse only;
/// internal invariants use assert.
#define RANKLAB_CHECK(cond, ...)                                                        \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      throw ::ranklab::UsageError(                                                      \
          ::fmt::format("[{}:{}] {}", __FILE__, __LINE__, ::fmt::format(__VA_ARGS__))); \
    }                                                                                   \
  } while (false)
