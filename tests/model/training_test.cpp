// Many training steps (model/training.hpp): on every layout and schedule, each rank's loss,
// output, gradients and SGD-updated shards match the dense run's same step
// (model/dense_training.hpp) at every one of N steps, the loss goes down, and where the
// single step is bitwise equal to the dense one (PP and DP alone), N steps stay bitwise.
#include "model/training.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <mutex>
#include <ostream>
#include <stdexcept>

#include "model/dense_training.hpp"
#include "tests/model/parallel_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

constexpr int kSteps = 5;
constexpr double kLr = 0.05;

struct TrainingParam {
  std::string name;
  ParallelConfig config;
  StepOptions step;
  bool bitwise = false;  ///< the single step is the dense one bit for bit
  friend void PrintTo(const TrainingParam& p, std::ostream* os) { *os << p.name; }
};

std::vector<TrainingParam> layouts() {
  const StepOptions seed;
  return {
      {"tp4", {.tp = 4, .pp = 1, .dp = 1}, seed},
      {"pp4", {.tp = 1, .pp = 4, .dp = 1}, seed, true},
      {"dp2", {.tp = 1, .pp = 1, .dp = 2}, seed, true},
      {"dp3", {.tp = 1, .pp = 1, .dp = 3}, seed},
      {"hybrid", {.tp = 2, .pp = 2, .dp = 2}, seed},
      {"hybrid_megatron", {.tp = 2, .pp = 2, .dp = 2, .order = RankOrder::tp_dp_pp}, seed},
      {"onefoneb_m4", {.tp = 2, .pp = 2, .dp = 2},
       {.schedule = ScheduleKind::one_f_one_b, .microbatches = 4}},
      {"interleaved_m4_v2", {.tp = 2, .pp = 2, .dp = 2},
       {.schedule = ScheduleKind::interleaved, .microbatches = 4, .virtual_stages = 2}},
      {"gpipe_sp", {.tp = 2, .pp = 2, .dp = 2},
       {.schedule = ScheduleKind::gpipe, .microbatches = 2, .tp_comm = TpComm::sequence_parallel}},
  };
}

/// Every rank's check of every step, [step][rank], and its losses.
template <typename Scalar>
struct TrainingRun {
  std::vector<std::vector<RankCheck>> checks;
  std::vector<std::vector<double>> losses;  ///< [step]: the replicas' losses, any order
  std::vector<double> dense_losses;         ///< [step]: the dense run's, mean over replicas
  RunReport report;
};

