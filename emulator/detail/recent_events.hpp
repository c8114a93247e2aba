// The last few events of one rank, kept even without a trace sink: deadlock and failure
// reports show them.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::detail {

class RecentEvents {
 public:
  static constexpr std::size_t kCapacity = 8;

  /// The slot of the next event, overwriting the oldest: the caller assigns every field it
  /// uses in place. (Building a TraceEvent and moving it in zeroes and copies ~250 bytes,
  /// a sixth of a small collective; see Fabric::record.)
  TraceEvent& next() { return events_[next_++ % kCapacity]; }

  /// Oldest first.
  std::vector<TraceEvent> snapshot() const {
    std::vector<TraceEvent> out;
    const std::size_t n = next_ < kCapacity ? next_ : kCapacity;
    for (std::size_t i = next_ - n; i < next_; ++i) out.push_back(events_[i % kCapacity]);
    return out;
  }

 private:
  std::array<TraceEvent, kCapacity> events_{};
  std::size_t next_ = 0;
};

}  // namespace ranklab::detail
