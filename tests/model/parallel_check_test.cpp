// The checks' own behaviour: error measures, a wrong gradient caught, and the modes.
#include "model/parallel_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/model/model_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

const ModelShape kTiny{.batch = 2, .seq = 2, .hidden = 4, .inter = 8, .layers = 2};

//! ErrorStat measures max |a - b| against max |b| over every tensor and scalar added, and
//! refuses tensors of different shapes.
TEST(ParallelCheckTest, ErrorStatMeasures) {
  ErrorStat stat;
  EXPECT_FALSE(stat.compared);
  EXPECT_TRUE(stat.within(1e-12));
  stat.add(Vector<double>::Constant(3, 1.0), Vector<double>::Constant(3, 1.5));
  stat.add_scalar(-4.0, -4.0);
  EXPECT_EQ(stat.max_abs, 0.5);
  EXPECT_EQ(stat.scale, 4.0);
  EXPECT_EQ(stat.relative(), 0.125);
  EXPECT_TRUE(stat.within(0.125));
  EXPECT_FALSE(stat.within(0.12));
  ErrorStat other;
  other.add_scalar(10.0, 0.0);
  stat.merge(other);
  EXPECT_EQ(stat.max_abs, 10.0);
  EXPECT_THROW_MSG(stat.add(Matrix<float>::Zero(2, 3), Matrix<float>::Zero(3, 2)), UsageError,
                   "comparing a [2, 3] tensor with a [3, 2] one");
}

//! A NaN or infinity where the reference has a number fails at every tolerance, and so does
//! a non-finite reference: std::max dropped a NaN, and a NaN run passed (issue 28 §4).
TEST(ParallelCheckTest, NonFiniteValuesFail) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Vector<double> computed = Vector<double>::Constant(3, 1.0);
  for (const double bad : {nan, inf, -inf}) {
    computed(1) = bad;
    ErrorStat tensor;
    tensor.add(computed, Vector<double>::Constant(3, 1.0));
    EXPECT_FALSE(tensor.within(1e30)) << bad;
    ErrorStat reference;
    reference.add(Vector<double>::Constant(3, 1.0), computed);
    EXPECT_FALSE(reference.within(1e30)) << bad;
    ErrorStat scalar;
    scalar.add_scalar(1.0, 1.0);
    scalar.add_scalar(bad, 2.0);
    scalar.add_scalar(1.0, 1.0);  // a later good value does not hide it
    EXPECT_FALSE(scalar.within(1e30)) << bad;
    ErrorStat merged;
    merged.add_scalar(1.0, 1.0);
    merged.merge(scalar);
    EXPECT_FALSE(merged.within(1e30)) << bad;
    RankCheck check;
    check.loss.add_scalar(1.0, 1.0);
    check.grads = scalar;
    EXPECT_FALSE(check.ok(1e30)) << bad;
    EXPECT_FALSE(check.max_abs() <= 1e30) << bad;
  }
  ErrorStat both_nan;
  both_nan.add_scalar(nan, nan);
  EXPECT_TRUE(std::isnan(both_nan.max_abs));
  EXPECT_FALSE(both_nan.within(1e30));
}

//! A gradient off by 1e-4 of its scale in one element fails the float32 check (the CLI
//! then exits 2); the untouched run passes, and the perturbed one a looser 1e-3 tolerance.
TEST(ParallelCheckTest, WrongGradientIsCaught) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 1};
  const Problem<float> problem = make_problem<float>(kTiny, 1);
  auto run = testing::run_job<float>(config, problem);
  ASSERT_TRUE(testing::run_ok(run.report));
  const DenseReference<float> reference = compute_dense_reference(problem);
  RankResult<float>& victim = run.results[3];
  EXPECT_TRUE(check_rank(victim, config, reference).ok(relative_tolerance<float>()));
  const float scale = victim.grads[0].w2.cwiseAbs().maxCoeff();
  victim.grads[0].w2(1, 2) += 1e-4f * scale;
  const RankCheck check = check_rank(victim, config, reference);
  EXPECT_FALSE(check.ok(relative_tolerance<float>()));
  EXPECT_GT(check.grads.relative(), 5e-5);
  EXPECT_TRUE(check.ok(1e-3));
}

//! The modes run what the seed's tests run: tp keeps layer 0 and replica 0 on TP ranks,
//! pp every layer and replica 0, dp every replica; names parse back.
TEST(ParallelCheckTest, ModesSelectTheSeedsRuns) {
  const ParallelConfig requested{.tp = 2, .pp = 2, .dp = 3};
  EXPECT_EQ(mode_config(ParallelMode::tp, requested), (ParallelConfig{.tp = 2}));
  EXPECT_EQ(mode_config(ParallelMode::pp, requested), (ParallelConfig{.pp = 2}));
  EXPECT_EQ(mode_config(ParallelMode::dp, requested), (ParallelConfig{.dp = 3}));
  EXPECT_EQ(mode_config(ParallelMode::hybrid, requested), requested);
  EXPECT_EQ(mode_shape(ParallelMode::tp, kTiny).layers, 1);
  EXPECT_EQ(mode_shape(ParallelMode::pp, kTiny).layers, 2);

  const Problem<double> full = make_problem<double>(kTiny, 3);
  const Problem<double> tp = mode_problem(ParallelMode::tp, {.tp = 2}, full);
  EXPECT_EQ(tp.layers.size(), 1u);
  EXPECT_EQ(tp.replicas(), 1);
  EXPECT_EQ(tp.layers[0].w1, full.layers[0].w1);
  EXPECT_EQ(mode_problem(ParallelMode::dp, {.dp = 3}, full).replicas(), 3);
  EXPECT_THROW_MSG(mode_problem(ParallelMode::dp, {.dp = 4}, full), UsageError,
                   "DP=4 needs 4 replicas of data, the problem has 3");
  for (const ParallelMode mode :
       {ParallelMode::tp, ParallelMode::pp, ParallelMode::dp, ParallelMode::hybrid}) {
    EXPECT_EQ(parse_parallel_mode(to_string(mode)), mode);
  }
  EXPECT_THROW_MSG(parse_parallel_mode("3d"), UsageError, "unknown mode '3d'");
}

}  // namespace
}  // namespace ranklab
