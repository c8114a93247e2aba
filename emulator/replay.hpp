// `ranklab replay`: a recorded trace drives the fabric. Each rank re-issues its recorded
// operations, in order, with synthetic payloads of the recorded sizes, under any scheduling
// policy, thread count and send mode; then every replayed operation is compared with the
// recorded one.
//
// How each operation is re-issued:
// - send: to the recorded peer and tag. recv: from the recorded peer (the matched source:
//   a receive from any source is forced to the source it matched when recorded, unless
//   ReplayOptions::free_any_source) and tag; a pending receive that never matched keeps its
//   wildcards. Collectives: the recorded op,
//   count, dtype, root and reduce op. Payloads are zeros; receives land in a scratch buffer.
// - Wait points come from the trace (format 1.1, `in_flight`): before posting operation X
//   the rank waits for every earlier operation not in X's `in_flight`, in rank_seq order,
//   so isend/irecv overlap exactly as recorded. An operation the trace shows pending was
//   never waited for when later ones follow (its handle was dropped): replay drops it too.
//   At the end the rank waits for what is still open, and blocks on the operation the
//   trace marks `blocked`, as the recording did. A 1.0 trace has no wait points: every
//   operation is waited for before the next (blocking calls), pending ones included.
// - Each operation keeps its recorded rank_seq, so message ids, reports ("op #4") and the
//   replayed trace use the recorded numbers, even where a hand-edited trace has gaps.
//
// What is checked: each replayed operation against the recorded one (every field diff
// compares, except the hash: payloads are synthetic), which covers each rank's sequence
// and every send -> receive match (the receive's `msg`); operations the replay never
// issued (it stopped earlier, e.g. deadlocked); and, in the trace itself, that each
// message's recorded send and receive hashes agree. A deadlock, mismatch or failure of the
// replay is reported as `ranklab run` reports it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/options.hpp"
#include "comm/run_report.hpp"
#include "traces/event.hpp"

