// The cost model's predicted bubble is the schedule's (issue 14 §2): a schedule run as a
// trace of compute events and messages (model/schedule_cost.hpp) with negligible
// communication idles (p-1)/(m+p-1) of all ranks' time under GPipe and 1F1B and
// (p-1)/(v m+p-1) under interleaved 1F1B; real α and β add on top.
#include "model/schedule_cost.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <cstdio>
#include <tuple>

#include "model/schedule_builders.hpp"

namespace ranklab {
namespace {

using BubbleCase = std::tuple<ScheduleKind, int, int, int>;  // kind, v, p, m

class ScheduleBubbleTest : public testing::TestWithParam<BubbleCase> {};

//! α ≈ 0 and a huge β, every layer 1 ms forward and 2 ms backward (and again with backward =
//! forward): the idle share of all ranks' time is within one percentage point of
//! (p-1)/(m+p-1) under GPipe and 1F1B and of (p-1)/(v m+p-1) under interleaved 1F1B with
//! v = 2 and 4; for interleaved with m < p (one group of m micro-batches), of
//! ((p-m)v + m-1)/(p v + m-1), never above 1F1B's bubble.
TEST_P(ScheduleBubbleTest, NegligibleCommunicationGivesTheClosedForm) {
  const auto [kind, v, p, m] = GetParam();
  const ScheduleSpec spec{.kind = kind, .pp = p, .microbatches = m, .virtual_stages = v};
  const Schedule schedule = build_schedule(spec);
  const CostModel model = CostModel::parse("alpha=1e-12,beta=1e18");
  const VirtualTimes t =
      predict_schedule(schedule, model, {.layers_per_chunk = 2, .message_bytes = 4096,
                                         .forward_seconds = 1e-3, .backward_seconds = 2e-3});
  ASSERT_TRUE(t.complete);
  const double expected =
      m < p && v > 1 ? static_cast<double>((p - m) * v + m - 1) / (p * v + m - 1)
                     : static_cast<double>(p - 1) / (v * m + p - 1);
  EXPECT_NEAR(ideal_bubble(spec), expected, 1e-12);
  EXPECT_NEAR(schedule_bubble(schedule), t.bubble, 1e-6);
  for (const RankTime& r : t.ranks) {
    EXPECT_NEAR(r.compute, m * v * 2 * 3e-3, 1e-12);  // 2 layers x (1 + 2) ms, M·V passes each way
    EXPECT_LT(r.comm, 1e-6);
  }
  EXPECT_NEAR(t.bubble, expected, 0.01) << spec.describe();
  const double same = schedule_bubble(schedule, {.forward_seconds = 1, .backward_seconds = 1});
  EXPECT_NEAR(same, expected, 0.01) << spec.describe() << ", backward = forward";
  if (kind == ScheduleKind::interleaved) {
    const double one_f_one_b = schedule_bubble(
        build_schedule({.kind = ScheduleKind::one_f_one_b, .pp = p, .microbatches = m}));
    EXPECT_LE(t.bubble, one_f_one_b + 1e-9) << spec.describe();
  }
}

std::string name(const testing::TestParamInfo<BubbleCase>& info) {
  const auto [kind, v, p, m] = info.param;
  const std::string k = kind == ScheduleKind::gpipe         ? "GPipe"
                        : kind == ScheduleKind::one_f_one_b ? "OneFOneB"
                                                            : fmt::format("InterleavedV{}", v);
  return fmt::format("{}P{}M{}", k, p, m);
}

INSTANTIATE_TEST_SUITE_P(
    OneChunk, ScheduleBubbleTest,
    testing::Combine(testing::Values(ScheduleKind::gpipe, ScheduleKind::one_f_one_b),
                     testing::Values(1), testing::Values(2, 4, 8), testing::Values(1, 4, 8, 16)),
    name);
INSTANTIATE_TEST_SUITE_P(
    Interleaved, ScheduleBubbleTest,
    testing::Combine(testing::Values(ScheduleKind::interleaved), testing::Values(2, 4),
                     testing::Values(2, 4, 8), testing::Values(1, 4, 8, 16)),
    name);
// Fewer micro-batches than stages, not dividing them: one group of 3 (p = 4) or 5 (p = 8).
INSTANTIATE_TEST_SUITE_P(
    InterleavedOneGroup, ScheduleBubbleTest,
    testing::Values(BubbleCase{ScheduleKind::interleaved, 2, 4, 3},
                    BubbleCase{ScheduleKind::interleaved, 3, 8, 5}),
    name);

//! Real α and β: communication adds on top of the schedule's bubble (a longer step, a larger
//! share of time not computing), and the per-rank split shows it as communication.
TEST(ScheduleCostTest, CommunicationAddsOnTop) {
  const Schedule schedule = build_schedule({.kind = ScheduleKind::one_f_one_b, .pp = 4,
                                            .microbatches = 8});
  const ScheduleCostShape shape{.layers_per_chunk = 2, .message_bytes = 1 << 20};
  const VirtualTimes free = predict_schedule(
      schedule, CostModel::parse("alpha=1e-12,beta=1e18"), shape);
  const VirtualTimes real = predict_schedule(
      schedule, CostModel::parse("alpha=1e-5,beta=1e9"), shape);
  EXPECT_GT(real.step_seconds, free.step_seconds + 1e-4);
  // Time not computing: the bubble (idle) plus communication, more than the free bubble.
  double not_computing = 0;
  for (const RankTime& r : real.ranks) not_computing += r.idle + r.comm;
  EXPECT_GT(not_computing / (4 * real.step_seconds), free.bubble + 0.005);
  for (std::size_t r = 0; r < real.ranks.size(); ++r) {
    EXPECT_DOUBLE_EQ(real.ranks[r].compute, free.ranks[r].compute);
    EXPECT_GT(real.ranks[r].comm, 1e-4);
  }
}

//! Peak activations: GPipe holds all M, 1F1B at most PP, interleaved more than 1F1B.
TEST(ScheduleCostTest, PeakActivations) {
  const auto peak = [](ScheduleKind kind, int v) {
    return peak_activations(
        build_schedule({.kind = kind, .pp = 4, .microbatches = 8, .virtual_stages = v}));
  };
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::gpipe, 1), 8);
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::one_f_one_b, 1), 4);
  // Megatron's interleaved warm-up, 2(p-1) + (v-1)p chunk forwards on stage 0, plus the
  // steady state's first: p(1 + (p-1)/(p v)) micro-batches, 5.5 at p = 4, v = 2.
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::interleaved, 2), 5.5);
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::interleaved, 4), 4 * (1 + 3.0 / 16));
}

}  // namespace
}  // namespace ranklab