template <typename Scalar>
TrainingRun<Scalar> train(const TrainingParam& p, const ModelShape& shape, int steps) {
  const Problem<Scalar> problem = make_problem<Scalar>(shape, p.config.dp, 3);
  DenseTrajectory<Scalar> dense(problem, kLr, p.config.world_size());
  TrainingRun<Scalar> out;
  out.checks.assign(static_cast<std::size_t>(steps),
                    std::vector<RankCheck>(static_cast<std::size_t>(p.config.world_size())));
  out.losses.resize(static_cast<std::size_t>(steps));
  out.dense_losses.resize(static_cast<std::size_t>(steps));
  std::mutex mutex;  // the losses are shared between ranks (threads: 1, but say so)
  ClusterOptions options;
  options.world_size = p.config.world_size();
  options.timeout = std::chrono::milliseconds(20'000);
  out.report = testing::run_ranks(options, [&](Communicator& world) {
    const StepObserver<Scalar> observe = [&](int step, const RankResult<Scalar>& result,
                                             const std::vector<LayerParams<Scalar>>& updated) {
      const auto reference = dense.at(step);
      RankCheck check = check_rank(result, p.config, reference->reference);
      check.weights = check_updated_weights(updated, result, p.config, reference->updated);
      const auto s = static_cast<std::size_t>(step);
      out.checks[s][static_cast<std::size_t>(result.rank)] = check;
      const std::lock_guard lock(mutex);
      if (result.loss && result.coords.t == 0) {
        out.losses[s].push_back(static_cast<double>(*result.loss));
      }
      double sum = 0.0;
      for (const auto& replica : reference->reference.result.replicas) sum += replica.loss;
      out.dense_losses[s] = sum / static_cast<double>(reference->reference.result.replicas.size());
    };
    run_training_rank<Scalar>(world, p.config, problem, p.step,
                              {.steps = steps, .lr = kLr}, observe);
  });
  return out;
}

class TrainingTest : public ::testing::TestWithParam<TrainingParam> {};

//! The seed's shape in float32: every rank within tolerance of the dense run at every step
//! (updated weights included), and the loss going down step after step.
TEST_P(TrainingTest, EveryStepMatchesTheDenseRunAndTheLossFalls) {
  const TrainingParam& p = GetParam();
  ModelShape shape;  // B8 S16 H32 I64 L4
  const auto run = train<float>(p, shape, kSteps);
  ASSERT_TRUE(testing::run_ok(run.report));
  for (int step = 0; step < kSteps; ++step) {
    for (const RankCheck& check : run.checks[static_cast<std::size_t>(step)]) {
      ASSERT_TRUE(check.weights.has_value());
      EXPECT_TRUE(check.weights->compared);
      EXPECT_TRUE(check.ok(relative_tolerance<float>()))
          << "step " << step + 1 << ", rank " << check.rank << ": max relative error "
          << check.max_relative();
    }
    ASSERT_EQ(run.losses[static_cast<std::size_t>(step)].size(),
              static_cast<std::size_t>(p.config.dp));
    if (step > 0) {
      EXPECT_LT(run.dense_losses[static_cast<std::size_t>(step)],
                run.dense_losses[static_cast<std::size_t>(step) - 1])
          << "step " << step + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, TrainingTest, ::testing::ValuesIn(layouts()),
                         [](const auto& param_info) { return param_info.param.name; });

std::vector<TrainingParam> bitwise_layouts() {
  std::vector<TrainingParam> out;
  for (const TrainingParam& p : layouts()) {
    if (p.bitwise) out.push_back(p);
  }
  return out;
}

class BitwiseTrainingTest : public ::testing::TestWithParam<TrainingParam> {};

//! Where one step is the dense step bit for bit (PP alone, DP of two), so are N steps:
//! every loss, output, gradient and updated weight, float64.
TEST_P(BitwiseTrainingTest, StaysBitwise) {
  const TrainingParam& p = GetParam();
  const ModelShape shape{.batch = 4, .seq = 2, .hidden = 8, .inter = 16, .layers = 4};
  const auto run = train<double>(p, shape, kSteps);
  ASSERT_TRUE(testing::run_ok(run.report));
  for (const auto& step : run.checks) {
    for (const RankCheck& check : step) EXPECT_EQ(check.max_abs(), 0.0) << "rank " << check.rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BitwiseTrainingTest, ::testing::ValuesIn(bitwise_layouts()),
                         [](const auto& param_info) { return param_info.param.name; });

//! One step without a learning rate is the seed's step: run_parallel_rank's result.
TEST(TrainingLoopTest, OneStepWithoutUpdateIsTheSeedStep) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  const Problem<double> problem = make_problem<double>(ModelShape{}, 2, 1);
  const auto seed = testing::run_job<double>(config, problem);
  std::vector<RankResult<double>> loop(8);
  int observed = 0;
  ClusterOptions options;
  options.world_size = 8;
  ASSERT_TRUE(testing::run_ok(testing::run_ranks(options, [&](Communicator& world) {
    loop[static_cast<std::size_t>(world.rank())] = run_training_rank<double>(
        world, config, problem, {}, {},
        [&](int, const RankResult<double>&, const std::vector<LayerParams<double>>& updated) {
          EXPECT_TRUE(updated.empty());  // nothing was updated
          ++observed;
        });
  })));
  EXPECT_EQ(observed, 8);
  for (std::size_t r = 0; r < loop.size(); ++r) {
    EXPECT_EQ(loop[r].output, seed.results[r].output);
    ASSERT_EQ(loop[r].grads.size(), seed.results[r].grads.size());
    for (std::size_t l = 0; l < loop[r].grads.size(); ++l) {
      EXPECT_EQ(loop[r].grads[l].w1, seed.results[r].grads[l].w1);
    }
  }
}

//! The pass observer (progress) sees every compute pass of every step, and only those: an
//! interleaved stage runs each of its M micro-batches forward and backward through each of
//! its V chunks, 2·M·V passes a step, all of them before the step's own observer.
TEST(TrainingLoopTest, EveryComputePassIsObserved) {
  constexpr int kMicrobatches = 4, kChunks = 2, kTrainingSteps = 3;
  constexpr int kPassesPerStep = 2 * kMicrobatches * kChunks;
  const ParallelConfig config{.tp = 1, .pp = 2, .dp = 1};
  const StepOptions step{.schedule = ScheduleKind::interleaved,
                         .microbatches = kMicrobatches,
                         .virtual_stages = kChunks};
  const Problem<double> problem = make_problem<double>(ModelShape{}, 1, 1);
  std::vector<int> passes(2, 0);
  std::vector<std::vector<int>> at_step_end(2);
  ClusterOptions options;
  options.world_size = 2;
  ASSERT_TRUE(testing::run_ok(testing::run_ranks(options, [&](Communicator& world) {
    const auto r = static_cast<std::size_t>(world.rank());
    run_training_rank<double>(
        world, config, problem, step, {.steps = kTrainingSteps, .lr = kLr},
        [&](int, const RankResult<double>&, const std::vector<LayerParams<double>>&) {
          at_step_end[r].push_back(passes[r]);
        },
        [&passes, r] { ++passes[r]; });
  })));
  for (std::size_t r = 0; r < passes.size(); ++r) {
    EXPECT_EQ(passes[r], kPassesPerStep * kTrainingSteps) << "rank " << r;
    EXPECT_EQ(at_step_end[r], (std::vector<int>{kPassesPerStep, 2 * kPassesPerStep,
                                                3 * kPassesPerStep}))
        << "rank " << r;
  }
}

//! Bad input: no steps, mismatched SGD sizes, a step asked for once too often.
TEST(TrainingLoopTest, BadInputIsRefused) {
  std::vector<float> params(3);
  const std::vector<float> grads(2);
  EXPECT_THROW(sgd_update<float>(params, grads, 0.1f), UsageError);

  const Problem<float> problem = make_problem<float>(ModelShape{.layers = 1}, 1);
  ClusterOptions options;
  options.world_size = 1;
  const RunReport report = testing::run_ranks(options, [&](Communicator& world) {
    run_training_rank<float>(world, {.tp = 1, .pp = 1, .dp = 1}, problem, {}, {.steps = 0});
  });
  EXPECT_NE(report.status, RunStatus::ok);
  EXPECT_NE(report.summary.find("0 steps"), std::string::npos) << report.summary;

  DenseTrajectory<float> dense(problem, kLr, 1);
  EXPECT_EQ(dense.at(1)->weights.size(), 1U);  // steps 0 and 1 computed
  EXPECT_NO_THROW(dense.at(0));                // still held for its one consumer
  EXPECT_THROW(dense.at(0), std::logic_error);  // handed to every consumer: dropped
}

//! The dense run's SGD: weights - lr * the DP-averaged gradient, exactly.
TEST(TrainingLoopTest, DenseUpdateIsSgd) {
  const Problem<double> problem = make_problem<double>(ModelShape{.layers = 2}, 2, 4);
  DenseTrajectory<double> dense(problem, 0.5, 1);
  const auto step = dense.at(0);
  const auto& grads = step->reference.result.grads;
  for (std::size_t l = 0; l < problem.layers.size(); ++l) {
    const Matrix<double> expected = problem.layers[l].w1 - 0.5 * grads[l].w1;
    EXPECT_EQ(step->updated[l].w1, expected);
    EXPECT_EQ(step->weights[l].w1, problem.layers[l].w1);
  }
  EXPECT_EQ(dense.at(1)->weights[0].b2, step->updated[0].b2);  // the next step starts there
}

}  // namespace
}  // namespace ranklab
