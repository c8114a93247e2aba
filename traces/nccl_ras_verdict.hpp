// What NCCL RAS snapshots (traces/nccl_ras.hpp) say about a job, in ranklab's words: per
// communicator, the ranks that are behind and the count where they stopped ("ranks 4-7
// stopped at all_reduce count 17 while ranks 0-3 reached 18"), the ranks RAS has no data
// from, their status and errors; and one verdict line. Several snapshots of one job, in the
// order taken, also say whether the counts moved between the first and the last: a
// communicator whose ranks are behind and whose counts did not move is stuck; one snapshot
// cannot tell stuck from slow (NCCL's collectives can outrun RAS's query).
// `ranklab stats --format nccl-ras` prints it (docs/json.md for --json).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "traces/nccl_ras.hpp"

namespace ranklab {

/// One communicator as the last snapshot shows it.
struct RasCommunicatorVerdict {
  std::string hash;
  std::string label;
  int size = 0;
  std::string state;  ///< "in step", or "behind", "missing ranks", "errors" joined by ", "
  std::vector<std::string> lines;  ///< the findings, one sentence each
  /// With several snapshots: whether anything RAS showed of it changed since the first.
  std::optional<bool> moved;
  bool operator==(const RasCommunicatorVerdict&) const = default;
};

struct RasVerdict {
  std::string status;    ///< as a communicator's state, over all of them
  std::string headline;  ///< the verdict line, without "verdict: "
  std::vector<RasCommunicatorVerdict> communicators;
  std::vector<std::string> job_lines;  ///< unreachable and dead processes, timeouts
  int unnamed_in_step = 0;             ///< communicators the text table counts as OK
  std::vector<std::string> notes;      ///< how to read it
  bool operator==(const RasVerdict&) const = default;
};

/// Judges the snapshots (at least one; the last is the state reported, the first what it is
/// compared with).
RasVerdict judge_ras(const std::vector<RasSnapshot>& snapshots);

/// "ranks 0-3, 6", "rank 5", "26 ranks", "6 ranks, among them 2, 5".
std::string describe_ranks(const RasRankSet& ranks);

/// The report `ranklab stats --format nccl-ras` prints; `name` names the input.
std::string format_ras_verdict(const RasVerdict& verdict, const std::vector<RasSnapshot>& snapshots,
                               const std::string& name);

/// The same as JSON fields (docs/json.md, "stats" of nccl-ras).
nlohmann::ordered_json ras_verdict_to_json(const RasVerdict& verdict,
                                           const std::vector<RasSnapshot>& snapshots);

}  // namespace ranklab