namespace ranklab {

struct ReplayOptions {
  /// Policy, threads, send mode, timeout, stack size. world_size is the trace's. A trace
  /// sink here receives the replayed trace (recorded numbering, no payload hashes).
  ClusterOptions cluster;
  /// The largest single buffer replay allocates: a hand-made trace may claim 2^48 elements.
  std::uint64_t max_buffer_bytes = std::uint64_t{1} << 30;
  /// The most the replay's buffers may take together: the payload all ranks share (the
  /// largest input) plus one receive buffer per rank (its largest output). A trace that asks
  /// more is refused before the run. 0: default_replay_memory_limit(). Eager copies of sends
  /// in flight come on top (the send mode decides them, not the trace's sizes alone).
  std::uint64_t max_memory_bytes = 0;
  /// Appended to that refusal's limit, to say how to raise it (" (--max-memory-mib sets it)").
  std::string memory_limit_hint;
  /// Receives recorded from any source (format 1.3 `any_source`, SimGrid TI's MPI_ANY_SOURCE)
  /// are re-issued from any source, so the schedule decides which sender each matches, within
  /// MPI's non-overtaking order, as it did in the program: the race a recording pinned shows
  /// as a divergence (`replay --wildcards free`, and `explore` on a trace). Off: each takes
  /// the sender it matched when recorded. An operation the program chose by the matched
  /// sender (a reply to it) is still re-issued as recorded.
  bool free_any_source = false;
};

/// Half of this machine's memory, or of the control group's limit where that is lower: what
/// a replay may take unless told otherwise, so that a 2 KB trace asking 16 GiB is refused
/// rather than swapping or killed.
std::uint64_t default_replay_memory_limit();

/// "17179869184 bytes (16.0 GiB)", "2097152 bytes (2.0 MiB)", "512 bytes": how a memory
/// limit and what asks more than it are printed (replay's refusal, the main job's).
std::string format_bytes(std::uint64_t bytes);

/// The first operation of one rank where the replay differs from the recording.
struct ReplayDivergence {
  int rank = 0;
  std::uint64_t rank_seq = 0;
  std::string recorded;                  ///< the recorded operation, as `ranklab diff` prints it
  std::string replayed;                  ///< the replayed one, or why it was never issued
  std::vector<std::string_view> fields;  ///< what differs; empty when never issued
};

/// Where a rank was when a replay that did not end ok stopped: the operation it was still
/// in, or (a rank that was in none) its last one, with the call site the recording gave it
/// (format 1.2 `site`; imported Flight Recorder dumps carry the Python frame).
struct ReplayStop {
  int rank = 0;
  std::uint64_t rank_seq = 0;
  std::string call;         ///< the recorded operation, as `ranklab diff` prints it
  CallSite site;            ///< empty when the trace has none
  bool in_progress = true;  ///< false: the rank's last operation, which completed
};

/// What a replay did and whether it reproduced the recording. [[nodiscard]], as RunReport.
struct [[nodiscard]] ReplayReport {
  RunReport run;  ///< how the replayed run ended (deadlock report and all)
  int world_size = 0;
  std::uint64_t recorded_operations = 0;
  std::uint64_t replayed_operations = 0;      ///< issued by the replay
  std::uint64_t diverging_operations = 0;     ///< replayed differently, or never issued
  std::vector<ReplayDivergence> divergences;  ///< the first per diverging rank, by rank
  std::uint64_t recorded_messages = 0;        ///< completed receives whose send is in the trace
  std::uint64_t reproduced_messages = 0;      ///< of those, matched to the same send in the replay
  std::uint64_t hashes_checked = 0;           ///< recorded messages with a hash on both sides
  std::uint64_t hash_mismatches = 0;          ///< of those, send and receive hashes that disagree
  std::string first_hash_mismatch;            ///< "rank 1 op #3 ..." for the report
  bool wait_points = false;                   ///< the trace had them (format >= 1.1)
  std::vector<ReplayStop> stops;              ///< by rank, when the run did not end ok
  /// Requests the program never completed before finalizing (the header's
  /// config.unfinished_requests, which importers write: "FILE:LINE: rank 1 op #3 (irecv
  /// from rank 0 tag 3) is still open when the rank finalizes ..."). MPI forbids them; the
  /// replay cannot see them (nothing waits for a request nobody waited for). A replay that
  /// otherwise ends ok ends unsafe for them (exit 6, culprit `request-leak`).
  std::vector<std::string> unfinished_requests;
  /// Messages whose two calls the recording shows disagree in a way the trace's element
  /// types cannot carry (the header's config.type_mismatches, which importers write: SimGrid
  /// TI's MPI_UNSIGNED against MPI_INT, a derived datatype against a basic one). The fabric
  /// matches them as it would any message; a replay that otherwise ends ok ends in a
  /// mismatch for them (exit 4, culprit `message-mismatch`), as MUST reports a type mismatch.
  std::vector<std::string> type_mismatches;
  /// What the recording could not say, which the replay therefore assumed (the header's
  /// config.notes, which importers write: SimGrid TI's derived datatypes, whose sizes are
  /// unknown). Printed as `note:` lines.
  std::vector<std::string> recording_notes;
  std::chrono::nanoseconds elapsed{0};        ///< wall time of the replayed run

  /// Every operation replayed as recorded and every recorded hash pair agrees.
  bool reproduced() const { return diverging_operations == 0 && hash_mismatches == 0; }
};

/// Replays `trace`. Throws TraceError if the trace cannot be replayed at all (a buffer over
/// options.max_buffer_bytes, buffers over options.max_memory_bytes, a send with a negative
/// tag), naming the operation and, for a trace read from a file, its FILE:LINE; everything
/// that happens while replaying is in the report.
ReplayReport replay_trace(const Trace& trace, const ReplayOptions& options);

/// The report as `ranklab replay` prints it; `name` is the trace's file name.
std::string format_replay(const ReplayReport& report, std::string_view name);

/// The report as JSON (`ranklab replay --json`).
nlohmann::ordered_json replay_to_json(const ReplayReport& report, std::string_view name);

/// The exit code: the replayed run's (3 deadlock, 4 mismatch, 5 a rank failed, 6 unsafe: a
/// potential deadlock or a request leak) when it did not end ok, else 0 if it reproduced
/// the recording and kExitNotReproduced if not.
int replay_exit_code(const ReplayReport& report);
inline constexpr int kExitNotReproduced = 2;

}  // namespace ranklab
