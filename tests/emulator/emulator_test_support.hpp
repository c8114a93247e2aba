// Helpers of the emulator suite: typed fills with closed forms, and a
// per-rank record of which exception ended each rank.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "tests/support/cluster_params.hpp"

namespace ranklab::testing {

/// x[i] = rank * stride + i: distinct per rank and per element, to catch offset bugs.
template <typename T>
std::vector<T> fill(int rank, std::size_t count, std::int64_t stride = 1000) {
  std::vector<T> x(count);
  for (std::size_t i = 0; i < count; ++i) {
    x[i] = static_cast<T>(rank * stride + static_cast<std::int64_t>(i));
  }
  return x;
}

/// Which exception ended each rank: the type's name and what(). Each rank writes only
/// its own slot, so ranks on several OS threads need no lock.
class RankErrors {
 public:
  explicit RankErrors(int world)
      : kinds_(static_cast<std::size_t>(world)), messages_(static_cast<std::size_t>(world)) {}

  /// Runs `fn`, notes the exception that escapes it, and rethrows it.
  template <typename Fn>
  void run(int rank, Fn&& fn) {
    try {
      fn();
    } catch (const DeadlockError& e) {
      note(rank, "DeadlockError", e);
      throw;
    } catch (const PeerAbortedError& e) {
      note(rank, "PeerAbortedError", e);
      throw;
    } catch (const MismatchError& e) {
      note(rank, "MismatchError", e);
      throw;
    } catch (const TimeoutError& e) {
      note(rank, "TimeoutError", e);
      throw;
    } catch (const UsageError& e) {
      note(rank, "UsageError", e);
      throw;
    } catch (const std::exception& e) {
      note(rank, "std::exception", e);
      throw;
    }
  }

  const std::string& kind(int rank) const { return kinds_[static_cast<std::size_t>(rank)]; }
  const std::string& message(int rank) const { return messages_[static_cast<std::size_t>(rank)]; }

 private:
  void note(int rank, const char* kind, const std::exception& e) {
    kinds_[static_cast<std::size_t>(rank)] = kind;
    messages_[static_cast<std::size_t>(rank)] = e.what();
  }

  std::vector<std::string> kinds_;
  std::vector<std::string> messages_;
};

}  // namespace ranklab::testing
