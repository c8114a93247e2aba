// The parallel step against PyTorch: the golden sets tests/reference/torch_reference.py
// exports (the seed's TP2 PP2 DP2 run and the other shipped layouts), rank by rank, and runs
// saved as golden sets that load back.
#include <gtest/gtest.h>

#include <cstdio>

#include "model/run_golden.hpp"
#include "tests/model/model_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"

namespace ranklab {
namespace {

using testing::golden_dir;
using testing::run_job;
using testing::TempDir;

template <typename Scalar>
void expect_hybrid_matches_pytorch(RankOrder order,
                                   const std::filesystem::path& dir = golden_dir()) {
  const GoldenSet<Scalar> golden = load_golden<Scalar>(dir);
  const GoldenConfig& g = golden.config;
  const ParallelConfig config{.tp = g.tp, .pp = g.pp, .dp = g.dp, .order = order};
  const Problem<Scalar> problem = problem_from_golden(golden);
  const auto run = run_job<Scalar>(config, problem, {.policy = "random:2", .threads = 2});
  ASSERT_TRUE(testing::run_ok(run.report));
  ASSERT_EQ(golden.hybrid_grads.size(), run.results.size());

  const double tolerance = relative_tolerance<Scalar>();
  double worst = 0.0;
  for (const RankResult<Scalar>& result : run.results) {
    const std::optional<ErrorStat> error = compare_rank_with_golden(result, golden);
    ASSERT_TRUE(error.has_value()) << "rank " << result.rank;
    EXPECT_TRUE(error->within(tolerance))
        << "rank " << result.rank << ": relative error " << error->relative();
    worst = std::max(worst, error->relative());
    if (result.loss) {
      const Scalar expected = golden.hybrid_losses[static_cast<std::size_t>(result.coords.d)];
      EXPECT_NEAR(*result.loss, expected, tolerance * expected) << "rank " << result.rank;
    }
  }
  std::printf("[ golden   ] %s %s %s: largest relative gradient error vs PyTorch %.2e\n",
              dir.filename().c_str(), sizeof(Scalar) == 4 ? "float32" : "float64",
              std::string(to_string(order)).c_str(), worst);
}

//! float32 / float64, the seed's order: every rank's local gradients (after DP averaging)
//! and every replica's loss match PyTorch's hybrid run within the dtype's tolerance.
TEST(ParallelGoldenTest, HybridFloat32MatchesPyTorch) {
  expect_hybrid_matches_pytorch<float>(RankOrder::tp_pp_dp);
}
TEST(ParallelGoldenTest, HybridFloat64MatchesPyTorch) {
  expect_hybrid_matches_pytorch<double>(RankOrder::tp_pp_dp);
}

//! With Megatron's rank order the ranks move but each (d, p, t) computes the same shard:
//! compared by coordinates, the gradients still match PyTorch's.
TEST(ParallelGoldenTest, MegatronOrderMatchesByCoordinates) {
  expect_hybrid_matches_pytorch<double>(RankOrder::tp_dp_pp);
}

//! Every other shipped set (TP4 PP2 DP3 on 24 ranks; TP2, PP4 and DP4 alone; each its own
//! shape and seed) matches too, float32 in the seed's rank order and float64 in Megatron's:
//! nothing in the step is specific to the seed's configuration.
TEST(ParallelGoldenTest, EveryShippedLayoutMatchesPyTorch) {
  for (const std::filesystem::path& dir : testing::shipped_golden_dirs()) {
    if (dir == golden_dir()) continue;  // the tests above
    expect_hybrid_matches_pytorch<float>(RankOrder::tp_pp_dp, dir);
    expect_hybrid_matches_pytorch<double>(RankOrder::tp_dp_pp, dir);
  }
}

//! A run saved with make_golden_set + save_golden loads back and compares with itself
//! exactly, rank by rank, and its dense part with the dense reference; ranks are numbered
//! as the reference numbers them even for Megatron's order.
TEST(ParallelGoldenTest, SavedRunLoadsBack) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2, .order = RankOrder::tp_dp_pp};
  const Problem<double> problem =
      make_problem<double>({.batch = 2, .seq = 3, .hidden = 4, .inter = 8, .layers = 2}, 2, 4);
  const auto run = run_job<double>(config, problem);
  ASSERT_TRUE(testing::run_ok(run.report));
  const DenseReference<double> reference = compute_dense_reference(problem);
  TempDir dir("parallel_save");
  save_golden(dir.path(), make_golden_set(problem, config, reference, run.results));

  const GoldenSet<double> back = load_golden<double>(dir.path());
  EXPECT_EQ(back.config.seed, 4u);
  ASSERT_EQ(back.hybrid_grads.size(), 8u);
  for (std::size_t r = 0; r < 8; ++r) {
    const GoldenRankGrads<double>& g = back.hybrid_grads[r];
    EXPECT_EQ(g.rank, static_cast<int>(r));
    EXPECT_EQ(g.rank, g.d * 4 + g.p * 2 + g.t);  // the reference's mapping
  }
  for (const RankResult<double>& result : run.results) {
    const std::optional<ErrorStat> error = compare_rank_with_golden(result, back);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->max_abs, 0.0) << "rank " << result.rank;
  }
  const std::optional<DenseGoldenCheck> dense = compare_dense_with_golden(reference, back);
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(dense->grads.max_abs, 0.0);
  EXPECT_EQ(dense->loss.max_abs, 0.0);
  EXPECT_EQ(back.hybrid_losses[1], reference.result.replicas[1].loss);
}

//! A golden set of another layout has no rank to compare with: nullopt, not a false match.
TEST(ParallelGoldenTest, OtherLayoutsAreNotCompared) {
  const GoldenSet<double> golden = load_golden<double>(golden_dir());
  const ParallelConfig pp_only{.pp = 2};
  const Problem<double> problem =
      mode_problem(ParallelMode::pp, pp_only, problem_from_golden(golden));
  const auto run = run_job<double>(pp_only, problem);
  ASSERT_TRUE(testing::run_ok(run.report));
  for (const RankResult<double>& result : run.results) {
    EXPECT_FALSE(compare_rank_with_golden(result, golden).has_value());
  }
  EXPECT_FALSE(compare_dense_with_golden(compute_dense_reference(problem), golden).has_value());
}

}  // namespace
}  // namespace ranklab
