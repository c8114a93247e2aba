// The post-mortem's parts on snapshots built by hand, without a run: each detector finds its
// kind of bug, names the ranks and calls, and finds nothing where there is nothing to find.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/diagnosis/analysis.hpp"
#include "emulator/diagnosis/collective_order.hpp"
#include "emulator/diagnosis/describe.hpp"
#include "emulator/diagnosis/detectors.hpp"
#include "emulator/diagnosis/wait_for.hpp"

namespace ranklab::diagnosis {
namespace {

/// A fabric's state at the end of a run, written rank by rank. Peers are global ranks.
class Snapshot {
 public:
  explicit Snapshot(int world) {
    std::vector<int> all;
    for (int r = 0; r < world; ++r) all.push_back(r);
    world_ = &group("world", all);
    snap_.ranks.resize(static_cast<std::size_t>(world));
    snap_.unexpected.resize(static_cast<std::size_t>(world));
  }

  const Group& world() const { return *world_; }
  const Group& group(std::string name, std::vector<int> ranks) {
    const auto id = static_cast<std::uint32_t>(groups_.size());
    return *groups_.emplace_back(std::make_unique<Group>(id, std::move(name), std::move(ranks)));
  }

  Snapshot& send(int rank, int dst, int tag, const Group* g = nullptr) {
    return block(rank, p2p(OpKind::send, rank, dst, tag, g));
  }
  Snapshot& recv(int rank, int src, int tag, const Group* g = nullptr) {
    return block(rank, p2p(OpKind::recv, rank, src, tag, g));
  }
  /// `rank` blocked in the `coll_seq`-th `kind` of `g`, which the group ranks `absent` have
  /// not posted (members blocked in the same call share it).
  Snapshot& collective(int rank, OpKind kind, const Group& g, std::int64_t coll_seq,
                       std::vector<int> absent) {
    PendingOp op{
        .kind = kind, .rank = rank, .group = &g, .coll_seq = coll_seq, .rank_seq = next_seq(rank)};
    op.signature = {.op = kind, .dtype = DataType::f32, .count = 4};
    for (std::size_t i = 0; i < snap_.ops.size(); ++i) {
      const PendingOp& other = snap_.ops[i];
      if (other.group == &g && other.kind == kind && other.coll_seq == coll_seq)
        op.call = other.call;
    }
    if (op.call < 0) {
      op.call = static_cast<int>(snap_.calls.size());
      snap_.calls.push_back({std::move(absent)});
    }
    return block(rank, op);
  }
  /// An unmatched send from `rank` waiting in `dst`'s mailbox.
  Snapshot& unexpected(int rank, int dst, int tag, const Group* g = nullptr,
                       bool buffered = false) {
    PendingOp op = p2p(OpKind::send, rank, dst, tag, g);
    op.done = buffered;
    snap_.unexpected[static_cast<std::size_t>(dst)].push_back(static_cast<int>(snap_.ops.size()));
    snap_.ops.push_back(op);
    return *this;
  }
  Snapshot& finished(int rank) { return ended(rank, RankState::finished); }
  Snapshot& failed(int rank) { return ended(rank, RankState::failed); }
  Snapshot& dropped(int src, int dst, int tag, const Group* g = nullptr) {
    snap_.dropped.push_back({.group = g ? g : world_,
                             .src = src,
                             .dst = dst,
                             .tag = tag,
                             .count = 4,
                             .dtype = DataType::f32,
                             .send_seq = 0,
                             .fault = fmt::format("drop:{}->{}#0", src, dst)});
    return *this;
  }
  /// `rank` runs a point-to-point all_reduce (ring) on `g` as call `seq` of the group.
  Snapshot& inside(int rank, const Group& g, std::uint64_t seq) {
    snap_.ranks[static_cast<std::size_t>(rank)].inside = detail::InsideCollective{
        &g, seq, {{.op = OpKind::all_reduce, .dtype = DataType::f32, .count = 4}, "ring"}};
    return *this;
  }

  const FabricSnapshot& get() const { return snap_; }
  detail::WaitGraph graph() const { return build_wait_graph(snap_); }

