// NCCL debug logs as ranklab traces, so `ranklab replay --format nccl-log` re-issues what a
// hung (or healthy) NCCL job enqueued and reports what ranklab reports for its own runs: the
// first collective a rank never joined, a count, datatype, reduction or root that differs, a
// send/recv cycle, each at its log file and line.
//
// Input: what NCCL prints with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL, one file per
// process (NCCL_DEBUG_FILE=nccl.%h.%p) or one file of every process's lines interleaved (a
// launcher's combined output). The strings are NCCL 2.30.7's (traces/detail/nccl_log_line.hpp
// quotes them); lines that are neither an Init COMPLETE nor an operation are skipped.
//
// Mapping:
// - A rank is one process's device (HOST:PID and the communicator's cudaDev). Communicators
//   are told apart by commId (ncclCommInitRank and kin) or, for ncclCommSplit, by their
//   parent's identity, childCount (splitCount) and color. The communicator with the most
//   ranks (the first initialized among equals) is `world`, and its ranks are the trace's
//   ranks; a rank of it with no log has no operations (the rank that never joined). Another
//   communicator is a group named `commId:0x...`, or `PARENT/splitN:colorC`; a member of it
//   no log shows is the world's one rank without a log, where there is one such of each.
// - Operations in log order per rank. opCount counts launches per communicator, so the
//   operations one rank enqueued in a row on one communicator with the same opCount are one
//   NCCL group (ncclGroupStart/End): posted together, then waited for together; a send and
//   a receive in opposite order inside a group are legal NCCL. (NCCL advances opCount only
//   for launches that use its proxy, as network transports do; on a communicator where it
//   never moves, its consecutive operations read as one group, and a send/recv cycle among
//   them is not seen.) Each rank's sequence is compared by position: collectives by their
//   index on the communicator, messages in order per (sender, receiver) as NCCL matches them.
// - Peers and roots are communicator ranks; messages use tag 0. Datatypes and reductions
//   follow nccl.h (detail::nccl::element_type, reduce_op); a type ranklab has no name for
//   travels as bytes and the event's site label names NCCL's type.
// - NCCL prints an operation when it is enqueued, not when it ends. An operation is taken as
//   never completed (pending, where its rank was stuck) when a member of its collective
//   never enqueued it or enqueued a different one, when its message has no partner, or when
//   it comes after such an operation on the same communicator or with it in one group (NCCL
//   runs a communicator's work in order), and so transitively for its partners. The NCCL
//   groups a rank enqueued on a communicator after its first one that never completed never
//   ran: they are left out (counted in the config), as the enqueued calls behind a hang are.
//   Replay reports why the rest stopped.
// - Each operation's site is its log line: file, line, and NCCL's function (ncclAllReduce).
// The header's config: {"program": "nccl-log", "nccl_format": "2.30.7", "logs" (the files
// holding NCCL lines; a folder's other files, a README, are read and skipped),
// "processes", "communicators", "ranks_without_log", "skipped_lines",
// "left_out_after_pending"}.
// Malformed input: TraceError "FILE:LINE: reason".
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// One log's name (as errors give it) and text.
struct NcclLogFile {
  std::string name;
  std::string text;
};

/// Imports the logs. Throws TraceError "FILE:LINE: reason" for a malformed init or operation
/// line, or one that contradicts the others; "reason" alone for logs with no rank at all.
Trace import_nccl_logs(const std::vector<NcclLogFile>& logs);

/// Reads the logs at `inputs`: files, or folders (their regular files not starting with '.',
/// by name; subfolders are not read). Throws TraceError for a path that cannot be read.
Trace read_nccl_logs(const std::vector<std::filesystem::path>& inputs);

}  // namespace ranklab
