// Where each operation sits on a time axis, for the exporters (Perfetto JSON, HTML).
//
// When every event carries virtual time (format 1.1 `vt_post_ns`, written by a cost model:
// traces/virtual_time.hpp, or by an importer from the recording's own clocks: Flight
// Recorder's timestamps), the axis is that time: an operation occupies [post, end], from
// when its rank posted it to when it completed (a pending one, to the end of the trace).
// Otherwise the axis is logical: an operation whose `lamport` is L occupies [L, L+1) ticks,
// drawn as microseconds. A message's receive always has a larger clock than its send, so
// arrows point forward; gaps on a rank are operations of other ranks it had to wait for.
// Both exporters take their axis from here.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "traces/event.hpp"
#include "traces/messages.hpp"

namespace ranklab {

/// What the time axis measures.
enum class TimeBase {
  lamport,       ///< logical: one Lamport tick per operation, drawn as kLamportTickNs
  virtual_time,  ///< a cost model's prediction, in ns (vt_post_ns, vt_end_ns)
};

std::string_view to_string(TimeBase base);

/// How the axis reads, for a viewer's legend: "1 Lamport tick = 1 us".
std::string_view axis_unit(TimeBase base);

/// Whether every event has a virtual post time (a cost model annotated the whole trace, or an
/// importer gave it the recording's times), and there is at least one.
bool has_virtual_time(const Trace& trace);

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

/// Which events to draw when a viewer is given at most `limit` of them (0: no limit): the
/// earliest on the axis (ties by rank, then index), `[rank][index]` like Trace::ranks. Both
/// exporters cap big traces with it (HTML's --max-events, Perfetto's --perfetto-max-events).
std::vector<std::vector<bool>> earliest_events(const Trace& trace, const Timeline& timeline,
                                               std::size_t limit);

}  // namespace ranklab
