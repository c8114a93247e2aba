// Groups: readable names, group-rank <-> global-rank translation, split, and clear errors
// for calls by non-members and for impossible groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/errors.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab::testing {
namespace {

class GroupTest : public ::testing::TestWithParam<ClusterParam> {};

//! A group is named KIND[r0,r1,...] and translates group ranks to global ranks in the
//! order given; the world is named `world` and is the identity.
TEST_P(GroupTest, NamesAndRankTranslation) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    EXPECT_EQ(world.name(), "world");
    EXPECT_EQ(world.size(), n);
    for (int r = 0; r < n; ++r) EXPECT_EQ(world.global_rank(r), r);

    std::vector<int> reversed(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) reversed[static_cast<std::size_t>(i)] = n - 1 - i;
    Communicator rev = world.new_group(reversed, "rev");
    std::string name = "rev[";
    for (int i = 0; i < n; ++i) name += (i ? "," : "") + std::to_string(n - 1 - i);
    EXPECT_EQ(rev.name(), name + "]");
    EXPECT_EQ(rev.rank(), n - 1 - me);
    for (int i = 0; i < n; ++i) EXPECT_EQ(rev.global_rank(i), n - 1 - i);

    // Group rank 0 of `rev` is global rank n-1: a message to it goes there.
    std::int32_t v = -1;
    const std::int32_t mine = me;
    Work sent = rev.isend(std::span(&mine, 1), 0, /*tag=*/1);
    if (rev.rank() == 0) {
      for (int i = 0; i < n; ++i) {
        const RecvStatus st = rev.recv(std::span(&v, 1), i, /*tag=*/1);
        EXPECT_EQ(v, n - 1 - i) << "group rank " << i << " is global " << n - 1 - i;
        EXPECT_EQ(st.source, i);
      }
    }
    sent.wait();

    const std::vector<int> first = {0};
    Communicator solo = world.new_group(first, "tp");
    EXPECT_EQ(solo.name(), "tp[0]");
    EXPECT_EQ(solo.is_member(), me == 0);
    EXPECT_EQ(solo.rank(), me == 0 ? 0 : -1);
  })));
}

//! The emulator's Group: the same kind and ranks give the same group from any rank, and
//! group_rank/contains answer for members and non-members alike.
TEST_P(GroupTest, RankContextGroupsAreSharedAndTranslate) {
  const int n = GetParam().world;
  Engine engine(GetParam().options());
  std::vector<const Group*> seen(static_cast<std::size_t>(n));
  const RunReport report = engine.run([&](RankContext& ctx) {
    std::vector<int> evens;
    for (int r = 0; r < n; r += 2) evens.push_back(r);
    const Group& g = ctx.new_group("dp", evens);
    seen[static_cast<std::size_t>(ctx.rank())] = &g;
    EXPECT_EQ(&ctx.new_group("dp", evens), &g) << "asking again gives the same group";
    EXPECT_EQ(g.size(), static_cast<int>(evens.size()));
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(g.contains(r), r % 2 == 0);
      EXPECT_EQ(g.group_rank(r), r % 2 == 0 ? r / 2 : -1);
    }
    EXPECT_EQ(g.group_rank(n), -1);
    EXPECT_EQ(g.group_rank(-1), -1);
    EXPECT_EQ(ctx.world().name(), "world");
    EXPECT_EQ(ctx.world().id(), 0u);
    EXPECT_NE(g.id(), 0u);
  });
  EXPECT_TRUE(run_ok(report));
  for (const Group* g : seen) EXPECT_EQ(g, seen.front()) << "every rank got one group object";
}

//! split(color, key) groups the ranks of one color ordered by key, names the group after
//! its parent and color, and needs no other coordination.
TEST_P(GroupTest, SplitByColorOrderedByKey) {
  const int n = GetParam().world;
  EXPECT_TRUE(run_ok(run_ranks(GetParam().options(), [&](Communicator& world) {
    const int me = world.rank();
    Communicator half = world.split(/*color=*/me % 2, /*key=*/-me);  // descending ranks
    std::vector<int> members;
    for (int r = n - 1; r >= 0; --r) {
      if (r % 2 == me % 2) members.push_back(r);
    }
    ASSERT_EQ(half.size(), static_cast<int>(members.size()));
    for (int i = 0; i < half.size(); ++i)
      EXPECT_EQ(half.global_rank(i), members[static_cast<std::size_t>(i)]);
    EXPECT_EQ(half.global_rank(half.rank()), me);
    EXPECT_EQ(half.name().rfind(fmt::format("world.split{}[", me % 2), 0), 0u) << half.name();
    std::vector<std::int64_t> x = {me};
    half.all_reduce(std::span(x));
    std::int64_t expected = 0;
    for (int r : members) expected += r;
    EXPECT_EQ(x[0], expected);
  })));
}

