// NCCL RAS snapshots as evidence: what `ncclras` (NCCL's RAS client, NCCL 2.24 and later)
// prints about a running or hung job, read into who answered, who is missing and how many
// collectives of each kind every rank of every communicator has launched, so `ranklab stats
// --format nccl-ras` can say which ranks are behind and where they stopped
// (traces/nccl_ras_verdict.hpp). A snapshot holds counts, not a sequence of operations: it is
// evidence to report, not a trace to replay.
//
// Input: the text report (`ncclras`, or `echo status | nc localhost 28028`) or the JSON one
// (`ncclras -f json`, NCCL 2.28.7 and later), told apart by the first character ('{' is
// JSON). The strings are NCCL 2.30.7's (src/ras/client_support.cc, tag v2.30.7-1):
// - text: the header "NCCL version ...", the "Communicators..." table (one row per group of
//   alike communicators: "Group Comms Nodes Ranks Ranks Ranks Status Errors"), then under
//   "Errors" the job's INCOMPLETE and DEAD processes and each communicator's INCOMPLETE
//   (missing ranks) and ERROR sections, and under "Warnings" TIMEOUT and each communicator's
//   MISMATCH section ("Communicator ranks have different AllReduce operation counts", "N
//   ranks have launched up to operation K", "Rank R has launched up to operation K -- GPU
//   ..."). RAS names the ranks of a group only when it is an outlier (at most 25% of the
//   communicator and 10 ranks, unless verbose): the others are a count, and where the
//   communicator's size and the other groups name every other rank, they are those.
//   Communicators without errors appear only as table rows: in step, counts not shown.
//   Lines that belong to no section (the job summary, blank lines) are skipped.
// - JSON: every communicator with every answering rank's five counts ("Broadcast",
//   "Reduce", "AllGather", "ReduceScatter", "AllReduce", as ncclFuncToString names them) and
//   status, and its missing ranks (unresponsive, considered_dead).
// A count is how many collectives of that kind the rank has launched on the communicator
// (comm->seqNumber): a rank at 17 while the others are at 18 has not launched the 18th.
// Malformed input: TraceError "FILE:LINE: reason".
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ranklab {

/// NCCL's collectives as RAS counts them, in its order (ncclFuncStr): 5 kinds.
inline constexpr std::size_t kRasCollectives = 5;
/// NCCL's names ("AllReduce"), as RAS prints them.
std::string_view ras_collective_nccl_name(std::size_t kind);
/// ranklab's names ("all_reduce").
std::string_view ras_collective_name(std::size_t kind);

/// Ranks RAS gave one value to: how many, and which of them it named (all of them in JSON; in
/// text only an outlier group's, or those ranklab could tell as the rest of the communicator).
struct RasRankSet {
  int count = 0;
  std::vector<int> ranks;  ///< ascending; fewer than `count` when RAS did not name them all
  bool operator==(const RasRankSet&) const = default;
};

/// The ranks of one communicator that launched `launched` collectives of one kind.
struct RasCountGroup {
  std::uint64_t launched = 0;
  RasRankSet ranks;
  bool operator==(const RasCountGroup&) const = default;
};

/// One kind of collective whose counts differ between a communicator's ranks.
struct RasCountSplit {
  std::size_t kind = 0;                ///< index into the five kinds
  std::vector<RasCountGroup> groups;   ///< by count, highest first
  bool operator==(const RasCountSplit&) const = default;
};

/// A rank the snapshot has no data from.
struct RasMissingRank {
  int rank = 0;
  std::string host;        ///< "" when RAS did not say
  int pid = -1;            ///< -1 when RAS did not say
  int cuda_dev = -1;
  bool unresponsive = true;  ///< false: its process answered but does not hold the communicator
  bool dead = false;         ///< RAS considers its process dead (60 s unreachable)
  bool operator==(const RasMissingRank&) const = default;
};

/// The process that drives a rank, where RAS says it (JSON: every answering rank; text: the
/// ranks it names on a count line).
struct RasRankProcess {
  int rank = 0;
  std::string host;
  int pid = -1;
  int cuda_dev = -1;
  bool operator==(const RasRankProcess&) const = default;
};

/// Something else RAS says about some ranks: a status ("FINALIZE") or an error.
struct RasRankNote {
  std::string what;  ///< "status FINALIZE", "asynchronous error: Remote process error"
  RasRankSet ranks;
  bool operator==(const RasRankNote&) const = default;
};

struct RasCommunicator {
  std::string hash;   ///< NCCL's commHash, 16 hex digits, as the text prints it
  std::string label;  ///< the text form's "#0-0" (group-index); "" in JSON
  int size = 0;       ///< ranks in the communicator; 0 when the snapshot does not say
  int line = 0;       ///< the text form's line that first names it; 0 in JSON
  /// Every answering rank's counts, where they all agree and the snapshot shows them (JSON).
  std::optional<std::array<std::uint64_t, kRasCollectives>> counts;
  std::vector<RasCountSplit> splits;  ///< the kinds whose counts differ
  int missing_count = 0;              ///< ranks without data, named or not
  std::vector<RasMissingRank> missing;  ///< those RAS named, by rank
  std::vector<RasRankNote> notes;
  std::vector<RasRankProcess> processes;  ///< by rank, those known
  bool operator==(const RasCommunicator&) const = default;
};

/// A process RAS could not reach (unreachable now, or dead).
struct RasProcess {
  int pid = 0;
  std::string host;
  std::string gpus;  ///< "5", "0,1" as RAS prints them
  bool dead = false;
  bool operator==(const RasProcess&) const = default;
};

struct RasSnapshot {
  std::string file;          ///< as errors and reports name it
  std::string form;          ///< "text" or "json"
  std::string nccl_version;  ///< "" when the snapshot does not say
  std::string timestamp;     ///< JSON only
  /// Communicators the text table counts as OK without naming them (in step).
  int unnamed_in_step = 0;
  std::vector<RasCommunicator> communicators;  ///< in the snapshot's order
  std::vector<RasProcess> processes_missing;   ///< the job's INCOMPLETE and DEAD processes
  int timeouts = 0;
  int skipped_lines = 0;  ///< text lines outside any section RAS fills (job summary, blanks)
  bool operator==(const RasSnapshot&) const = default;
};

/// A snapshot's text: JSON if its first non-blank character is '{', else the text form.
/// Throws TraceError "NAME:LINE: reason".
RasSnapshot parse_nccl_ras(std::string_view name, std::string_view text);

/// Each of `paths` read as one snapshot (files only: one query, one file).
std::vector<RasSnapshot> read_nccl_ras(const std::vector<std::filesystem::path>& paths);

namespace detail::ras {
RasSnapshot parse_text(std::string_view name, std::string_view text);
RasSnapshot parse_json(std::string_view name, std::string_view text);
}  // namespace detail::ras

}  // namespace ranklab