 private:
  PendingOp p2p(OpKind kind, int rank, int peer, int tag, const Group* g) {
    const Group& group = g ? *g : *world_;
    return {.kind = kind,
            .rank = rank,
            .group = &group,
            .peer = peer == kAnySource ? kAnySource : group.group_rank(peer),
            .tag = tag,
            .dtype = DataType::i32,
            .count = 1,
            .rank_seq = next_seq(rank)};
  }
  std::uint64_t next_seq(int rank) { return seq_[rank]++; }
  Snapshot& block(int rank, const PendingOp& op) {
    RankView& view = snap_.ranks[static_cast<std::size_t>(rank)];
    view.state = RankState::blocked;
    view.waiting_on = static_cast<int>(snap_.ops.size());
    snap_.ops.push_back(op);
    return *this;
  }
  Snapshot& ended(int rank, RankState state) {
    snap_.ranks[static_cast<std::size_t>(rank)].state = state;
    return *this;
  }

  std::vector<std::unique_ptr<Group>> groups_;
  const Group* world_ = nullptr;
  FabricSnapshot snap_;
  std::map<int, std::uint64_t> seq_;
};

// --- lost message ----------------------------------------------------------------------

TEST(PostMortemTest, LostMessageNamesTheFaultAndBothRanks) {
  Snapshot s(2);
  s.recv(1, 0, 5).finished(0).dropped(0, 1, 5);
  const auto found = find_lost_message(s.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, CulpritKind::lost_message);
  EXPECT_EQ(found->ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(found->text,
            "rank 1 waits in recv from rank 0 tag 5 in world (1 x i32), op #0, one message "
            "short: fault drop:0->1#0 dropped rank 0's send op #0 to it (tag 5, 4 x f32) in world");
  ASSERT_EQ(found->operations.size(), 1u);
  EXPECT_EQ(found->operations[0].rank, 1);
  EXPECT_EQ(found->groups, (std::vector<std::string>{"world"}));
}

TEST(PostMortemTest, LostMessageMatchesAnySourceAndAnyTag) {
  Snapshot s(3);
  s.recv(2, kAnySource, kAnyTag).dropped(1, 2, 7);
  const auto found = find_lost_message(s.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->ranks, (std::vector<int>{1, 2}));
}

TEST(PostMortemTest, LostMessageNeedsTheReceiveItWasFor) {
  Snapshot s(3);
  const Group& pair = s.group("pp[0,1]", {0, 1});
  s.recv(1, 0, 5).send(2, 0, 0);
  EXPECT_FALSE(find_lost_message(s.get())) << "no fault dropped anything";
  Snapshot other_tag(2);
  other_tag.recv(1, 0, 5).dropped(0, 1, 6);
  EXPECT_FALSE(find_lost_message(other_tag.get()));
  Snapshot other_source(3);
  other_source.recv(1, 0, 5).dropped(2, 1, 5);
  EXPECT_FALSE(find_lost_message(other_source.get()));
  s.dropped(0, 1, 5, &pair);
  EXPECT_FALSE(find_lost_message(s.get())) << "dropped in another group";
  Snapshot to_sender(2);
  to_sender.send(0, 1, 5).dropped(1, 0, 5);
  EXPECT_FALSE(find_lost_message(to_sender.get())) << "only a receive waits for a message";
}

// --- near misses: tag, source, group ---------------------------------------------------

TEST(PostMortemTest, NearMissWithAnotherTagIsATagMismatch) {
  Snapshot s(2);
  s.recv(1, 0, 2).unexpected(0, 1, 1).finished(0);
  const auto found = find_near_miss(s.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, CulpritKind::tag_mismatch);
  EXPECT_EQ(found->ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(found->text,
            "rank 1 waits in recv from rank 0 tag 2 in world (1 x i32), op #0, but rank 0 sent "
            "it tag 1 instead (op #0: send to rank 1 tag 1 in world)");
  EXPECT_EQ(found->operations.size(), 2u) << "the receive and the send";
}

TEST(PostMortemTest, NearMissFromAnotherSourceIsASourceMismatch) {
  Snapshot s(3);
  s.recv(1, 0, 0).unexpected(2, 1, 0, nullptr, /*buffered=*/true);
  const auto found = find_near_miss(s.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, CulpritKind::source_mismatch);
  EXPECT_EQ(found->ranks, (std::vector<int>{2, 1}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring,
                      "the message with that tag came from rank 2, not rank 0 "
                      "(buffered, op #0: send to rank 1 tag 0 in world)",
                      found->text);
}

TEST(PostMortemTest, NearMissInAnotherGroupIsAGroupMismatch) {
  Snapshot s(2);
  const Group& pair = s.group("pp[0,1]", {0, 1});
  s.recv(1, 0, 0).unexpected(0, 1, 0, &pair);
  const auto found = find_near_miss(s.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, CulpritKind::group_mismatch);
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "rank 0 sent it in pp[0,1] instead", found->text);
  EXPECT_EQ(found->groups, (std::vector<std::string>{"world", "pp[0,1]"}));
}

TEST(PostMortemTest, NearMissIgnoresFarMissesAndCollectiveTraffic) {
  Snapshot two_ways(3);
  two_ways.recv(1, 0, 0).unexpected(2, 1, 9);  // another source and another tag
  EXPECT_FALSE(find_near_miss(two_ways.get()));
  Snapshot reserved(2);
  reserved.recv(1, 0, 0).unexpected(0, 1, kFirstReservedTag);  // an algorithm's own message
  EXPECT_FALSE(find_near_miss(reserved.get()));
  Snapshot to_a_sender(2);
  to_a_sender.send(1, 0, 0).unexpected(0, 1, 3);  // rank 1 waits in a send, not a receive
  EXPECT_FALSE(find_near_miss(to_a_sender.get()));
  Snapshot empty(2);
  empty.recv(1, 0, 0).recv(0, 1, 0);
  EXPECT_FALSE(find_near_miss(empty.get()));
}

// --- missing participant ---------------------------------------------------------------

TEST(PostMortemTest, MissingParticipantNamesTheRankThatReturned) {
  Snapshot s(3);
  s.collective(0, OpKind::barrier, s.world(), 0, {2})
      .collective(1, OpKind::barrier, s.world(), 0, {2})
      .finished(2);
  const auto found = find_missing_participant(s.get(), s.graph());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kind, CulpritKind::missing_participant);
  EXPECT_EQ(found->ranks, (std::vector<int>{2}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring,
                      "rank 2 returned while ranks 0 and 1 wait for it (rank 0 in "
                      "barrier #0 in world: barrier",
                      found->text);
}

TEST(PostMortemTest, MissingParticipantWithOneWaiter) {
  Snapshot s(2);
  s.recv(0, 1, 0).finished(1);
  const auto found = find_missing_participant(s.get(), s.graph());
  ASSERT_TRUE(found);
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "rank 1 returned while rank 0 waits for it",
                      found->text);
}

TEST(PostMortemTest, MissingParticipantNeedsARankThatReturned) {
  Snapshot failed(2);
  failed.recv(0, 1, 0).failed(1);  // a failure is the root cause, not a missing participant
  EXPECT_FALSE(find_missing_participant(failed.get(), failed.graph()));
  Snapshot cycle(2);
  cycle.recv(0, 1, 0).recv(1, 0, 0);
  EXPECT_FALSE(find_missing_participant(cycle.get(), cycle.graph()));
}

// --- the shape of the cycle ------------------------------------------------------------

TEST(PostMortemTest, CycleOfSendsIsASendCycle) {
  Snapshot s(3);
  s.send(0, 1, 0).send(1, 0, 0).finished(2);
  const Culprit c = classify_cycle(s.get(), s.graph());
  EXPECT_EQ(c.kind, CulpritKind::send_cycle);
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.text,
            "ranks 0 and 1 each block in a send to the next before receiving, and a rendezvous "
            "send completes only when its receive is posted (cycle 0 -> 1 -> 0); rank 0 in send "
            "to rank 1 tag 0 in world (1 x i32), op #0; rank 1 in send to rank 0 tag 0 in world "
            "(1 x i32), op #0");
  EXPECT_EQ(c.operations.size(), 2u);
}

TEST(PostMortemTest, CycleOfReceivesIsARecvCycle) {
  Snapshot s(3);
  s.recv(1, 2, 0).recv(2, 1, 0).finished(0);
  const Culprit c = classify_cycle(s.get(), s.graph());
  EXPECT_EQ(c.kind, CulpritKind::recv_cycle);
  EXPECT_EQ(c.ranks, (std::vector<int>{1, 2}));
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "(cycle 1 -> 2 -> 1)", c.text);
}

TEST(PostMortemTest, CycleOfSendsAndReceivesIsAP2pCycle) {
  Snapshot s(3);
  s.send(0, 1, 0).recv(1, 2, 0).recv(2, 0, 0);
  const Culprit c = classify_cycle(s.get(), s.graph());
  EXPECT_EQ(c.kind, CulpritKind::p2p_cycle);
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1, 2}));
}

