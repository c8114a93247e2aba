// The TP / PP / DP / hybrid step on the emulator: every rank against the dense reference,
// the traffic the seed's algorithm implies read back from the trace, and bitwise
// reproducibility across scheduler policies and thread counts.
#include "model/parallel_step.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>

#include "model/parallel_check.hpp"
#include "model/traffic.hpp"
#include "tests/model/device_test_support.hpp"
#include "tests/model/model_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using testing::JobOptions;
using testing::run_job;

// Small enough to run dozens of layouts in a few seconds, large enough that every shard
// and stage is non-trivial.
const ModelShape kSmall{.batch = 2, .seq = 4, .hidden = 8, .inter = 16, .layers = 4};

struct StepParam {
  ParallelMode mode = ParallelMode::hybrid;
  ParallelConfig config;
  bool f64 = false;
  std::string policy = "rank-order";
  int threads = 1;
  ModelShape shape = kSmall;
  DeviceKind device = DeviceKind::cpu;

  std::string name() const {
    std::string out =
        fmt::format("{}_tp{}pp{}dp{}_{}_{}_{}_t{}", to_string(mode), config.tp, config.pp,
                    config.dp, config.order == RankOrder::tp_pp_dp ? "seedorder" : "megatron",
                    f64 ? "f64" : "f32", testing::policy_name(policy), threads);
    if (shape == ModelShape{}) out += "_seedshape";
    return out + "_" + testing::device_test_name(device);
  }
  friend void PrintTo(const StepParam& p, std::ostream* os) { *os << p.name(); }
};

class ParallelStepTest : public ::testing::TestWithParam<StepParam> {
 protected:
  template <typename Scalar>
  void run_and_check() {
    const StepParam& p = GetParam();
    RANKLAB_SKIP_UNLESS_DEVICE(p.device);
    const ParallelConfig config = mode_config(p.mode, p.config);
    const Problem<Scalar> full = make_problem<Scalar>(p.shape, config.dp, 3);
    const Problem<Scalar> problem = mode_problem(p.mode, config, full);
    const auto run = run_job<Scalar>(
        config, problem, {.policy = p.policy, .threads = p.threads, .device = p.device});
    ASSERT_TRUE(testing::run_ok(run.report));

    const DenseReference<Scalar> reference = compute_dense_reference(problem);
    const std::vector<RankTraffic> traffic = count_traffic(run.trace);
    ASSERT_EQ(traffic.size(), run.results.size());
    for (const RankResult<Scalar>& result : run.results) {
      const RankCheck check = check_rank(result, config, reference);
      EXPECT_TRUE(check.ok(relative_tolerance<Scalar>()))
          << "rank " << result.rank << ": max relative error " << check.max_relative();
      EXPECT_EQ(result.loss.has_value(), result.coords.p == config.pp - 1);
      EXPECT_EQ(traffic[static_cast<std::size_t>(result.rank)],
                expected_traffic(config, problem.shape, sizeof(Scalar), result.rank))
          << "rank " << result.rank;
      // With one TP rank nothing is summed in another order: the run is the dense model.
      if (config.tp == 1) {
        EXPECT_EQ(check.max_abs(), 0.0) << "rank " << result.rank;
      }
    }
  }
};

//! Every rank's loss, stage output and local gradients match the dense reference within
//! the dtype's tolerance, and each rank's TP/PP/DP traffic is exactly the seed's, on every
//! device (cpu-staged stages each message through host buffers: the same traffic).
TEST_P(ParallelStepTest, MatchesDenseReferenceAndSeedTraffic) {
  if (GetParam().f64) {
    run_and_check<double>();
  } else {
    run_and_check<float>();
  }
}

