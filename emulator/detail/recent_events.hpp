// The last few events of one rank, kept even without a trace sink: deadlock and failure
// reports show them.
//
// The ring grows to its capacity as events arrive instead of starting full: every rank has
// one, and eight TraceEvents are 1.5 KiB, which made each rank's fabric slot 1.7 KiB and a
// 65,536-rank fabric 113 MB, all allocated and page-faulted in by one thread before any rank
// ran (bench/RESULTS.md, "--threads 2 at scale"). A rank that posts two operations now pays
// for two events.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::detail {

class RecentEvents {
 public:
  static constexpr std::size_t kCapacity = 8;

  void push(TraceEvent&& event) {
    if (events_.size() < kCapacity) {
      events_.push_back(std::move(event));  // not full yet: next_ == events_.size()
    } else {
      events_[next_ % kCapacity] = std::move(event);
    }
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
  std::vector<TraceEvent> events_;  // at most kCapacity; event i at i % kCapacity
  std::size_t next_ = 0;
};

}  // namespace ranklab::detail
