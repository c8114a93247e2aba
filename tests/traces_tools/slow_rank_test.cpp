// A rank's compute slowed in the cost model (Topology::compute_factor, `--slow R=xF`):
// the factor scales that rank's compute events, and only them, and virtual time shows it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/traces_tools/any_source_race.hpp"
#include "traces/cost_model.hpp"
#include "traces/error.hpp"
#include "traces/trace_builder.hpp"
#include "traces/virtual_time.hpp"
#include "traces/wait_analysis.hpp"

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

namespace ranklab {
namespace {

//! A data-parallel straggler: the others' idle time is "waiting for straggler rank 2",
//! never a pipeline bubble; rank 2 is the slowest, and the critical path runs through it.
TEST(WaitAnalysisTest, DataParallelIdleIsWaitingForTheStraggler) {
  CostModel model = CostModel::alpha_beta(0, 1e15);
  model.set_compute_factor(2, 3);
  const VirtualTimes t = simulate(data_parallel_step(4), model);
  const WaitAnalysis& w = t.waits;
  EXPECT_EQ(w.pipeline_bubble_share(), 0.0);
  ASSERT_FALSE(w.causes.empty());
  EXPECT_EQ(w.causes.front().cause, IdleCause::straggler);
  EXPECT_EQ(w.causes.front().rank, 2);
  EXPECT_NEAR(w.causes.front().seconds, 3 * 2 * kCompute, 1e-9);  // 3 ranks x 2 ms
  EXPECT_EQ(w.slowest_rank, 2);
  ASSERT_EQ(w.critical_path.size(), 1u);
  EXPECT_EQ(w.critical_path[0].rank, 2);
  const std::string text = format_wait_analysis(w);
  EXPECT_NE(text.find("waiting for straggler rank 2"), std::string::npos) << text;
  EXPECT_EQ(text.find("pipeline bubble"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 0 waited 2 ms for rank 2 in all_reduce #0 of world (op #0)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("slowest rank: 2"), std::string::npos) << text;
  const std::string report = format_virtual_times(t, model);
  EXPECT_EQ(report.find("pipeline bubble"), std::string::npos) << report;
}

/// Two pipeline stages in a `pp` group, GPipe over `m` micro-batches, a forward 1 ms and a
/// backward 2 ms.
Trace two_stage_gpipe(int m) {
  TraceBuilder b(2);
  const std::uint32_t pp = b.add_group("pp[0,1]", {0, 1});
  for (int i = 0; i < m; ++i) {
    b.compute(0, {.seconds = 1e-3});
    b.send(0, 1, DataType::f32, 1, i, pp);
    b.recv(1, 0, DataType::f32, 1, i, pp);
    b.compute(1, {.seconds = 1e-3});
  }
  for (int i = 0; i < m; ++i) {
    b.compute(1, {.seconds = 2e-3});
    b.send(1, 0, DataType::f32, 1, 100 + i, pp);
    b.recv(0, 1, DataType::f32, 1, 100 + i, pp);
    b.compute(0, {.seconds = 2e-3});
  }
  return b.build().trace;
}

//! Pipeline stages waiting on each other: a pipeline bubble, and every wait-for pair is
//! between the two stages.
TEST(WaitAnalysisTest, PipelineIdleIsABubble) {
  const CostModel model = CostModel::alpha_beta(0, 1e15);
  const VirtualTimes t = simulate(two_stage_gpipe(4), model);
  ASSERT_TRUE(t.complete);
  EXPECT_GT(t.waits.pipeline_bubble_share(), 0.0);
  for (const IdleShare& c : t.waits.causes) EXPECT_NE(c.cause, IdleCause::straggler);
  for (const WaitPair& p : t.waits.pairs) EXPECT_EQ(p.cause, IdleCause::pipeline_bubble);
  // The idle time split by cause adds up to the table's idle time.
  double idle = 0;
  for (const RankTime& r : t.ranks) idle += r.idle;
  EXPECT_NEAR(t.waits.idle_seconds, idle, 1e-12);
  EXPECT_NE(format_virtual_times(t, model).find("idle by cause: pipeline bubble"),
            std::string::npos);
}

//! The same trace gives the same report, byte for byte.
TEST(WaitAnalysisTest, Deterministic) {
  CostModel model = CostModel::alpha_beta(1e-6, 1e9);
  model.set_compute_factor(1, 3);
  const std::string a = format_virtual_times(simulate(two_stage_gpipe(3), model), model);
  const std::string b = format_virtual_times(simulate(two_stage_gpipe(3), model), model);
  EXPECT_EQ(a, b);
}

//! A timed trace's own times (vt_post_ns, vt_end_ns) give the analysis the simulation gave.
TEST(WaitAnalysisTest, RecordedTimesAnalyseAsSimulated) {
  CostModel model = CostModel::alpha_beta(0, 1e15);
  model.set_compute_factor(3, 4);
  Trace trace = data_parallel_step(4);
  const VirtualTimes t = simulate(trace, model);
  annotate(trace, t);
  const std::optional<WaitAnalysis> recorded = analyze_recorded_waits(trace);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->slowest_rank, 3);
  EXPECT_NEAR(recorded->idle_seconds, t.waits.idle_seconds, 1e-8);
  EXPECT_EQ(format_wait_analysis(*recorded), format_wait_analysis(t.waits));
  EXPECT_FALSE(analyze_recorded_waits(data_parallel_step(4)).has_value());  // untimed
}

}  // namespace
}  // namespace ranklab

namespace ranklab {
namespace {

using testing_race::any_source_race;

struct RaceCase {
  double factor;
  bool eager;
  bool completes;
};

class AnySourceRematchTest : public ::testing::TestWithParam<RaceCase> {};

//! Receives from any source matched in virtual arrival order: rank 1 at x1.5 still arrives
//! first (a straggler); at x3 it arrives after rank 2 and the job hangs, whatever the send
//! mode (an eager send completes, but rank 0's second receive still waits).
TEST_P(AnySourceRematchTest, TimingDecidesTheOutcome) {
  const RaceCase c = GetParam();
  CostModel model = CostModel::alpha_beta(0, 1e12);
  model.set_compute_factor(1, c.factor);
  VirtualTimeOptions options;
  options.rematch_any_source = true;
  if (c.eager) options.eager_limit = UINT64_MAX;
  const Trace trace = any_source_race();
  ASSERT_EQ(trace.ranks[0][0].peer, 1);  // as recorded
  const VirtualTimes t = simulate(trace, model, options);
  EXPECT_EQ(t.complete, c.completes);
  EXPECT_EQ(t.rematched_receives, c.completes ? 0u : 1u);
  if (!c.completes) {
    EXPECT_FALSE(t.ranks[0].finished);
    EXPECT_EQ(t.ranks[0].stalled_on, 1u);  // the receive from rank 2
    EXPECT_EQ(t.ranks[1].finished, c.eager);
  }
  // Without rematching, the recorded matches hold whatever the timing.
  EXPECT_TRUE(
      simulate(trace, model, VirtualTimeOptions{.eager_limit = options.eager_limit}).complete);
}

INSTANTIATE_TEST_SUITE_P(Factors, AnySourceRematchTest,
                         ::testing::Values(RaceCase{1.0, false, true}, RaceCase{1.5, false, true},
                                           RaceCase{3.0, false, false}, RaceCase{3.0, true, false},
                                           RaceCase{10.0, false, false}));

//! Rematching without a race changes nothing: the seed-like data-parallel step times the same.
TEST(AnySourceRematchTest, NoAnySourceSameTimes) {
  CostModel model = CostModel::alpha_beta(1e-6, 1e9);
  model.set_compute_factor(3, 2);
  const VirtualTimes plain = simulate(data_parallel_step(4), model);
  const VirtualTimes rematched =
      simulate(data_parallel_step(4), model, VirtualTimeOptions{.rematch_any_source = true});
  EXPECT_EQ(plain.step_seconds, rematched.step_seconds);
  EXPECT_EQ(format_virtual_times(plain, model), format_virtual_times(rematched, model));
}

}  // namespace
}  // namespace ranklab
