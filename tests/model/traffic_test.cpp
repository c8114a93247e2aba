// Traffic per group kind: the seed's per-rank counts (shared/reference/torch/README.md) and
// the counting of a trace.
#include "model/traffic.hpp"

#include <gtest/gtest.h>

#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

const ParallelConfig kSeed{.tp = 2, .pp = 2, .dp = 2};
constexpr std::uint64_t kActivation = 8 * 16 * 32 * 4;  // [B*S, H] float32

//! The reference's per-rank counts for the seed: stage 0 does 2 TP all_reduces forward and
//! 1 backward, 1 PP send and 1 PP recv, 8 DP all_reduces; stage 1 does 2 + 2 TP
//! all_reduces, 1 PP recv and 1 PP send, 8 DP all_reduces. Sizes follow from the shapes.
TEST(TrafficTest, SeedCountsPerRank) {
  const ModelShape shape;
  for (int rank = 0; rank < 8; ++rank) {
    const RankTraffic t = expected_traffic(kSeed, shape, sizeof(float), rank);
    const bool stage0 = kSeed.coords_of(rank).p == 0;
    const std::uint64_t tp_ops = stage0 ? 3 : 4;
    EXPECT_EQ(t[GroupKind::tp].all_reduce, (OpTally{tp_ops, tp_ops * kActivation}));
    EXPECT_EQ(t[GroupKind::pp].send, (OpTally{1, kActivation}));
    EXPECT_EQ(t[GroupKind::pp].recv, (OpTally{1, kActivation}));
    EXPECT_EQ(t[GroupKind::pp].all_reduce.count, 0u);
    // Per layer: w1 [32,32], b1 [32], w2 [32,32], b2 [32] in float32.
    EXPECT_EQ(t[GroupKind::dp].all_reduce, (OpTally{8, 2 * (4096 + 128 + 4096 + 128)}));
    EXPECT_EQ(t[GroupKind::dp].total().count, 8u);
  }
}

//! An axis of degree 1 sends nothing; a middle pipeline stage sends and receives twice.
TEST(TrafficTest, DegenerateAxesAndMiddleStages) {
  const ModelShape shape;
  const RankTraffic dp_only = expected_traffic({.dp = 4}, shape, sizeof(double), 0);
  EXPECT_EQ(dp_only[GroupKind::tp], KindTraffic{});
  EXPECT_EQ(dp_only[GroupKind::pp], KindTraffic{});
  EXPECT_EQ(dp_only[GroupKind::dp].all_reduce.count, 16u);
  const RankTraffic middle = expected_traffic({.pp = 4}, shape, sizeof(float), 1);
  EXPECT_EQ(middle[GroupKind::pp].send.count, 2u);
  EXPECT_EQ(middle[GroupKind::pp].recv.count, 2u);
}

//! Micro-batches multiply the TP and PP operations by M at 1/M of the bytes; sequence
//! parallelism turns each all_reduce into a reduce_scatter of a shard, adds the gathers
//! where full rows are needed, and sends shards between stages.
TEST(TrafficTest, SchedulesAndSequenceParallelism) {
  const ModelShape shape;  // L4: 2 layers per stage of PP2
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 1};
  const StepOptions one{.schedule = ScheduleKind::one_f_one_b, .microbatches = 4};
  const std::uint64_t micro = kActivation / 4;
  for (int rank = 0; rank < 4; ++rank) {
    const RankTraffic t = expected_traffic(config, shape, sizeof(float), rank, one);
    const std::uint64_t tp_ops = 4 * (config.coords_of(rank).p == 0 ? 3 : 4);
    EXPECT_EQ(t[GroupKind::tp].all_reduce, (OpTally{tp_ops, tp_ops * micro}));
    EXPECT_EQ(t[GroupKind::pp].send, (OpTally{4, 4 * micro}));
    EXPECT_EQ(t[GroupKind::pp].recv, (OpTally{4, 4 * micro}));
  }
  const StepOptions sp{.tp_comm = TpComm::sequence_parallel};
  const std::uint64_t shard = kActivation / 2;
  // Stage 0: forward gathers layer 1's input, backward the stage's output gradient and
  // layer 1's; it reduce-scatters 2 outputs and 1 input gradient (layer 0 needs none).
  const RankTraffic first = expected_traffic(config, shape, sizeof(float), 0, sp);
  EXPECT_EQ(first[GroupKind::tp].all_gather, (OpTally{3, 3 * shard}));
  EXPECT_EQ(first[GroupKind::tp].reduce_scatter, (OpTally{3, 3 * shard}));
  EXPECT_EQ(first[GroupKind::tp].all_reduce.count, 0u);
  EXPECT_EQ(first[GroupKind::pp].send, (OpTally{1, shard}));
  // Stage 1: forward gathers its input, layer 3's and the model output; backward layer 3's
  // output gradient (the loss's is full); 2 + 2 reduce-scatters.
  const RankTraffic last = expected_traffic(config, shape, sizeof(float), 2, sp);
  EXPECT_EQ(last[GroupKind::tp].all_gather, (OpTally{4, 4 * shard}));
  EXPECT_EQ(last[GroupKind::tp].reduce_scatter, (OpTally{4, 4 * shard}));
}

//! Groups are classified by their name's prefix; other groups (world) are not counted,
//! pending operations neither, and an event naming an unknown group is an error.
TEST(TrafficTest, CountsATrace) {
  EXPECT_EQ(group_kind_of("tp[0,1]"), GroupKind::tp);
  EXPECT_EQ(group_kind_of("dp[3]"), GroupKind::dp);
  EXPECT_EQ(group_kind_of("world"), std::nullopt);
  EXPECT_EQ(group_kind_of("tpx[0]"), std::nullopt);

  Trace trace;
  trace.header.world_size = 2;
  trace.header.groups = {{"world", {0, 1}}, {"pp[0,1]", {0, 1}}, {"tp[0]", {0}}};
  trace.ranks.resize(2);
  trace.ranks[0] = {{.rank = 0, .group = 1, .op = OpKind::send, .bytes = 64},
                    {.rank = 0, .group = 0, .op = OpKind::all_reduce, .bytes = 8},
                    {.rank = 0, .group = 2, .op = OpKind::barrier, .bytes = 0}};
  trace.ranks[1] = {{.rank = 1, .group = 1, .op = OpKind::recv, .bytes = 64},
                    {.rank = 1, .group = 1, .op = OpKind::recv, .status = OpStatus::pending}};
  const std::vector<RankTraffic> counted = count_traffic(trace);
  ASSERT_EQ(counted.size(), 2u);
  EXPECT_EQ(counted[0][GroupKind::pp].send, (OpTally{1, 64}));
  EXPECT_EQ(counted[0][GroupKind::tp].other, (OpTally{1, 0}));
  EXPECT_EQ(counted[1][GroupKind::pp].recv, (OpTally{1, 64}));
  EXPECT_EQ(total_traffic(counted, GroupKind::pp).total(), (OpTally{2, 128}));

  trace.ranks[1].push_back({.rank = 1, .group = 7, .op = OpKind::send});
  EXPECT_THROW_MSG(count_traffic(trace), TraceError, "names group 7, the header lists 3");
}

}  // namespace
}  // namespace ranklab
