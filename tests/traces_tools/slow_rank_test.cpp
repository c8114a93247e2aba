// A rank's compute slowed in the cost model (Topology::compute_factor, `--slow R=xF`):
// the factor scales that rank's compute events, and only them, and virtual time shows it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/expect_throw_msg.hpp"
#include "traces/cost_model.hpp"
#include "traces/error.hpp"
#include "traces/trace_builder.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab {
namespace {

constexpr double kCompute = 1e-3;  // each rank's compute before the all_reduce

/// A data-parallel step on `world` ranks: each computes kCompute, then all_reduces.
Trace data_parallel_step(int world) {
  TraceBuilder b(world);
  for (int r = 0; r < world; ++r) {
    b.compute(r, {.seconds = kCompute});
    b.wait(r, b.icollective(r, OpKind::all_reduce, DataType::f32, 1024));
  }
  return b.build().trace;
}

class SlowRankTest : public ::testing::TestWithParam<double> {};

//! Rank 2 at factor F computes F ms; the all_reduce starts when it arrives, so the step
//! grows by (F - 1) ms when F > 1 and the others idle that long; below 1 nothing waits
//! for it (the others set the pace).
TEST_P(SlowRankTest, ScalesOneRanksCompute) {
  const double factor = GetParam();
  CostModel model = CostModel::alpha_beta(1e-6, 1e9);
  const VirtualTimes base = simulate(data_parallel_step(4), model);
  model.set_compute_factor(2, factor);
  EXPECT_DOUBLE_EQ(model.compute_factor(2), factor);
  EXPECT_DOUBLE_EQ(model.compute_factor(1), 1.0);
  const VirtualTimes slow = simulate(data_parallel_step(4), model);
  ASSERT_TRUE(slow.complete);
  EXPECT_NEAR(slow.ranks[2].compute, factor * kCompute, 1e-12);
  EXPECT_NEAR(slow.ranks[1].compute, kCompute, 1e-12);
  const double late = std::max(0.0, (factor - 1) * kCompute);
  EXPECT_NEAR(slow.step_seconds, base.step_seconds + late, 1e-12);
  EXPECT_NEAR(slow.ranks[0].idle, base.ranks[0].idle + late, 1e-12);
  EXPECT_NEAR(slow.ranks[2].idle, std::max(0.0, (1 - factor) * kCompute), 1e-12);
  if (factor != 1) {
    EXPECT_NE(model.describe().find("rank 2 compute x"), std::string::npos) << model.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Factors, SlowRankTest, ::testing::Values(0.5, 1.0, 2.0, 3.0, 10.0));

//! FLOPs and layer passes scale alike; staging copies are PCIe transfers and do not.
TEST(SlowRankModelTest, ScalesFlopsAndLayersNotStagingCopies) {
  Topology t;
  t.flops_per_second = 1e9;
  t.layer_seconds = 1e-3;
  t.pcie = {1e-6, 1e9};
  CostModel model(t);
  model.set_compute_factor(1, 4);
  const ComputeItem flops{.flops = 2e9};
  const ComputeItem layer{.label = "forward", .layer = 0};
  const ComputeItem copy{.label = "staging", .copy = StagingCopy::to_host, .bytes = 1000};
  EXPECT_DOUBLE_EQ(model.event_seconds(flops, 1), 8.0);
  EXPECT_DOUBLE_EQ(model.event_seconds(flops, 0), 2.0);
  EXPECT_DOUBLE_EQ(model.event_seconds(flops), 2.0);
  EXPECT_DOUBLE_EQ(model.event_seconds(layer, 1), 4e-3);
  EXPECT_DOUBLE_EQ(model.event_seconds(copy, 1), model.event_seconds(copy, 0));
  model.set_compute_factor(1, 1);  // back to the rest's pace: not listed any more
  EXPECT_TRUE(model.topology().compute_factor.empty());
}

//! A factor that is not a positive number, or a negative rank, is refused by name.
TEST(SlowRankModelTest, RefusesBadFactors) {
  CostModel model = CostModel::alpha_beta(0, 1e9);
  EXPECT_THROW_MSG(model.set_compute_factor(1, 0), UsageError, "must be a number > 0");
  EXPECT_THROW_MSG(model.set_compute_factor(1, -2), UsageError, "must be a number > 0");
  EXPECT_THROW_MSG(model.set_compute_factor(-1, 2), UsageError, "ranks count from 0");
}

}  // namespace
}  // namespace ranklab
