// Fingerprints of the communicator's point-to-point collectives, and the collective-order check.
//
// Every collective the communicator runs, whatever its algorithm, posts a fingerprint
// (op, reduce op, dtype, count, root, algorithm) into the group's next call slot: a native
// call as it joins (fabric_collectives.cpp), a point-to-point one (ring, tree, ...) here,
// before its first message. Posting compares the fingerprint with the first member's; a
// member that disagrees, or posts to a call found mismatched, waits at its post until the
// verdict (fabric_collectives.cpp: judged once every member has posted, or the run can go
// no further), so a point-to-point algorithm never exchanges messages of the wrong sizes;
// members that disagree on the algorithm are caught too.
//
// Two ranks that call collectives on two groups in opposite orders cannot be caught when
// they post: each blocks in its first call and never posts its second, and non-blocking
// collectives in opposite orders are legal (MPI-3) when the program waits for them later.
// So the check runs when the run would otherwise be declared deadlocked: a wait-for cycle
// whose ranks are all inside collectives of more than one group is an ordering mismatch,
// reported as one (exit 4) rather than as a plain deadlock (diagnosis/collective_order.hpp).
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/rank.hpp"

namespace ranklab {

std::uint64_t Fabric::begin_collective(int rank, const Group& group,
                                       const CollectiveFingerprint& fingerprint) {
  const int me = group.group_rank(rank);
  RANKLAB_CHECK(me >= 0, "rank {}: {} on group {}, which it is not a member of", rank,
                to_string(fingerprint.signature.op), group.name());
  Lock lock(mutex_);
  throw_if_aborted(rank);
  const auto r = static_cast<std::size_t>(rank);
  const detail::PostedCall call{fingerprint.signature,
                                fingerprints_.algorithm_id(fingerprint.algorithm),
                                fingerprint.per_peer_counts, ranks_[r]->next_seq,
                                ranks_[r]->site};
  const std::uint64_t seq = post_call(lock, rank, me, group, call);
  auto& inside = fingerprints_.inside;
  if (inside.size() < ranks_.size()) inside.resize(ranks_.size());
  inside[r] = detail::InsideCollective{&group, seq, fingerprint};
  return seq;
}

void Fabric::end_collective(int rank) noexcept {
  try {
    Lock lock(mutex_);
    auto& inside = fingerprints_.inside;
    if (static_cast<std::size_t>(rank) < inside.size())
      inside[static_cast<std::size_t>(rank)].reset();
  } catch (...) {  // only a fiber-mutex misuse can throw; nothing to undo then
  }
}

// RankContext's entry points for fingerprints, kept beside the fabric's.
std::uint64_t RankContext::begin_collective(const Group& group,
                                            const CollectiveFingerprint& fingerprint) {
  return fabric_.begin_collective(rank_, group, fingerprint);
}

void RankContext::end_collective() noexcept { fabric_.end_collective(rank_); }

}  // namespace ranklab