std::vector<StepParam> step_params() {
  const RankOrder megatron = RankOrder::tp_dp_pp;
  std::vector<StepParam> out = {
      {ParallelMode::tp, {.tp = 2}},
      {ParallelMode::tp, {.tp = 4}, true},
      {ParallelMode::pp, {.pp = 2}},
      {ParallelMode::pp, {.pp = 4}, true},
      {ParallelMode::dp, {.dp = 2}},
      {ParallelMode::dp, {.dp = 3}, true},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2}},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2}, true},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2, .order = megatron}},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2, .order = megatron}, true, "random:5", 2},
      {ParallelMode::hybrid, {.tp = 2, .pp = 1, .dp = 8}},  // seed 002
      {ParallelMode::hybrid, {.tp = 2, .pp = 1, .dp = 8, .order = megatron}, true},
      {ParallelMode::hybrid, {.tp = 4, .pp = 2, .dp = 2}, false, "pct:11:3", 2},  // 16 ranks
      {ParallelMode::hybrid, {.tp = 2, .pp = 4, .dp = 1}, true, "random:9", 1},
      {ParallelMode::hybrid, {.tp = 1, .pp = 2, .dp = 3}, false, "rank-order", 2},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2}, false, "rank-order", 1, ModelShape{}},
      {ParallelMode::hybrid, {.tp = 2, .pp = 2, .dp = 2}, true, "random:3", 2, ModelShape{}},
  };
  std::vector<StepParam> on_devices;
  for (const DeviceKind device : testing::test_devices()) {
    for (StepParam p : out) {
      p.device = device;
      on_devices.push_back(p);
    }
  }
  return on_devices;
}

INSTANTIATE_TEST_SUITE_P(Layouts, ParallelStepTest, ::testing::ValuesIn(step_params()),
                         [](const auto& param_info) { return param_info.param.name(); });

// The per-rank numbers of a run that must not depend on the schedule.
template <typename Scalar>
void expect_bitwise_equal(const testing::JobRun<Scalar>& a, const testing::JobRun<Scalar>& b,
                          const std::string& what) {
  ASSERT_EQ(a.results.size(), b.results.size());
  for (std::size_t r = 0; r < a.results.size(); ++r) {
    const RankResult<Scalar>& x = a.results[r];
    const RankResult<Scalar>& y = b.results[r];
    EXPECT_EQ(x.loss, y.loss) << what << " rank " << r;
    EXPECT_EQ(x.output, y.output) << what << " rank " << r;
    ASSERT_EQ(x.grads.size(), y.grads.size());
    for (std::size_t l = 0; l < x.grads.size(); ++l) {
      EXPECT_TRUE(x.grads[l].w1 == y.grads[l].w1 && x.grads[l].b1 == y.grads[l].b1 &&
                  x.grads[l].w2 == y.grads[l].w2 && x.grads[l].b2 == y.grads[l].b2)
          << what << " rank " << r << " layer " << l;
    }
    // The same operations, with the same payloads, in the same order on every rank.
    ASSERT_EQ(a.trace.ranks[r].size(), b.trace.ranks[r].size()) << what << " rank " << r;
    for (std::size_t k = 0; k < a.trace.ranks[r].size(); ++k) {
      const TraceEvent& e = a.trace.ranks[r][k];
      const TraceEvent& f = b.trace.ranks[r][k];
      EXPECT_TRUE(e.op == f.op && e.peer == f.peer && e.bytes == f.bytes && e.hash == f.hash &&
                  a.trace.header.groups[e.group] == b.trace.header.groups[f.group])
          << what << " rank " << r << " event " << k;
    }
  }
}

