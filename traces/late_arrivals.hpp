// Who entered a collective late, by a timed trace's clocks: for every collective that each
// member of its group entered (posted), the member that posted last and how long after the
// latest of the others. Used on Flight Recorder imports, whose times are the ranks' host
// clocks (time_created_ns): "rank 3 entered all_reduce #17 of world 4.2 s after the others".
//
// Clocks: a trace with one clock (ranklab's virtual time, or dumps ranklab wrote) compares
// directly. Dumps of a real job carry each host's own clock, which may be off by any amount:
// a lateness is claimed only where it exceeds what the clocks could explain, bounded by the
// collectives every member completed (a collective ends on all its members at once, so the
// spread of their completion stamps is clock offset plus the watchdog's polling); without
// such a collective nothing is claimed, and the check says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// Lateness below this is not reported: enqueue times of one collective routinely differ by
/// the host-side work each rank does before it, milliseconds to a fraction of a second.
inline constexpr std::int64_t kLateArrivalFloorNs = 1'000'000'000;
inline constexpr std::size_t kMaxLateArrivals = 5;

struct LateArrival {
  int rank = 0;
  std::uint32_t group = 0;
  std::int64_t coll_seq = 0;
  OpKind op = OpKind::all_reduce;
  std::int64_t late_by_ns = 0;
};

struct ArrivalCheck {
  bool timed = false;       ///< every operation has a post time
  bool one_clock = false;   ///< all ranks' times come from one clock
  std::size_t compared = 0;  ///< collectives every member entered
  std::size_t completed_everywhere = 0;  ///< of which every member completed
  /// The largest spread of one collective's completion times over its members (-1: no
  /// collective completed on every member): what different clocks could account for.
  std::int64_t clock_spread_ns = -1;
  std::int64_t threshold_ns = 0;  ///< lateness reported above this
  std::vector<LateArrival> late;  ///< the largest first, at most kMaxLateArrivals
};

/// Checks the trace; `one_clock` says whether its ranks share one clock.
ArrivalCheck check_arrivals(const Trace& trace, bool one_clock);

/// The check in words, one line each, indented by two spaces: the late arrivals, or why
/// none is claimed. Empty for an untimed trace.
std::vector<std::string> describe_arrivals(const ArrivalCheck& check, const TraceHeader& header);

/// A duration for a report: "4.2 s", "35 ms", "12 us", "800 ns".
std::string format_duration_ns(std::int64_t ns);

}  // namespace ranklab
