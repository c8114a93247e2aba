// A trace run against a cost model (traces/cost_model.hpp): when each operation would be
// posted and complete on that machine, each rank's busy and idle time, the predicted step
// time and the pipeline bubble. Deterministic: it depends on the trace's structure only
// (operations, their matches and wait points), never on how the emulator scheduled it.
//
// The rules, per rank in rank_seq order, with a clock starting at 0:
// - compute before an operation advances the clock by its cost (CostModel::compute_seconds);
// - before posting an operation the rank waits (the clock jumps to the completion) for every
//   earlier operation not in the operation's `in_flight`, as replay does; a pending
//   operation followed by later ones was dropped, not waited for;
// - a message starts when both sides are posted (rendezvous) and takes α + n/β; both sides
//   complete then. An eager send completes when posted, and its receive at
//   max(its post, send post + α + n/β);
// - a collective starts when its last member posts and completes on every member after the
//   formula's time;
// - at its end the rank waits for what is still open, and does its compute_after.
// Operations that never complete (pending ones; a send whose receive is missing) leave their
// rank stalled: the trace deadlocks in virtual time too, and `complete` is false.
//
// Busy time is the union of a rank's compute and of the transfers its operations take part
// in (from the start of each transfer to its end); idle is the rest of the step. The
// pipeline bubble is the idle share of all ranks' time: sum(idle) / (ranks x step time),
// (p-1)/(m+p-1) for GPipe and 1F1B and (p-1)/(v m+p-1) for interleaved 1F1B with v chunks
// when communication is free and every pass costs the same (tests check it). Communication
// time is busy time outside compute.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/cost_model.hpp"
#include "traces/event.hpp"
#include "traces/operation_time.hpp"
#include "traces/wait_analysis.hpp"

namespace ranklab {

struct VirtualTimeOptions {
  /// Sends of at most this many bytes complete when posted (the fabric's `eager<=BYTES`;
  /// `eager` is the largest value); none: every send is a rendezvous.
  std::optional<std::uint64_t> eager_limit;

  bool eager(std::uint64_t bytes) const { return eager_limit && bytes <= *eager_limit; }

  /// Receives from any source take the message that arrives first in virtual time (the
  /// earliest posted send to their rank that they accept), not the sender they took when
  /// recorded; so does every receive of a rank that has one (a named receive takes the
  /// earliest posted send from its source, MPI's non-overtaking order). Ranks then post
  /// in virtual-time order (ties: the lower rank). What `replay --what-if` predicts with:
  /// another timing may match differently, and strand a send or a receive (a hang).
  bool rematch_any_source = false;
};

/// One rank's step.
struct RankTime {
  bool finished =
      false;           ///< reached its end; false when stalled on an operation that never completes
  double end = 0;      ///< when it finished (or stalled)
  double compute = 0;  ///< seconds of compute
  double busy = 0;     ///< union of compute and transfers
  double comm = 0;     ///< busy - compute: time spent in transfers only
  double idle = 0;     ///< step time - busy
  /// Not finished: the index of the operation it waits for forever.
  std::size_t stalled_on = static_cast<std::size_t>(-1);
};

struct VirtualTimes {
  std::vector<std::vector<OperationTime>> operations;  ///< like Trace::ranks
  std::vector<RankTime> ranks;
  double step_seconds = 0;  ///< predicted step time: the last rank's end
  double bubble = 0;        ///< sum(idle) / (ranks x step time); 0 for an empty step
  bool complete = true;     ///< every rank finished
  bool has_compute = false; ///< the trace records any compute
  bool unpriced_flops = false;  ///< some compute is FLOPs only and the model has no FLOP rate
  WaitAnalysis waits;           ///< who waited for whom, idle by cause, the critical path
  /// With rematch_any_source: receives from any source that took another sender than
  /// recorded.
  std::size_t rematched_receives = 0;
};

/// Runs `trace` on `model`.
VirtualTimes simulate(const Trace& trace, const CostModel& model,
                      const VirtualTimeOptions& options = {});

/// The latest virtual time a trace holds (INT64_MAX ns, ~292 years); later ones saturate.
inline constexpr std::int64_t kMaxTraceNs = INT64_MAX;

/// Whether the step ends past what the trace's int64 nanoseconds hold (2^63 ns, ~292
/// years); annotate then saturates those times at kMaxTraceNs.
bool exceeds_trace_time(const VirtualTimes& times);

/// Writes the times into the events (vt_post_ns, vt_end_ns), so exports draw them; a time
/// past 2^63 ns is written as kMaxTraceNs, so a trace ranklab writes is one it reads.
void annotate(Trace& trace, const VirtualTimes& times);
/// The same for another trace of the same operations (a replay of `timed`): each event of
/// `trace` takes the times of the event of `timed` with its rank and rank_seq.
void annotate(Trace& trace, const Trace& timed, const VirtualTimes& times);

/// "virtual time (COST): step 1.23 ms, idle 12.5% of 8 ranks' time", a line per rank (up
/// to `max_ranks`), then who waited for whom (traces/wait_analysis.hpp).
std::string format_virtual_times(const VirtualTimes& times, const CostModel& model,
                                 std::size_t max_ranks = 16);
nlohmann::json virtual_times_to_json(const VirtualTimes& times, const CostModel& model);

}  // namespace ranklab
