// Stuck or slow: on a timed trace (the cost model's virtual time, or times a trace records),
// who waited for whom and for how long, what each rank's idle time was for, the critical
// path across ranks, and the slowest rank.
//
// A rank waits on an operation from when it posts it until its last partner posts (the
// other side of a message, the last member of a collective): that partner is whom it
// waited for. Each idle stretch of a rank (step time outside its compute and transfers) is
// put down to the waits that cover it, latest first, and named by cause:
// - pipeline bubble: waiting on a message between pipeline stages (a `pp` group: the
//   schedule makes it), and a stage's idle tail after its last pass (the drain);
// - waiting for straggler rank R: any other wait (a data-parallel or tensor-parallel
//   collective, a message outside a pipeline) on rank R, who posted last;
// - finished early: after the end of a rank outside a pipeline, until the step's end;
// - stalled: after the operation a rank waits on forever (a hang);
// - untraced: idle time no wait covers (a recorded trace's time between operations:
//   the rank's own work, which the trace does not show).
// The critical path runs back from the rank that ends last: along a rank until its latest
// wait, then to the rank it waited for at the moment that rank posted, and so on to time 0.
// The slowest rank is the one the others waited for longest in all.
// Deterministic: ties go to the lower rank, then the earlier operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "traces/event.hpp"
#include "traces/messages.hpp"
#include "traces/operation_time.hpp"

namespace ranklab {

enum class IdleCause { pipeline_bubble, straggler, finished_early, stalled, untraced };

/// "all_reduce #2 of world (op #2)", "recv from rank 1 in pp[0,2] (op #3)", "recv from any
/// rank in world (op #0)": an operation as the analysis names it.
std::string describe_operation(const TraceEvent& event, const TraceHeader& header);

/// "pipeline bubble", "waiting for straggler rank 3", ...
std::string describe_idle_cause(IdleCause cause, int rank);

/// Idle time of every rank put down to one cause (and, for a straggler, its rank).
struct IdleShare {
  IdleCause cause = IdleCause::untraced;
  int rank = kNoRank;  ///< whom they waited for (straggler only)
  double seconds = 0;
};

/// The idle time `waiter` spent waiting for `waited_for`.
struct WaitPair {
  int waiter = 0;
  int waited_for = 0;
  double seconds = 0;
  std::size_t waits = 0;                   ///< operations it waited on
  double longest = 0;                      ///< the longest of them
  std::uint64_t longest_rank_seq = 0;      ///< its op #
  std::string longest_op;                  ///< "all_reduce #2 of dp[0,4] (op #17)"
  IdleCause cause = IdleCause::straggler;  ///< the longest one's
};

/// A stretch of the critical path: rank `rank` from `from` to `to` (seconds).
struct PathSegment {
  int rank = 0;
  double from = 0;
  double to = 0;
};

struct WaitAnalysis {
  double step_seconds = 0;
  std::vector<double> idle;                ///< per rank
  double idle_seconds = 0;                 ///< all ranks'
  std::vector<IdleShare> causes;           ///< the longest first
  std::vector<WaitPair> pairs;             ///< the longest first
  std::vector<PathSegment> critical_path;  ///< in time order
  int slowest_rank = kNoRank;              ///< kNoRank: no rank waited for another
  double slowest_waited = 0;               ///< the others' idle time waiting for it

  /// Idle share of all ranks' time (ranks x step); 0 for an empty step.
  double idle_share() const;
  /// The part of that share that is pipeline bubble.
  double pipeline_bubble_share() const;
};

/// Analyses `times` (like Trace::ranks) of `trace`; `rank_end[r]` is when rank r finished or
/// stalled, `finished[r]` whether it finished.
/// `partners` (like Trace::ranks: the other side of each message, rank -1 for none) gives
/// the messages as they matched, when not as the trace links them (traces/messages.hpp).
WaitAnalysis analyze_waits(const Trace& trace, const std::vector<std::vector<OperationTime>>& times,
                           const std::vector<double>& rank_end, const std::vector<bool>& finished,
                           const std::vector<std::vector<EventRef>>* partners = nullptr);

/// The times a trace records (vt_post_ns, vt_end_ns, compute events' vt_start_ns and
/// vt_end_ns), as analyze_waits reads them; none if some completed operation has no time.
struct RecordedTimes {
  std::vector<std::vector<OperationTime>> operations;
  std::vector<double> rank_end;
  std::vector<bool> finished;
};
std::optional<RecordedTimes> recorded_times(const Trace& trace);

/// The analysis of a timed trace's recorded times, or none for an untimed trace.
std::optional<WaitAnalysis> analyze_recorded_waits(const Trace& trace);

/// A timed trace's own times as a report section: "timing (the trace's own times): step
/// 4.2 s, idle 74.9% of 4 ranks' time", then format_wait_analysis; empty for an untimed
/// trace. A Flight Recorder import of several hosts' clocks says so.
std::string format_recorded_timing(const Trace& trace);
/// The same as JSON (`timing` of stats and replay), or null for an untimed trace.
nlohmann::json recorded_timing_to_json(const Trace& trace);

/// The analysis as report lines (no trailing blank line): idle by cause, who waited for
/// whom (up to `max_pairs`), the critical path, the slowest rank.
std::string format_wait_analysis(const WaitAnalysis& analysis, std::size_t max_pairs = 8);
/// The same as JSON fields (docs/json.md, "virtual_time").
nlohmann::json wait_analysis_to_json(const WaitAnalysis& analysis);

}  // namespace ranklab
