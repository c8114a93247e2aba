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

  /// The slot of the next event, overwriting the oldest once the ring is full: the caller
  /// assigns every field it uses in place. (Building a TraceEvent and moving it in zeroes and
  /// copies ~250 bytes, a sixth of a small collective; see Fabric::record.)
  TraceEvent& next() {
    if (events_.size() < kCapacity) {  // not full yet: next_ == events_.size()
      ++next_;
      return events_.emplace_back();
    }
    return events_[next_++ % kCapacity];
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
