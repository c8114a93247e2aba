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

  void push(TraceEvent&& event) {
    events_[next_ % kCapacity] = std::move(event);
    ++next_;
  }

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
