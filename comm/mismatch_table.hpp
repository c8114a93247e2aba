// The verdict on a collective whose members disagree, and its side-by-side table, shared by
// the emulator's fabric (native calls and fingerprints, live or replayed) and the MPI
// backend's --check-collectives exchange (comm/, so that collectives/mpi needs nothing from
// emulator/).
//
// The verdict is a vote over every member that called: the calls that differ from the
// plurality's are blamed ("rank 0 is the odd one: 1 rank vs 3"); where no call has a
// plurality, each side is listed. It never depends on who arrived first: the emulator
// judges once every member has posted (or the run can go no further, and then those that
// never came are listed as missing participants), MPI once the exchange holds every call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/call_site.hpp"
#include "comm/fingerprint.hpp"
#include "comm/group.hpp"

namespace ranklab::detail {

/// One member's call, as the table prints it.
struct MemberCall {
  CollectiveFingerprint fingerprint;
  std::uint64_t rank_seq = 0;  ///< the member's operation number when it called
  SourceSite site;             ///< where the member called it
};

/// What judge_mismatch found.
struct MismatchVerdict {
  /// The header, a row per member (marking the calls that differ from the plurality's, and
  /// the members that never called), then the verdict line and, if any, the missing one.
  std::string table;
  /// One line: "rank 0 is the odd one: 1 rank vs 3", or "no call has a plurality: ...".
  std::string verdict;
  /// The result line: the table's first line, then the verdict in parentheses.
  std::string summary;
  /// The culprit's sentence: who called what, where the others called what, and the verdict.
  std::string sentence;
  /// Global ranks, ascending: the members whose calls differ from the plurality's, or,
  /// where no call has one, every member that called.
  std::vector<int> blamed;
  /// Global ranks, ascending, of the members that never called (their entry is empty).
  std::vector<int> missing;
};

/// Judges call `seq` of `group`, whose members' calls (by group rank; empty for a member
/// that never called) are not all alike. At least two members called.
MismatchVerdict judge_mismatch(const Group& group, std::uint64_t seq,
                               std::span<const std::optional<MemberCall>> members);

}  // namespace ranklab::detail
