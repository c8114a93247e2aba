// The last few events of one rank, kept even without a trace sink: deadlock and failure
// reports show them.
//
// Every completed operation lands here, so recording is on the hot path of every call (a
// one-float all_reduce: eight of them). The ring therefore keeps compact entries of what
// the operation knew, 96 bytes each, and builds TraceEvents (248 bytes, ~30 fields, a
// shared site) only when a report asks (RecentEvent::expand). Filling a whole TraceEvent in
// place per operation was the largest single cost of a small collective (912 instructions
// of 7,112 per 8-rank all_reduce; bench/RESULTS.md, issue 19 §2).
//
// The ring's first kInline entries live in the ring itself, in the rank's fabric slot and
// so in the stack page the rank faults in anyway (detail/rank_home.hpp): a rank of a
// one-collective run (an all_reduce and a barrier: two events) allocates nothing. A rank
// with more events moves them to a heap ring of kCapacity entries, once. (A vector of
// TraceEvents grown per event took 512 bytes and two mallocs per rank of that run: 512
// MiB at a million ranks.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/group.hpp"
#include "emulator/detail/operation.hpp"
#include "traces/event.hpp"

namespace ranklab::detail {

/// One operation as the ring keeps it: what its TraceEvent is built from, with point-to-point
/// and collective fields sharing their slots. Which fields a kind uses is assign()'s and
/// expand()'s business; an entry is reused, so every field a kind reads is written for it.
/// Peers and roots are group ranks, made global by expand() (the group is at hand there).
struct RecentEvent {
  // In the order of the Operation's fields they come from, so that copies pair up.
  std::uint64_t rank_seq;
  std::uint64_t lamport;  ///< as the trace has it (a pending operation's: its clock + 1)
  std::uint64_t count;
  /// Group ranks: a point-to-point op's peer (kNoRank: a pending receive from any source), a
  /// collective's root (kNoRank: none).
  int peer;
  int tag;  ///< point-to-point only
  /// A collective's coll_seq; a point-to-point op's message id's sender_seq.
  std::uint64_t seq;
  /// Where it was called: pointers to strings that outlive the run (comm/call_site.hpp),
  /// copied rather than interned here (four loads and stores beat the lookup); expand()'s
  /// caller gives the recorded form.
  SourceSite site;
  const Group* group;
  int msg_sender;  ///< point-to-point only: the message id's sender (global; kNoRank: none)
  OpKind op;
  bool has_reduce_op;  ///< collectives only
  ReduceOp reduce_op;  ///< collectives only
  DataType dtype;
  OpStatus status;
  bool blocked;
  bool any_source;  ///< point-to-point only

  /// Takes what `op` knew when it ended with `status` (completed, or pending at the run's
  /// end), as Fabric::record does for every operation. Inline: it is most of the work.
  void assign(const Operation& o, OpStatus s) {
    const bool completed = s == OpStatus::completed;
    rank_seq = o.rank_seq;
    // A pending operation learned no other clock (FORMAT.md): its owner's clock + 1.
    lamport = completed ? o.lamport : o.clock_at_post + 1;
    site = o.site;
    group = o.group;
    op = o.kind;
    status = s;
    blocked = !completed && o.blocked_at_end;
    if (!is_point_to_point(o.kind)) [[likely]] {  // a collective's own, shorter path
      count = o.signature.count;
      seq = static_cast<std::uint64_t>(o.coll_seq);
      peer = o.signature.root;
      dtype = o.signature.dtype;
      reduce_op = o.signature.reduce_op;
      has_reduce_op = o.signature.has_reduce_op;
      return;
    }
    if (o.kind == OpKind::send) {
      count = o.send_data.count;
      peer = o.peer;
      tag = o.tag;
      dtype = o.send_data.dtype;
      any_source = false;
      msg_sender = o.msg.sender;
      seq = o.msg.sender_seq;
      return;
    }
    // A completed receive shows what it matched; a pending one what it asked for.
    any_source = o.peer == kAnySource;
    dtype = o.recv_data.dtype;
    if (completed) {
      count = o.status.count;
      peer = o.status.source;
      tag = o.status.tag;
      msg_sender = o.msg.sender;
      seq = o.msg.sender_seq;
    } else {
      count = o.recv_data.count;
      peer = any_source ? kNoRank : o.peer;
      tag = o.tag;
      msg_sender = kNoRank;  // MessageId{}: no message yet
      seq = 0;
    }
  }

  /// The event as the trace records it, for `rank` (the entry's owner), with
  /// `recorded_site` (`site` as the trace records it, comm/call_site.hpp): every field the
  /// fabric sets, the payload hash as absent. Tracing-only fields (hash, in_flight, compute)
  /// and those the fabric never sets (times) are left as they are. Inline: with a sink
  /// that keeps every event, an entry on the stack goes straight into the event.
  void expand(TraceEvent& e, int rank, const SiteRef& recorded_site) const {
    const Group& g = *group;
    const auto global = [&g](int group_rank) {
      return group_rank == kNoRank ? kNoRank : g.global_rank(group_rank);
    };
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
      e.peer = global(peer);
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
      e.root = global(peer);
      e.has_reduce_op = has_reduce_op;
      e.reduce_op = reduce_op;
    }
  }
};

/// A rank's kCapacity latest operations by op number (rank_seq), in that order once asked
/// (snapshot). Not the last to complete: non-blocking operations complete in an order that
/// varies with the schedule's timing (--threads 2) where the trace does not, and the report
/// must read the same whatever the thread count. Lives in place in its rank's slot: neither
/// copied nor moved (its first entries are inside it).
class RecentEvents {
 public:
  static constexpr std::size_t kCapacity = 8;
  static constexpr std::size_t kInline = 2;  ///< entries held before the heap ring
  static_assert(kInline < kCapacity);

  RecentEvents() = default;
  RecentEvents(const RecentEvents&) = delete;
  RecentEvents& operator=(const RecentEvents&) = delete;
  ~RecentEvents() {
    if (ring_ != inline_) delete[] ring_;
  }

  /// The entry for the operation numbered `rank_seq`, which the caller assigns
  /// (RecentEvent::assign). Operations mostly end in the order of their numbers: then it is
  /// the next in the ring, overwriting the lowest number once kCapacity are held. A cursor,
  /// not an index: no multiply, and the one test (end of the ring) is taken once in
  /// kCapacity events. An operation that ends after a later one (a non-blocking one) is
  /// put in its place by number instead, or, being older than all kCapacity held, gets a
  /// spare entry that is not kept.
  RecentEvent& next(std::uint64_t rank_seq) {
    if (rank_seq < newest_) [[unlikely]] return insert_in_order(rank_seq);
    newest_ = rank_seq;
    if (cursor_ == end_) [[unlikely]] turn();
    return *cursor_++;
  }

  /// By op number, lowest first.
  std::vector<RecentEvent> snapshot() const;

 private:
  /// At the end of the ring: moves the inline entries to a heap ring of kCapacity the first
  /// time, then wraps around to overwrite the oldest.
  void turn();
  /// next() for an operation numbered below the newest held.
  RecentEvent& insert_in_order(std::uint64_t rank_seq);

  RecentEvent* ring_ = inline_;
  RecentEvent* cursor_ = inline_;  ///< where the next event goes
  RecentEvent* end_ = inline_ + kInline;
  bool full_ = false;  ///< wrapped around: the oldest is at cursor_
  std::uint64_t newest_ = 0;  ///< the highest op number held
  RecentEvent spare_;         ///< for an operation too old to keep
  RecentEvent inline_[kInline];
};

}  // namespace ranklab::detail
