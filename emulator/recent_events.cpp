// Turning a rank's compact recent events back into TraceEvents, when a report or the trace
// sink asks (emulator/detail/recent_events.hpp).
#include "emulator/detail/recent_events.hpp"

#include <algorithm>

namespace ranklab::detail {

namespace {

int global_or_none(const Group& g, int group_rank) {
  return group_rank == kNoRank ? kNoRank : g.global_rank(group_rank);
}

}  // namespace

void RecentEvent::expand(TraceEvent& e, int rank, const SiteRef& recorded_site) const {
  const Group& g = *group;
  e.rank = rank;
  e.rank_seq = rank_seq;
  e.op = op;
  e.status = status;
  e.group = g.id();
  e.lamport = lamport;
  e.dtype = dtype;
  e.count = count;
  e.bytes = count * size_of(dtype);
  e.blocked = blocked;
  e.has_hash = false;
  e.hash = 0;
  e.site = recorded_site;
  if (is_point_to_point(op)) {
    e.peer = global_or_none(g, peer);
    e.tag = tag;
    e.any_source = any_source;
    e.msg = MessageId{msg_sender, seq};
    e.coll_seq = kNoCollective;
    e.root = kNoRank;
    e.has_reduce_op = false;
    e.reduce_op = ReduceOp::sum;
  } else {
    e.peer = kNoRank;
    e.tag = 0;
    e.any_source = false;
    e.msg = MessageId{};
    e.coll_seq = static_cast<std::int64_t>(seq);
    e.root = global_or_none(g, peer);
    e.has_reduce_op = has_reduce_op;
    e.reduce_op = reduce_op;
  }
}

std::vector<RecentEvent> RecentEvents::snapshot() const {
  std::vector<RecentEvent> out;
  if (full_) {  // the oldest is the next to be overwritten
    out.assign(cursor_, ring_ + kCapacity);
    out.insert(out.end(), ring_, cursor_);
  } else {
    out.assign(ring_, cursor_);
  }
  return out;
}

void RecentEvents::turn() {
  if (ring_ == inline_) {
    auto* heap = new RecentEvent[kCapacity];
    std::copy(inline_, inline_ + kInline, heap);
    ring_ = heap;
    cursor_ = heap + kInline;
    end_ = heap + kCapacity;
  } else {
    cursor_ = ring_;
    full_ = true;
  }
}

}  // namespace ranklab::detail
