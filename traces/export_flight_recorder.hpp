// `ranklab export --flight-recorder DIR`: a trace as PyTorch Flight Recorder dumps, one per
// rank, as ProcessGroupNCCL writes them on a timeout (TORCH_FR_DUMP_TEMP_FILE, by default
// /tmp/nccl_trace_rank_N), so PyTorch's own analyzer (`python -m
// torch.distributed.flight_recorder.fr_trace DIR`) reads a ranklab run, replay or import.
//
// Format: version "2.10" (torch/csrc/distributed/c10d/FlightRecorder.hpp and
// FlightRecorderDetail.hpp, whose getCollectiveTrace/dump and dump_json this follows):
//   {version, pg_config, comm_lib_version, pg_status, entries}
//   pg_config   {NAME: {name, desc, ranks: "[0, 1]"}}: the groups holding the rank. Trace group
//               i is process group "i"; the world is "0" with desc "default_pg" (what the
//               analyzer's transform_ft looks for), another group's desc is its trace name.
//   pg_status   {PG_ID: {last_enqueued_collective, last_started_collective,
//               last_completed_collective}} (-1: none)
//   comm_lib_version  "ranklab" (what marks a dump as ranklab's: see below)
//   entries     one per operation, in the rank's order, with torch's keys: frames (pickle
//               only: the call site as one frame), record_id, pg_id, process_group (NAME,
//               DESC), thread_name, thread_id, collective_seq_id, p2p_seq_id, op_id,
//               profiling_name, time_created_ns, input_sizes, input_dtypes, output_sizes,
//               output_dtypes, state, time_discovered_started_ns,
//               time_discovered_completed_ns, retired, timeout_ms, is_p2p.
// Operations: profiling names as ProcessGroupNCCL records them ("nccl:all_reduce",
// "nccl:send 0->1" in group ranks, a barrier as "nccl:all_reduce_barrier" of one Float);
// shapes are one-dimensional, sized as torch's analyzer checks them (all_gather's output is
// the group size times its input, reduce_scatter's input the group size times its output).
// Sequence ids count per process group from 1 as torch does: a collective bumps
// collective_seq_id, a send or receive p2p_seq_id. Non-blocking sends and receives of one
// group posted together (each posted while the one before it was in flight) are written as a
// coalesced batch (one p2p_seq_id, closed by "nccl:coalesced"), as batch_isend_irecv records
// them; other operations are written one by one, as blocking calls.
// State: a completed operation is "completed"; a pending one "started" if it is the first
// pending one on its stream (a group's collectives, or one peer's sends and receives), the
// later ones "scheduled" (NCCL runs a stream in order).
// Times (ns): the trace's virtual time where every event has it (time_created_ns = posted,
// started = posted, completed = completed); otherwise its logical clock, one Lamport tick
// a microsecond, as `export --perfetto` draws it (traces/timeline.hpp).
// Not in the format: tags, reduce ops, roots, payload hashes, call-site labels, the compute
// between operations; a receive from any source that never matched (it has no peer to name)
// is left out.
//
// Forms: the pickle (protocol 2, what a timeout writes and the analyzer reads), or the JSON
// that `_dump_nccl_trace_json()` returns (no frames, pg_status values as strings, absent
// times as 0), named nccl_trace_rank_N.json. The analyzer reads every file of a folder
// with the prefix, so the two forms never share one: a folder is refused if it holds any
// file named nccl_trace_rank_* other than a ranklab dump of the same form that this export
// replaces (a real job's dumps are never overwritten).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

enum class FrDumpForm { pickle, json };

inline constexpr std::string_view kFrDumpPrefix = "nccl_trace_rank_";
inline constexpr std::string_view kFrExportVersion = "2.10";

/// The ranks that get a dump: every rank of the world, but those a Flight Recorder import
/// had no dump of (header config `ranks_without_dump`), so the analyzer sees the same gap.
std::vector<int> flight_recorder_ranks(const Trace& trace);

/// Rank `rank`'s dump as the document torch builds, in the given form (its keys in torch's
/// order for the pickle, sorted as nlohmann writes them for the JSON).
nlohmann::ordered_json flight_recorder_dump(const Trace& trace, int rank, FrDumpForm form);

/// The file name of rank `rank`'s dump: nccl_trace_rank_N, or nccl_trace_rank_N.json.
std::string flight_recorder_file_name(int rank, FrDumpForm form);

/// The bytes of rank `rank`'s dump file.
std::string flight_recorder_file(const Trace& trace, int rank, FrDumpForm form);

struct FrExportSummary {
  std::size_t dumps = 0;
  std::size_t entries = 0;
};

/// Writes every dump into `folder` (created if absent). Throws TraceError naming the folder
/// and the file when the folder holds a file with the prefix that is not a ranklab dump of
/// this form and rank (checked before anything is written), or a file cannot be written.
FrExportSummary write_flight_recorder_dumps(const std::filesystem::path& folder,
                                            const Trace& trace, FrDumpForm form);

}  // namespace ranklab
