// The ring of a rank's last events (emulator/detail/recent_events.hpp): oldest first, at
// most kCapacity of them, whether it has filled up or not; and each entry gives back the
// TraceEvent the fabric records for its operation, field for field, for every kind.
#include "emulator/detail/recent_events.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "traces/jsonl.hpp"

namespace ranklab::testing {
namespace {

using detail::Operation;
using detail::RecentEvent;
using detail::RecentEvents;

std::vector<std::uint64_t> seqs_after(std::size_t pushes) {
  RecentEvents recent;
  for (std::size_t i = 0; i < pushes; ++i) recent.next(i).rank_seq = i;
  std::vector<std::uint64_t> out;
  for (const RecentEvent& e : recent.snapshot()) out.push_back(e.rank_seq);
  return out;
}

//! Before the ring is full, every event, in order; after, the last kCapacity, in order:
//! across the move from the inline entries to the heap ring and every wrap-around.
TEST(RecentEventsTest, KeepsTheLastEventsOldestFirst) {
  constexpr std::size_t kCap = RecentEvents::kCapacity;
  EXPECT_TRUE(seqs_after(0).empty());
  EXPECT_EQ(seqs_after(3), (std::vector<std::uint64_t>{0, 1, 2}));
  for (std::size_t pushes : {RecentEvents::kInline - 1, RecentEvents::kInline,
                             RecentEvents::kInline + 1, kCap - 1, kCap, kCap + 1, 2 * kCap,
                             2 * kCap + 3, 5 * kCap + 7}) {
    std::vector<std::uint64_t> expected;
    for (std::size_t i = pushes < kCap ? 0 : pushes - kCap; i < pushes; ++i) expected.push_back(i);
    EXPECT_EQ(seqs_after(pushes), expected) << pushes << " pushes";
  }
}

// Pushes events numbered `seqs`, in that order: the numbers the ring keeps, as listed.
std::vector<std::uint64_t> kept(const std::vector<std::uint64_t>& seqs) {
  RecentEvents recent;
  for (const std::uint64_t seq : seqs) recent.next(seq).rank_seq = seq;
  std::vector<std::uint64_t> out;
  for (const RecentEvent& e : recent.snapshot()) out.push_back(e.rank_seq);
  return out;
}

//! Operations that end out of order (non-blocking ones: their order varies with --threads 2
//! where the trace does not) are kept by number: the highest kCapacity, lowest first,
//! whatever order they ended in. The ring listed them in completion order.
TEST(RecentEventsTest, KeepsTheLatestByNumberWhateverTheOrderTheyEnded) {
  EXPECT_EQ(kept({1, 0}), (std::vector<std::uint64_t>{0, 1}));            // inline entries
  EXPECT_EQ(kept({0, 2, 1}), (std::vector<std::uint64_t>{0, 1, 2}));      // into the heap
  EXPECT_EQ(kept({0, 1, 3, 2, 4}), (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  // Full: a late one displaces the lowest, or is not kept when older than all.
  EXPECT_EQ(kept({0, 2, 3, 4, 5, 6, 7, 8, 1, 9}),
            (std::vector<std::uint64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(kept({1, 2, 3, 4, 5, 6, 7, 8, 9, 0}),
            (std::vector<std::uint64_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(kept({0, 1, 2, 3, 4, 5, 6, 7, 9, 8, 10, 11}),
            (std::vector<std::uint64_t>{4, 5, 6, 7, 8, 9, 10, 11}));
  // Every order of the same numbers keeps the same.
  std::vector<std::uint64_t> seqs = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<std::uint64_t> want = {3, 4, 5, 6, 7, 8, 9, 10};
  for (int shuffle = 0; shuffle < 200; ++shuffle) {
    std::next_permutation(seqs.begin(), seqs.end());
    std::rotate(seqs.begin(), seqs.begin() + shuffle % 11, seqs.end());
    EXPECT_EQ(kept(seqs), want) << ::testing::PrintToString(seqs);
  }
}

// Group 3 of a world of 12: group ranks 0, 1, 2 are global 7, 4, 10, so a peer or root
// left as a group rank (or made global twice) shows.
const Group kGroup(3, "tp[4,7,10]", {7, 4, 10});
constexpr int kOwner = 4;  // group rank 1
const std::string kLabel = "the label";
const SourceSite kSite{"model/layer.cpp", 42, "void ranklab::Layer::forward()", &kLabel};

TraceHeader header() {
  TraceHeader h;
  h.world_size = 12;
  h.groups.resize(4);
  h.groups[0] = {"world", {}};
  h.groups[3] = {kGroup.name(), {7, 4, 10}};
  return h;
}

// An operation of kOwner's with every field the fabric may record set to a value of its own.
std::shared_ptr<Operation> operation(OpKind kind) {
  auto op = std::make_shared<Operation>();
  op->kind = kind;
  op->rank = kOwner;
  op->rank_seq = 17;
  op->group = &kGroup;
  op->site = kSite;
  op->clock_at_post = 30;
  op->lamport = 45;
  op->hash = 0xfeed;  // only a trace sink records it
  return op;
}

// What the trace records for `op` ended with `status`, field by field: the expected
// values, written out (not computed the way the ring computes them).
TraceEvent base_event(const Operation& op, OpStatus status) {
  TraceEvent e;
  e.rank = kOwner;
  e.group = 3;
  e.rank_seq = 17;
  e.op = op.kind;
  e.status = status;
  e.lamport = status == OpStatus::completed ? 45 : 31;
  e.site = to_call_site(kSite);
  return e;
}

struct Case {
  std::string name;
  std::shared_ptr<const Operation> op;
  OpStatus status;
  TraceEvent expected;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const bool blocked : {false, true}) {
    for (const OpStatus status : {OpStatus::completed, OpStatus::pending}) {
      if (blocked && status == OpStatus::completed) continue;  // only the end blocks
      auto op = operation(OpKind::send);
      op->peer = 2;
      op->tag = 5;
      op->send_data = ConstBuffer{nullptr, 6, DataType::f64};
      op->recv_data = MutableBuffer{nullptr, 99, DataType::u8};  // a send's is never read
      op->msg = MessageId{kOwner, 17};
      op->blocked_at_end = blocked;
      TraceEvent e = base_event(*op, status);
      e.peer = 10;
      e.tag = 5;
      e.dtype = DataType::f64;
      e.count = 6;
      e.bytes = 48;
      e.msg = MessageId{kOwner, 17};
      e.blocked = blocked;
      out.push_back({std::string(status == OpStatus::completed ? "completed" : "pending") +
                         " send" + (blocked ? " its rank was blocked in" : ""),
                     op, status, e});
    }
  }
  for (const int source : {0, kAnySource}) {
    const std::string from = source == kAnySource ? " from any source" : " from rank 7";
    auto recv = [&] {
      auto op = operation(OpKind::recv);
      op->peer = source;
      op->tag = kAnyTag;
      op->recv_data = MutableBuffer{nullptr, 8, DataType::i32};
      return op;
    };
    auto done = recv();
    // What it matched: 3 elements from group rank 2 (global 10), tag 9, its op #11.
    done->status = RecvStatus{2, 9, 3};
    done->msg = MessageId{10, 11};
    TraceEvent matched = base_event(*done, OpStatus::completed);
    matched.peer = 10;
    matched.tag = 9;
    matched.any_source = source == kAnySource;
    matched.dtype = DataType::i32;
    matched.count = 3;
    matched.bytes = 12;
    matched.msg = MessageId{10, 11};
    out.push_back({"completed receive" + from, done, OpStatus::completed, matched});
    // Pending: what it asked for, no message.
    auto open = recv();
    open->blocked_at_end = true;
    TraceEvent pending = base_event(*open, OpStatus::pending);
    pending.peer = source == kAnySource ? kNoRank : 7;
    pending.tag = kAnyTag;
    pending.any_source = source == kAnySource;
    pending.dtype = DataType::i32;
    pending.count = 8;
    pending.bytes = 32;
    pending.blocked = true;
    out.push_back({"pending receive" + from, open, OpStatus::pending, pending});
  }
  struct Coll {
    OpKind kind;
    int root;         // group rank
    int global_root;  // as recorded
    bool reduces;
    ReduceOp reduce_op;
    DataType dtype;
    std::size_t count;
  };
  for (const Coll c : {Coll{OpKind::all_reduce, kNoRank, kNoRank, true, ReduceOp::max,
                            DataType::f32, 5},
                       Coll{OpKind::reduce, 2, 10, true, ReduceOp::prod, DataType::i64, 4},
                       Coll{OpKind::broadcast, 0, 7, false, ReduceOp::sum, DataType::f64, 9},
                       Coll{OpKind::barrier, kNoRank, kNoRank, false, ReduceOp::sum,
                            DataType::u8, 0}}) {
    auto op = operation(c.kind);
    op->peer = 1;  // a collective's point-to-point fields are never read
    op->tag = 77;
    op->msg = MessageId{3, 3};
    op->signature = CollectiveSignature{.op = c.kind,
                                        .has_reduce_op = c.reduces,
                                        .reduce_op = c.reduce_op,
                                        .dtype = c.dtype,
                                        .root = c.root,
                                        .count = c.count};
    op->coll_seq = 23;
    for (const OpStatus status : {OpStatus::completed, OpStatus::pending}) {
      TraceEvent e = base_event(*op, status);
      e.dtype = c.dtype;
      e.count = c.count;
      e.bytes = c.count * size_of(c.dtype);
      e.coll_seq = 23;
      e.root = c.global_root;
      e.has_reduce_op = c.reduces;
      e.reduce_op = c.reduce_op;
      out.push_back({std::string(status == OpStatus::completed ? "completed " : "pending ") +
                         std::string(to_string(c.kind)),
                     op, status, e});
    }
  }
  return out;
}

//! Every field of every kind of operation survives the ring: sends, receives (completed,
//! pending, from one source or any), collectives with and without a root or a reduce op,
//! barriers. One entry and one event are reused throughout, as the ring and the fabric's
//! scratch event are, so a field a kind leaves unwritten shows the previous case's value;
//! the cases run forwards and backwards, so each kind follows a different one.
TEST(RecentEventsTest, EveryFieldOfEveryKindSurvives) {
  const std::vector<Case> all = cases();
  const TraceHeader h = header();
  for (const bool backwards : {false, true}) {
    RecentEvent entry;
    TraceEvent event;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const Case& c = all[backwards ? all.size() - 1 - k : k];
      entry.assign(*c.op, c.status);
      entry.expand(event, kOwner, to_call_site(entry.site));
      EXPECT_EQ(event, c.expected) << c.name << (backwards ? " (backwards)" : "") << "\n  got      "
                                   << format_event(event, h) << "\n  expected "
                                   << format_event(c.expected, h);
    }
  }
}

//! The entries a snapshot returns are what was assigned, oldest first, once the ring has
//! wrapped: the whole entry is kept, not just the fields the first test reads.
TEST(RecentEventsTest, SnapshotKeepsWholeEntries) {
  const std::vector<Case> all = cases();
  RecentEvents ring;
  const std::size_t pushes = all.size() + 3;  // more than kCapacity: wraps
  ASSERT_GT(pushes, RecentEvents::kCapacity);
  for (std::size_t i = 0; i < pushes; ++i) {
    const Case& c = all[i % all.size()];
    ring.next(i).assign(*c.op, c.status);  // numbered in push order: kept in it
  }
  const std::vector<RecentEvent> kept = ring.snapshot();
  ASSERT_EQ(kept.size(), RecentEvents::kCapacity);
  for (std::size_t j = 0; j < kept.size(); ++j) {
    const Case& c = all[(pushes - kept.size() + j) % all.size()];
    TraceEvent event;
    kept[j].expand(event, kOwner, to_call_site(kept[j].site));
    EXPECT_EQ(event, c.expected) << c.name;
  }
}

}  // namespace
}  // namespace ranklab::testing
