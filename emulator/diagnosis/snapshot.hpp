// What the post-mortem of a failed run reads: a copy of the fabric's state, taken by the
// fabric (Fabric::snapshot, under its lock) once the run has ended badly. The post-mortem
// (emulator/diagnosis/) reads nothing else, so each of its parts can be tested on a snapshot
// built by hand, without a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "comm/call_site.hpp"
#include "comm/collective_args.hpp"
#include "comm/group.hpp"
#include "comm/matching.hpp"
#include "emulator/detail/fault_injector.hpp"
#include "emulator/detail/fingerprint_book.hpp"
#include "emulator/detail/rank_state.hpp"
#include "traces/event.hpp"

namespace ranklab::diagnosis {

using detail::RankState;

/// An operation the post-mortem names: one a rank waits in, or an unmatched send.
struct PendingOp {
  OpKind kind = OpKind::send;
  int rank = 0;  ///< owner, global rank
  const Group* group = nullptr;
  /// Point-to-point, in group ranks as posted: a send's destination, a receive's source
  /// (kAnySource: any); the tag (kAnyTag: any); the buffer's type and element count.
  int peer = kNoRank;
  int tag = 0;
  DataType dtype = DataType::u8;
  std::size_t count = 0;
  CollectiveSignature signature;  ///< a collective's call
  std::int64_t coll_seq = kNoCollective;
  std::uint64_t rank_seq = 0;
  SourceSite site;    ///< where the rank program called it
  bool done = false;  ///< a send that completed (it was buffered) though no receive took it
  /// A collective: its call in FabricSnapshot::calls (shared by the members blocked in it).
  int call = -1;
};

/// A collective call of a group, as far as its members have posted it.
struct CallState {
  std::vector<int> absent;  ///< group ranks that have not posted the call, in order
};

/// One rank.
struct RankView {
  RankState state = RankState::running;
  int waiting_on = -1;  ///< the operation it waits in (index in FabricSnapshot::ops), or -1
  /// The collective it runs as point-to-point messages (begin_collective), if any.
  std::optional<detail::InsideCollective> inside;
};

struct FabricSnapshot {
  std::vector<RankView> ranks;  ///< by global rank
  std::vector<PendingOp> ops;
  std::vector<CallState> calls;
  /// By destination rank: the unmatched sends addressed to it (indices in ops), in posting
  /// order. Kept for blocked receivers only, the ones a near miss can explain.
  std::vector<std::vector<int>> unexpected;
  std::vector<detail::DroppedMessage> dropped;  ///< messages drop faults removed

  /// The operation `rank` waits in, or null.
  const PendingOp* waiting_on(int rank) const {
    const int i = ranks[static_cast<std::size_t>(rank)].waiting_on;
    return i < 0 ? nullptr : &ops[static_cast<std::size_t>(i)];
  }
  /// The operation a blocked `rank` waits in; null if it is not blocked.
  const PendingOp* blocked_in(int rank) const {
    return ranks[static_cast<std::size_t>(rank)].state == RankState::blocked ? waiting_on(rank)
                                                                             : nullptr;
  }
  RankState state(int rank) const { return ranks[static_cast<std::size_t>(rank)].state; }
  int world_size() const { return static_cast<int>(ranks.size()); }
};

}  // namespace ranklab::diagnosis
