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

using BubbleCase = std::tuple<ScheduleKind, int, int>;  // kind, p, m

class ScheduleBubbleTest : public testing::TestWithParam<BubbleCase> {};

//! α ≈ 0 and a huge β, every layer 1 ms forward and 2 ms backward: GPipe's and 1F1B's idle
//! share is within one percentage point of (p-1)/(m+p-1). Interleaved 1F1B (v = 2) reaches
//! (p-1)/(v m+p-1) when a backward costs what a forward does and m >= p; with m < p it stays
//! short of it (a micro-batch's chain through all p·v virtual stages is serial), never above
//! 1F1B's bubble.
TEST_P(ScheduleBubbleTest, NegligibleCommunicationGivesTheClosedForm) {
  const auto [kind, p, m] = GetParam();
  const bool interleaved = kind == ScheduleKind::interleaved;
  const int v = interleaved ? 2 : 1;
  const ScheduleSpec spec{.kind = kind, .pp = p, .microbatches = m, .virtual_stages = v};
  const Schedule schedule = build_schedule(spec);
  const CostModel model = CostModel::parse("alpha=1e-12,beta=1e18");
  const VirtualTimes t =
      predict_schedule(schedule, model, {.layers_per_chunk = 2, .message_bytes = 4096,
                                         .forward_seconds = 1e-3, .backward_seconds = 2e-3});
  ASSERT_TRUE(t.complete);
  const double expected = static_cast<double>(p - 1) / (v * m + p - 1);
  EXPECT_NEAR(ideal_bubble(spec), expected, 1e-12);
  EXPECT_NEAR(schedule_bubble(schedule), t.bubble, 1e-6);
  for (const RankTime& r : t.ranks) {
    EXPECT_NEAR(r.compute, m * v * 2 * 3e-3, 1e-12);  // 2 layers x (1 + 2) ms, M·V passes each way
    EXPECT_LT(r.comm, 1e-6);
  }
  const double same = schedule_bubble(schedule, {.forward_seconds = 1, .backward_seconds = 1});
  if (!interleaved) {
    EXPECT_NEAR(t.bubble, expected, 0.01) << spec.describe();
    EXPECT_NEAR(same, expected, 0.01) << spec.describe() << ", backward = forward";
    return;
  }
  if (m >= p) {
    EXPECT_NEAR(same, expected, 0.01) << spec.describe() << ", backward = forward";
  }
  const double one_f_one_b = schedule_bubble(
      build_schedule({.kind = ScheduleKind::one_f_one_b, .pp = p, .microbatches = m}));
  EXPECT_GE(same, expected - 0.01) << spec.describe();
  EXPECT_LE(same, one_f_one_b + 1e-9) << spec.describe();
  // A backward twice a forward: the builder's depth-first order stalls in its steady state,
  // at M >= 4·PP even past 1F1B (PP2 M16: 20.7% against 1F1B's 5.9%). Measured, not fixed
  // here (issue 14 report): only the lower bound is checked.
  EXPECT_GE(t.bubble, expected - 0.01) << spec.describe();
  std::printf("%s: bubble %.4f (backward = forward: %.4f), closed form %.4f, 1f1b %.4f\n",
              spec.describe().c_str(), t.bubble, same, expected, one_f_one_b);
}

std::string name(const testing::TestParamInfo<BubbleCase>& info) {
  const auto [kind, p, m] = info.param;
  const char* k = kind == ScheduleKind::gpipe ? "GPipe"
                  : kind == ScheduleKind::one_f_one_b ? "OneFOneB"
                                                      : "Interleaved";
  return fmt::format("{}P{}M{}", k, p, m);
}

INSTANTIATE_TEST_SUITE_P(
    AllSchedules, ScheduleBubbleTest,
    testing::Combine(testing::Values(ScheduleKind::gpipe, ScheduleKind::one_f_one_b,
                                     ScheduleKind::interleaved),
                     testing::Values(2, 4, 8), testing::Values(1, 4, 8, 16)),
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

//! Peak activations: GPipe holds all M, 1F1B at most PP, interleaved a little more than 1F1B.
TEST(ScheduleCostTest, PeakActivations) {
  const auto peak = [](ScheduleKind kind, int v) {
    return peak_activations(
        build_schedule({.kind = kind, .pp = 4, .microbatches = 8, .virtual_stages = v}));
  };
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::gpipe, 1), 8);
  EXPECT_DOUBLE_EQ(peak(ScheduleKind::one_f_one_b, 1), 4);
  EXPECT_GT(peak(ScheduleKind::interleaved, 2), 4);
  EXPECT_LT(peak(ScheduleKind::interleaved, 2), 8);
}

}  // namespace
}  // namespace ranklab
