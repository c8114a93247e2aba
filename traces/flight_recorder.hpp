// PyTorch Flight Recorder dumps as ranklab traces, so `ranklab replay --format pytorch-fr`
// re-issues a hung (or healthy) job's recorded communication on the fabric and reports what
// ranklab reports for its own runs: the collective a rank never joined, a size or dtype or
// operation mismatch, a send/recv cycle, each with the Python call site of the operations.
//
// Input: one dump per rank (traces/fr_dump.hpp reads each: JSON or pickle, version 2.x).
//
// Mapping:
// - Process groups (pg_config: name, desc, ranks) become trace groups: the default group "0"
//   is `world`; another is `pgNAME` (`pgNAME:DESC` when torch has a description for it),
//   its ranks ascending, as torch numbers group ranks. Dumps that `ranklab export` wrote
//   (comm_lib_version "ranklab") name each group by its desc, the trace name it had.
// - Entries become operations, in record order, with the innermost frame outside torch's
//   files as their call site (format 1.2 `site`). Flight Recorder keeps no reduce op, root or
//   tag: reductions are taken as sums (the trace format needs an op), rooted collectives are
//   rooted at the group's rank 0, and messages use tag 0; mismatches of those cannot be seen,
//   and replay's report names them as unknown (traces/flight_recorder_notes.hpp).
// - A completed entry is a blocking call. An entry not completed at dump time is pending:
//   it was enqueued and never finished, and a rank's later entries on the same process group
//   never ran (NCCL runs a communicator's work in order), so they are left out; entries on
//   other groups go on with the pending one still open. Replay blocks on pending entries at
//   the rank's end, as the job did.
// - A coalesced group (entries with one seq id, closed by a `BACKEND:coalesced` entry) is
//   posted at once and waited for together, as one kernel runs them.
// - Ring buffers: a long job's dumps keep only each rank's last entries. Per process group,
//   collectives older than the first one every rank still has are left out, as are
//   completed sends and receives whose partner is no longer in the other rank's dump.
// - A rank of the world without a dump has no operations: replay shows it as the rank that
//   never joined.
// - Times: when every operation kept has its time_created_ns, the operations carry the dumps'
//   clocks as virtual time (vt_post_ns = created, vt_end_ns = time_discovered_completed_ns,
//   or the latest time the entry has; ns after the earliest entry kept), so exports draw the
//   job's own timeline. Each host's dumps have its own clock: across hosts, times compare
//   only as well as the hosts' clocks agree.
// The header's config says what was imported: {"program": "pytorch-fr", "fr_version",
// "dumps", "ranks_without_dump", "left_out": {"after_pending", "before_window",
// "unmatched_completed"}, "time": {"clock", "origin_ns"} or null, "threads": {"RANK":
// ["THREAD_NAME (THREAD_ID)"]} (format 2.10)}.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// One dump file's name (as errors give it) and bytes.
struct FrDumpFile {
  std::string name;
  std::string bytes;
};

/// Imports the dumps. Throws TraceError "FILE: reason" or "FILE: entry N: reason" for a
/// dump that cannot be read or contradicts itself or the others.
Trace import_flight_recorder(const std::vector<FrDumpFile>& dumps);

/// Reads the dumps at `inputs`: files, or folders holding them (the files whose name, less
/// its extension, ends in the rank: nccl_trace_rank_3, rank_3.json; other files and
/// subfolders are not read). Throws TraceError for a path that cannot be read, and as above.
Trace read_flight_recorder(const std::vector<std::filesystem::path>& inputs);

}  // namespace ranklab