TEST(PostMortemTest, CycleThroughACollectiveIsCollectiveVsP2p) {
  Snapshot s(2);
  s.collective(0, OpKind::all_reduce, s.world(), 0, {1}).recv(1, 0, 0);
  const Culprit c = classify_cycle(s.get(), s.graph());
  EXPECT_EQ(c.kind, CulpritKind::collective_vs_p2p);
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "rank 0 in all_reduce #0 in world: all_reduce",
                      c.text);
}

TEST(PostMortemTest, NoCycleIsAPlainDeadlock) {
  Snapshot chain(3);
  chain.recv(0, 1, 0).recv(1, 2, 0);  // rank 2 runs
  const Culprit c = classify_cycle(chain.get(), chain.graph());
  EXPECT_EQ(c.kind, CulpritKind::deadlock);
  EXPECT_TRUE(c.ranks.empty());
  EXPECT_TRUE(c.operations.empty());
  EXPECT_EQ(c.text, "every live rank waits for a rank that is blocked elsewhere");
}

// --- the diagnosis: most specific first ------------------------------------------------

TEST(PostMortemTest, DiagnosisPrefersTheMostSpecificFinding) {
  // A receive cycle; then a near miss for it; then the message it waits for, lost.
  Snapshot s(2);
  s.recv(0, 1, 0).recv(1, 0, 3);
  EXPECT_EQ(diagnose_deadlock(s.get(), s.graph()).kind, CulpritKind::recv_cycle);
  s.unexpected(0, 1, 4);
  EXPECT_EQ(diagnose_deadlock(s.get(), s.graph()).kind, CulpritKind::tag_mismatch);
  s.dropped(0, 1, 3);
  EXPECT_EQ(diagnose_deadlock(s.get(), s.graph()).kind, CulpritKind::lost_message);
  // A rank that returned while another waits for it says more than the cycle elsewhere.
  Snapshot returned(4);
  returned.recv(0, 1, 0).recv(1, 0, 0).recv(2, 3, 0).finished(3);
  const Culprit c = diagnose_deadlock(returned.get(), returned.graph());
  EXPECT_EQ(c.kind, CulpritKind::missing_participant);
  EXPECT_EQ(c.ranks, (std::vector<int>{3}));
}