//! The seed's hybrid step gives bit-identical losses, outputs, gradients and per-rank
//! operation sequences under every policy, with one or two threads, and in eager mode, on
//! the kernels of every instruction set this machine runs.
TEST(ParallelStepDeterminismTest, BitwiseAcrossPoliciesAndThreads) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  const Problem<float> problem = make_problem<float>(ModelShape{}, 2);
  for (const kernels::Isa isa : kernels::available_isas()) {
    const testing::ScopedIsa scoped(isa);
    const std::string on = std::string(" on ") + std::string(kernels::to_string(isa));
    const auto base = run_job<float>(config, problem);
    ASSERT_TRUE(testing::run_ok(base.report)) << on;
    const JobOptions variants[] = {{.policy = "random:7", .threads = 1},
                                   {.policy = "pct:11:3", .threads = 2},
                                   {.policy = "rank-order", .threads = 2},
                                   {.policy = "random:1", .threads = 2, .send_mode = "eager"}};
    for (const JobOptions& job : variants) {
      const std::string what = job.policy + " threads " + std::to_string(job.threads) + on;
      const auto other = run_job<float>(config, problem, job);
      ASSERT_TRUE(testing::run_ok(other.report)) << what;
      expect_bitwise_equal(base, other, what);
    }
  }
}

//! Collective algorithms that really send messages (ring, recursive doubling) still give
//! gradients within tolerance of the dense reference; their traffic is point-to-point.
TEST(ParallelStepDeterminismTest, MessageAlgorithmsStayWithinTolerance) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  const Problem<double> problem = make_problem<double>(kSmall, 2);
  const DenseReference<double> reference = compute_dense_reference(problem);
  for (const Algorithm algorithm : {Algorithm::ring, Algorithm::recursive_doubling}) {
    const auto run = run_job<double>(config, problem, {.algorithm = algorithm});
    ASSERT_TRUE(testing::run_ok(run.report)) << to_string(algorithm);
    for (const RankResult<double>& result : run.results) {
      EXPECT_TRUE(check_rank(result, config, reference).ok(relative_tolerance<double>()))
          << to_string(algorithm) << " rank " << result.rank;
    }
  }
}

//! Shapes whose matrix products once put 2 x 128 KiB of Eigen's packed blocks on a rank's
//! 256 KiB fiber stack (the process died of SIGSEGV) run at the default stack size and
//! match the dense reference: the model's Eigen temporaries come from the heap.
TEST(ParallelStepDeterminismTest, LargeShapesRunOnTheDefaultStack) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  struct Case {
    ModelShape shape;
    StepOptions step;
  };
  const Case cases[] = {
      {{.batch = 8, .seq = 64, .hidden = 128, .inter = 512, .layers = 4}, {}},
      {{.batch = 8, .seq = 16, .hidden = 256, .inter = 64, .layers = 4},
       {.schedule = ScheduleKind::one_f_one_b, .microbatches = 4}},
  };
  for (const Case& c : cases) {
    const std::string what = fmt::format("H{} I{} S{}", c.shape.hidden, c.shape.inter, c.shape.seq);
    const Problem<float> problem = make_problem<float>(c.shape, config.dp, 5);
    const auto run = run_job<float>(config, problem, {.step = c.step});
    ASSERT_TRUE(testing::run_ok(run.report)) << what;
    const DenseReference<float> reference = compute_dense_reference(problem);
    for (const RankResult<float>& result : run.results) {
      EXPECT_TRUE(check_rank(result, config, reference).ok(relative_tolerance<float>()))
          << what << " rank " << result.rank;
    }
  }
}

//! A problem with fewer replicas than DP, or a shape that does not split, fails the ranks
//! with a UsageError naming it.
TEST(ParallelStepDeterminismTest, BadProblemsFail) {
  const Problem<float> one_replica = make_problem<float>(kSmall, 1);
  auto run = run_job<float>({.dp = 2}, one_replica);
  EXPECT_EQ(run.report.status, RunStatus::rank_failed);
  EXPECT_THROW_MSG(run.report.rethrow_if_failed(), UsageError,
                   "rank 1 is DP replica 1, the problem has 1 replicas");
  run = run_job<float>({.pp = 3}, make_problem<float>(kSmall, 1));
  EXPECT_THROW_MSG(run.report.rethrow_if_failed(), UsageError, "L=4 is not divisible by PP=3");
}

}  // namespace
}  // namespace ranklab