//! Creating groups on one worker thread while ranks of another read the world group: the
//! world must not live in storage that new_group reallocates (UBSan caught a read of freed
//! memory in RankContext::world() at 13 ranks, pct, 2 threads, before the fix).
TEST_P(GroupTest, WorldStaysValidWhileOtherRanksCreateGroups) {
  const int n = GetParam().world;
  Engine engine(GetParam().options());
  const RunReport report = engine.run([&](RankContext& context) {
    for (int i = 0; i < 64; ++i) {
      const std::vector<int> single = {context.rank()};
      context.new_group(fmt::format("solo{}", i), single);  // grows the fabric's group table
      context.yield();
      ASSERT_EQ(context.world().size(), n);
      ASSERT_EQ(context.world().name(), "world");
    }
  });
  EXPECT_TRUE(run_ok(report));
}

INSTANTIATE_TEST_SUITE_P(Worlds, GroupTest, ::testing::ValuesIn(cluster_params()), ParamName());

//! A rank that is not a member of a group cannot send, receive or run collectives on it;
//! the message names the call and the group.
TEST(GroupErrorTest, NonMemberCallsAreRejected) {
  ClusterOptions options;
  options.world_size = 3;
  EXPECT_TRUE(run_ok(run_ranks(options, [](Communicator& world) {
    const std::vector<int> pair = {0, 1};
    Communicator tp = world.new_group(pair, "tp");
    if (world.rank() != 2) {
      tp.barrier();
      return;
    }
    EXPECT_FALSE(tp.is_member());
    EXPECT_EQ(tp.size(), 2);
    std::vector<float> x(4);
    EXPECT_THROW_MSG(tp.send(x, 0, 0), UsageError,
                     "send on group tp[0,1], which the caller is not a member of");
    EXPECT_THROW_MSG(tp.recv(std::span(x), 0, 0), UsageError,
                     "recv on group tp[0,1], which the caller is not a member of");
    EXPECT_THROW_MSG(tp.all_reduce(std::span(x)), UsageError,
                     "all_reduce on group tp[0,1], which the caller is not a member of");
    EXPECT_THROW_MSG(tp.barrier(), UsageError,
                     "barrier on group tp[0,1], which the caller is not a member of");
  })));
}

//! The emulator-level calls reject non-members too, naming the global rank.
TEST(GroupErrorTest, RankContextRejectsNonMembers) {
  ClusterOptions options;
  options.world_size = 3;
  Engine engine(options);
  const RunReport report = engine.run([](RankContext& ctx) {
    const std::vector<int> pair = {0, 1};
    const Group& tp = ctx.new_group("tp", pair);
    if (ctx.rank() != 2) return;
    std::int32_t v = 0;
    EXPECT_THROW_MSG(ctx.send(tp, as_buffer(std::span(&v, 1)), 0, 0), UsageError,
                     "rank 2: send on group tp[0,1], which it is not a member of");
    EXPECT_THROW_MSG(ctx.recv(tp, as_mutable_buffer(std::span(&v, 1)), 0, 0), UsageError,
                     "rank 2: recv on group tp[0,1], which it is not a member of");
    EXPECT_THROW_MSG(ctx.barrier(tp), UsageError,
                     "rank 2: barrier on group tp[0,1], which it is not a member of");
  });
  EXPECT_TRUE(run_ok(report));
}

//! new_group refuses an empty kind, an empty rank list, ranks outside the world and a
//! rank listed twice, naming the problem.
TEST(GroupErrorTest, ImpossibleGroupsAreRejected) {
  ClusterOptions options;
  options.world_size = 4;
  Engine engine(options);
  const RunReport report = engine.run([](RankContext& ctx) {
    const std::vector<int> none, outside = {0, 4}, negative = {-1}, twice = {1, 2, 1};
    EXPECT_THROW_MSG(ctx.new_group("tp", none), UsageError,
                     "new_group tp: a group needs at least one rank");
    EXPECT_THROW_MSG(ctx.new_group("tp", outside), UsageError,
                     "new_group tp: rank 4 is outside the world of 4");
    EXPECT_THROW_MSG(ctx.new_group("tp", negative), UsageError,
                     "new_group tp: rank -1 is outside the world of 4");
    EXPECT_THROW_MSG(ctx.new_group("", outside), UsageError,
                     "new_group: the group kind must not be empty");
    EXPECT_THROW_MSG(ctx.new_group("tp", twice), UsageError,
                     "new_group tp: rank 1 is listed twice");
  });
  EXPECT_TRUE(run_ok(report));
}

}  // namespace
}  // namespace ranklab::testing