// --- collectives of two groups in opposite orders --------------------------------------

TEST(PostMortemTest, OppositeCollectiveOrdersAreACollectiveOrderMismatch) {
  Snapshot s(2);
  const Group& a = s.group("a[0,1]", {0, 1});
  const Group& b = s.group("b[0,1]", {0, 1});
  s.collective(0, OpKind::all_reduce, a, 0, {1}).collective(1, OpKind::all_reduce, b, 0, {0});
  const auto found = find_collective_order(s.get(), s.graph());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->culprit.kind, CulpritKind::collective_order);
  EXPECT_EQ(found->culprit.ranks, (std::vector<int>{1, 0})) << "rank 1 differs from rank 0";
  EXPECT_EQ(found->culprit.groups, (std::vector<std::string>{"a[0,1]", "b[0,1]"}));
  EXPECT_EQ(found->summary,
            "collective order mismatch: a[0,1] and b[0,1] called in opposite orders (0 -> 1 -> 0)");
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "     1          0  b[0,1] #0: all_reduce",
                      found->table);
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "<-- differs\nfirst rank that differs: 1",
                      found->table);
}

TEST(PostMortemTest, PointToPointCollectivesCountByTheirFingerprint) {
  Snapshot s(2);
  const Group& a = s.group("a[0,1]", {0, 1});
  const Group& b = s.group("b[0,1]", {0, 1});
  s.recv(0, 1, kFirstReservedTag, &a).inside(0, a, 3);
  s.recv(1, 0, kFirstReservedTag, &b).inside(1, b, 5);
  const auto found = find_collective_order(s.get(), s.graph());
  ASSERT_TRUE(found);
  EXPECT_PRED_FORMAT2(::testing::IsSubstring, "a[0,1] #3: all_reduce(f32, count=4)",
                      found->table);
}

