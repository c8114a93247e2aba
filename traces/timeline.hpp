// Where each operation sits on a time axis, for the exporters (Perfetto JSON, HTML).
//
// Today traces carry no time, only Lamport clocks, so the axis is logical: an operation
// whose `lamport` is L occupies [L, L+1) ticks, drawn as microseconds. A message's receive
// always has a larger clock than its send, so arrows point forward; gaps on a rank are
// operations of other ranks it had to wait for. When events carry virtual time (issue 5
// §5, the cost model: a minor format version adds it), Timeline's constructor is the one
// place that picks TimeBase::virtual_time and places each event at its recorded interval;
// both exporters follow without change.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "traces/event.hpp"
#include "traces/messages.hpp"

namespace ranklab {

/// What the time axis measures.
enum class TimeBase {
  lamport,  ///< logical: one Lamport tick per operation, drawn as kLamportTickNs
};

std::string_view to_string(TimeBase base);

/// How the axis reads, for a viewer's legend: "1 Lamport tick = 1 us".
std::string_view axis_unit(TimeBase base);

/// Length of one Lamport tick on a drawn axis: 1 µs, so Perfetto shows ticks as whole µs.
inline constexpr double kLamportTickNs = 1000.0;

/// One operation's interval on the axis, in nanoseconds. `duration_ns` is never negative.
struct Placement {
  double start_ns = 0;
  double duration_ns = 0;
};

/// Every event of a trace placed on one axis. Holds no reference to the trace.
class Timeline {
 public:
  explicit Timeline(const Trace& trace);

  TimeBase base() const { return base_; }
  const Placement& at(EventRef ref) const {
    return placements_[static_cast<std::size_t>(ref.rank)][ref.index];
  }
  /// The rank's event indices ordered by start time (ties keep rank_seq order).
  const std::vector<std::size_t>& order(int rank) const {
    return order_[static_cast<std::size_t>(rank)];
  }
  std::size_t rank_count() const { return placements_.size(); }
  /// The end of the last interval (0 for an empty trace).
  double end_ns() const { return end_ns_; }

 private:
  TimeBase base_ = TimeBase::lamport;
  std::vector<std::vector<Placement>> placements_;  ///< [rank][index], like Trace::ranks
  std::vector<std::vector<std::size_t>> order_;
  double end_ns_ = 0;
};

}  // namespace ranklab
