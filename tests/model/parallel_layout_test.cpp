// The TP x PP x DP layout: coordinates, rank orders, the groups of both seeds, validation,
// and the groups ParallelLayout creates on a cluster.
#include "model/parallel_layout.hpp"

#include <gtest/gtest.h>

#include "tests/model/model_test_support.hpp"
#include "tests/support/cluster_fixture.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using Groups = std::vector<std::vector<int>>;

const ParallelConfig kSeed{.tp = 2, .pp = 2, .dp = 2};
const ParallelConfig kSeed002{.tp = 2, .pp = 1, .dp = 8};

//! The seed's table (shared/seeds/000 §4.1): rank -> (d, p, t) for TP2 PP2 DP2.
TEST(ParallelLayoutTest, SeedCoordinates) {
  const Coords expected[] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1},
                             {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(kSeed.coords_of(rank), expected[rank]) << "rank " << rank;
    EXPECT_EQ(kSeed.rank_of(expected[rank]), rank);
  }
}

//! The seed's groups: TP (0,1),(2,3),(4,5),(6,7); PP (0,2),(1,3),(4,6),(5,7);
//! DP (0,4),(1,5),(2,6),(3,7).
TEST(ParallelLayoutTest, SeedGroups) {
  EXPECT_EQ(kSeed.all_groups(GroupKind::tp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(kSeed.all_groups(GroupKind::pp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(kSeed.all_groups(GroupKind::dp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(group_name(GroupKind::dp, kSeed.group_ranks(GroupKind::dp, 6)), "dp[2,6]");
}

//! Seed 002's 16 ranks with TP=2, DP=8, PP=1, in either order: tp_groups [g0,g1] ...
//! [g14,g15] and dp_groups [g0,g2,...,g14], [g1,g3,...,g15], exactly as written there.
TEST(ParallelLayoutTest, Seed002SixteenRanks) {
  for (const RankOrder order : {RankOrder::tp_pp_dp, RankOrder::tp_dp_pp}) {
    ParallelConfig config = kSeed002;
    config.order = order;
    EXPECT_EQ(config.world_size(), 16);
    EXPECT_EQ(config.all_groups(GroupKind::tp),
              (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
    EXPECT_EQ(config.all_groups(GroupKind::dp),
              (Groups{{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}}));
    EXPECT_EQ(config.all_groups(GroupKind::pp).size(), 16u);
  }
}

//! Megatron's order tp-dp-pp: rank = p*(DP*TP) + d*TP + t, so DP groups are adjacent pairs
//! of TP pairs and pipeline stages are the two halves of the world.
TEST(ParallelLayoutTest, MegatronOrder) {
  ParallelConfig config = kSeed;
  config.order = RankOrder::tp_dp_pp;
  EXPECT_EQ(config.coords_of(6), (Coords{.d = 1, .p = 1, .t = 0}));
  EXPECT_EQ(config.all_groups(GroupKind::tp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(config.all_groups(GroupKind::dp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(config.all_groups(GroupKind::pp), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(parse_rank_order("tp-dp-pp"), RankOrder::tp_dp_pp);
  EXPECT_EQ(to_string(RankOrder::tp_pp_dp), "tp-pp-dp");
}

//! rank_of and coords_of are inverse for uneven degrees in both orders, and a group's
//! ranks are listed in the order of the coordinate along its axis.
TEST(ParallelLayoutTest, CoordinatesRoundTrip) {
  for (const RankOrder order : {RankOrder::tp_pp_dp, RankOrder::tp_dp_pp}) {
    const ParallelConfig config{.tp = 3, .pp = 2, .dp = 4, .order = order};
    for (int rank = 0; rank < config.world_size(); ++rank) {
      const Coords c = config.coords_of(rank);
      EXPECT_EQ(config.rank_of(c), rank);
      for (const GroupKind kind : kGroupKinds) {
        const std::vector<int> ranks = config.group_ranks(kind, rank);
        ASSERT_EQ(static_cast<int>(ranks.size()), config.size(kind));
        EXPECT_EQ(ranks[static_cast<std::size_t>(ParallelConfig::index(kind, c))], rank);
      }
    }
  }
}

//! Bad configurations fail with one line naming the problem.
TEST(ParallelLayoutTest, ValidationMessages) {
  const ModelShape shape;  // L=4, I=64
  EXPECT_THROW_MSG((ParallelConfig{.tp = 0}.validate()), UsageError, "TP must be positive, got 0");
  EXPECT_THROW_MSG((ParallelConfig{.dp = -2}.validate()), UsageError, "DP must be positive");
  EXPECT_THROW_MSG((ParallelConfig{.pp = 3}.validate(shape)), UsageError,
                   "L=4 is not divisible by PP=3");
  EXPECT_THROW_MSG((ParallelConfig{.tp = 5}.validate(shape)), UsageError,
                   "I=64 is not divisible by TP=5");
  EXPECT_THROW_MSG(kSeed.coords_of(8), UsageError, "rank 8 is outside the world of 8 ranks");
  EXPECT_THROW_MSG(parse_rank_order("dp-pp-tp"), UsageError, "unknown rank order 'dp-pp-tp'");
  ModelShape bad = shape;
  bad.batch = 0;
  EXPECT_THROW_MSG(kSeed.validate(bad), UsageError, "batch must be positive");
}

//! On a cluster every rank gets the groups of its coordinates, named tp[..] / pp[..] /
//! dp[..], with its coordinate as group rank; for the seed and for seed 002's 16 ranks.
TEST(ParallelLayoutTest, CommunicatorsMatchTheConfig) {
  for (const ParallelConfig& config : {kSeed, kSeed002}) {
    testing::expect_run_ok({.world_size = config.world_size()}, [&](Communicator& world) {
      ParallelLayout layout(world, config);
      const Coords c = config.coords_of(world.rank());
      EXPECT_EQ(layout.coords(), c);
      for (const GroupKind kind : kGroupKinds) {
        Communicator& group = layout.group(kind);
        EXPECT_EQ(group.name(), group_name(kind, config.group_ranks(kind, world.rank())));
        EXPECT_EQ(group.rank(), ParallelConfig::index(kind, c));
      }
      EXPECT_EQ(layout.is_last_stage(), c.p == config.pp - 1);
    });
  }
}

//! A config whose TP*PP*DP differs from the world fails every rank with a UsageError
//! naming both sizes.
TEST(ParallelLayoutTest, WrongWorldSizeFails) {
  const RunReport report = testing::run_ranks(
      {.world_size = 4}, [&](Communicator& world) { ParallelLayout layout(world, kSeed); });
  EXPECT_EQ(report.status, RunStatus::rank_failed);
  EXPECT_THROW_MSG(report.rethrow_if_failed(), UsageError,
                   "TP2 PP2 DP2 (tp-pp-dp) needs 8 ranks, the world has 4");
}

}  // namespace
}  // namespace ranklab