TEST(PostMortemTest, CollectiveOrderNeedsTwoGroupsAndCollectivesOnly) {
  Snapshot one_group(2);
  one_group.collective(0, OpKind::all_reduce, one_group.world(), 0, {1}).recv(1, 0, 0);
  EXPECT_FALSE(find_collective_order(one_group.get(), one_group.graph()));
  Snapshot user_recv(2);
  const Group& a = user_recv.group("a[0,1]", {0, 1});
  user_recv.collective(0, OpKind::all_reduce, a, 0, {1}).recv(1, 0, 0);  // a plain receive
  EXPECT_FALSE(find_collective_order(user_recv.get(), user_recv.graph()));
  Snapshot no_cycle(2);
  no_cycle.collective(0, OpKind::barrier, a, 0, {1});
  EXPECT_FALSE(find_collective_order(no_cycle.get(), no_cycle.graph()));
}

// --- the wait-for graph and the report's sections --------------------------------------

TEST(PostMortemTest, WaitGraphFollowsEachKindOfWait) {
  Snapshot s(4);
  s.recv(0, kAnySource, 0).send(1, 2, 0).collective(2, OpKind::barrier, s.world(), 0, {0, 3});
  const detail::WaitGraph g = s.graph();
  EXPECT_EQ(g.waits_for[0], (std::vector<int>{1, 2, 3})) << "any source: every other member";
  EXPECT_EQ(g.waits_for[1], (std::vector<int>{2}));
  EXPECT_EQ(g.waits_for[2], (std::vector<int>{0, 3})) << "the members that have not posted";
  EXPECT_TRUE(g.waits_for[3].empty());
  EXPECT_EQ(g.cycles, (std::vector<std::vector<int>>{{0, 2, 0}})) << "the shortest";
  s.dropped(3, 2, 0);
  const WaitForGraph drawn = draw_wait_graph(s.get(), g);
  ASSERT_EQ(drawn.nodes.size(), 4u);
  EXPECT_EQ(drawn.nodes[3].state, "running");
  EXPECT_EQ(drawn.edges.back().label, "lost: op #0 tag 0 (drop:3->2#0)");
  EXPECT_TRUE(drawn.edges.back().lost);
}

TEST(PostMortemTest, FindingsNameWhoNeverJoinedAndWhoEnded) {
  Snapshot s(4);
  s.collective(0, OpKind::barrier, s.world(), 0, {2, 3})
      .collective(1, OpKind::barrier, s.world(), 0, {2, 3})
      .finished(2)
      .recv(3, 0, 1);
  const auto findings = culprit_findings(s.get(), s.graph());
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0], "rank 2 finished (returned) while ranks 0, 1 wait for it");
  EXPECT_EQ(findings[1], "rank 2 never joined barrier #0 of world (it finished)");
  EXPECT_EQ(findings[2],
            "rank 3 never joined barrier #0 of world (it is blocked in recv from rank 0 tag 1 in "
            "world (1 x i32), op #0)");
  EXPECT_EQ(findings[3], "cycle 0 -> 3 -> 0: each rank waits for the next one");
  EXPECT_EQ(deadlock_summary(s.get(), s.graph()),
            "deadlock: 3 ranks blocked, none can proceed; cycle 0 -> 3 -> 0");
  EXPECT_EQ(last_events_of(s.get()), (std::vector<int>{0, 1, 2, 3}));
  Snapshot none(2);
  none.recv(0, 1, 0);
  EXPECT_TRUE(culprit_findings(none.get(), none.graph()).empty());
}

}  // namespace
}  // namespace ranklab::diagnosis
