// The pipeline executor: every schedule x PP {1,2,4} x M {1,2,4,8} x V {1,2} on hybrid
// TP x PP x DP layouts matches the dense reference under rendezvous sends, sends exactly the
// traffic its schedule implies, and gives the same bits as every other schedule with the
// same micro-batches (and, with one micro-batch, as the seed's step). Sequence-parallel TP
// gives the same bits again, with all_gather / reduce_scatter in place of all_reduce.
#include "model/pipeline_step.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <tuple>

#include "model/parallel_check.hpp"
#include "model/traffic.hpp"
#include "tests/model/model_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

using testing::JobOptions;
using testing::run_job;

// B = 8 splits into 8 micro-batches, L = 8 into PP·V = 8 chunks; the rest is tiny so that
// the ~250 runs below take a few seconds. float64, so the tolerance is 1e-12.
const ModelShape kShape{.batch = 8, .seq = 2, .hidden = 4, .inter = 8, .layers = 8};

struct PipelineParam {
  ScheduleKind kind = ScheduleKind::seed;
  ParallelConfig config;
  int microbatches = 1;
  int virtual_stages = 1;
  TpComm tp_comm = TpComm::all_reduce;

  StepOptions step() const {
    return {.schedule = kind,
            .microbatches = microbatches,
            .virtual_stages = virtual_stages,
            .tp_comm = tp_comm};
  }
  std::string name() const {
    return fmt::format(
        "{}_tp{}pp{}dp{}{}_m{}_v{}{}",
        kind == ScheduleKind::one_f_one_b ? "onefoneb" : std::string(to_string(kind)), config.tp,
        config.pp, config.dp, config.order == RankOrder::tp_dp_pp ? "_megatron" : "", microbatches,
        virtual_stages, tp_comm == TpComm::sequence_parallel ? "_sp" : "");
  }
  friend void PrintTo(const PipelineParam& p, std::ostream* os) { *os << p.name(); }
};

// Hybrid layouts per pipeline depth: TP2 x DP2 around PP (Megatron's rank order for PP2)
// and, with the all_reduce TP regions, TP1 x DP3 as well (DP not a power of two).
std::vector<ParallelConfig> layouts_for(int pp, TpComm comm) {
  std::vector<ParallelConfig> out = {
      {.tp = 2, .pp = pp, .dp = 2, .order = pp == 2 ? RankOrder::tp_dp_pp : RankOrder::tp_pp_dp}};
  if (comm == TpComm::all_reduce) out.push_back({.tp = 1, .pp = pp, .dp = 3});
  return out;
}

std::vector<PipelineParam> all_schedules(TpComm comm) {
  std::vector<PipelineParam> out;
  for (const int pp : {1, 2, 4}) {
    for (const ParallelConfig& config : layouts_for(pp, comm)) {
      out.push_back({ScheduleKind::seed, config, 1, 1, comm});
      for (const int m : {1, 2, 4, 8}) {
        out.push_back({ScheduleKind::gpipe, config, m, 1, comm});
        out.push_back({ScheduleKind::one_f_one_b, config, m, 1, comm});
        for (const int v : {1, 2}) out.push_back({ScheduleKind::interleaved, config, m, v, comm});
      }
    }
  }
  return out;
}

// The gradients of each global layer's shard in each replica, keyed by (d, t, layer):
// what must not depend on the schedule (nor on which stage holds the layer).
using LayerGradMap = std::map<std::tuple<int, int, std::int64_t>, const LayerGrads<double>*>;

LayerGradMap by_layer(const testing::JobRun<double>& run) {
  LayerGradMap out;
  for (const RankResult<double>& r : run.results) {
    for (std::size_t k = 0; k < r.layers.size(); ++k) {
      out[{r.coords.d, r.coords.t, r.layers[k]}] = &r.grads[k];
    }
  }
  return out;
}

::testing::AssertionResult bitwise_equal(const testing::JobRun<double>& a,
                                         const testing::JobRun<double>& b) {
  const LayerGradMap x = by_layer(a);
  const LayerGradMap y = by_layer(b);
  if (x.size() != y.size()) return ::testing::AssertionFailure() << "different layers held";
  for (const auto& [key, g] : x) {
    const LayerGrads<double>& h = *y.at(key);
    if (!(g->w1 == h.w1 && g->b1 == h.b1 && g->w2 == h.w2 && g->b2 == h.b2)) {
      return ::testing::AssertionFailure()
             << "replica " << std::get<0>(key) << " shard " << std::get<1>(key) << " layer "
             << std::get<2>(key) << " differs";
    }
  }
  // The loss of each replica, from each TP rank of its last stage.
  std::map<std::pair<int, int>, double> losses;
  for (const RankResult<double>& r : a.results) {
    if (r.loss) losses[{r.coords.d, r.coords.t}] = *r.loss;
  }
  for (const RankResult<double>& r : b.results) {
    if (r.loss && losses.at({r.coords.d, r.coords.t}) != *r.loss) {
      return ::testing::AssertionFailure() << "replica " << r.coords.d << " loss differs";
    }
  }
  return ::testing::AssertionSuccess();
}

class PipelineStepTest : public ::testing::TestWithParam<PipelineParam> {};

//! Under rendezvous sends every rank matches the dense reference (loss, stage output,
//! gradients), its traffic is exactly what its schedule implies, and its bits are those of
//! another schedule with the same micro-batches (the seed's step for M = 1).
TEST_P(PipelineStepTest, MatchesDenseAndOtherSchedules) {
  const PipelineParam& p = GetParam();
  const Problem<double> problem = make_problem<double>(kShape, p.config.dp, 5);
  const auto run = run_job<double>(p.config, problem, {.step = p.step()});
  ASSERT_TRUE(testing::run_ok(run.report));

  const DenseReference<double> reference = compute_dense_reference(problem);
  const std::vector<RankTraffic> traffic = count_traffic(run.trace);
  for (const RankResult<double>& result : run.results) {
    const RankCheck check = check_rank(result, p.config, reference);
    EXPECT_TRUE(check.ok(relative_tolerance<double>()))
        << "rank " << result.rank << ": max relative error " << check.max_relative();
    EXPECT_EQ(result.loss.has_value(), result.coords.p == p.config.pp - 1);
    EXPECT_EQ(traffic[static_cast<std::size_t>(result.rank)],
              expected_traffic(p.config, problem.shape, sizeof(double), result.rank, p.step()))
        << "rank " << result.rank;
  }

  // Another schedule with the same micro-batches: the seed's step for M = 1, else GPipe
  // (or 1F1B for GPipe itself).
  StepOptions other{.schedule = p.microbatches == 1             ? ScheduleKind::seed
                                : p.kind == ScheduleKind::gpipe ? ScheduleKind::one_f_one_b
                                                                : ScheduleKind::gpipe,
                    .microbatches = p.microbatches,
                    .tp_comm = p.tp_comm};
  const auto base = run_job<double>(p.config, problem, {.step = other});
  ASSERT_TRUE(testing::run_ok(base.report));
  EXPECT_TRUE(bitwise_equal(run, base)) << "against " << other.describe();
}

INSTANTIATE_TEST_SUITE_P(Schedules, PipelineStepTest,
                         ::testing::ValuesIn(all_schedules(TpComm::all_reduce)),
                         [](const auto& param_info) { return param_info.param.name(); });

// Sequence parallelism on every schedule of PP2 and a few of PP4.
std::vector<PipelineParam> sp_schedules() {
  std::vector<PipelineParam> out;
  for (const PipelineParam& p : all_schedules(TpComm::sequence_parallel)) {
    if (p.config.pp == 2 || (p.config.pp == 4 && p.microbatches == 4)) out.push_back(p);
  }
  return out;
}

class SequenceParallelTest : public ::testing::TestWithParam<PipelineParam> {};

//! `--tp-comm sp` matches the dense reference and the all_reduce variant bit for bit; its
//! TP traffic is all_gather and reduce_scatter only, its PP messages half the size.
TEST_P(SequenceParallelTest, SameBitsOtherTraffic) {
  const PipelineParam& p = GetParam();
  const Problem<double> problem = make_problem<double>(kShape, p.config.dp, 5);
  const auto run = run_job<double>(p.config, problem, {.step = p.step()});
  ASSERT_TRUE(testing::run_ok(run.report));
  const DenseReference<double> reference = compute_dense_reference(problem);
  for (const RankResult<double>& result : run.results) {
    EXPECT_TRUE(check_rank(result, p.config, reference).ok(relative_tolerance<double>()))
        << "rank " << result.rank;
    EXPECT_EQ(result.output_is_sequence_shard, result.coords.p < p.config.pp - 1);
  }
  PipelineParam all_reduce = p;
  all_reduce.tp_comm = TpComm::all_reduce;
  const auto base = run_job<double>(p.config, problem, {.step = all_reduce.step()});
  ASSERT_TRUE(testing::run_ok(base.report));
  EXPECT_TRUE(bitwise_equal(run, base));

  const KindTraffic tp = total_traffic(count_traffic(run.trace), GroupKind::tp);
  EXPECT_EQ(tp.all_reduce.count, 0u);
  EXPECT_GT(tp.all_gather.count, 0u);
  EXPECT_GT(tp.reduce_scatter.count, 0u);
  const KindTraffic pp = total_traffic(count_traffic(run.trace), GroupKind::pp);
  const KindTraffic pp_base = total_traffic(count_traffic(base.trace), GroupKind::pp);
  EXPECT_EQ(pp.send.count, pp_base.send.count);
  EXPECT_EQ(2 * pp.send.bytes, pp_base.send.bytes);  // TP = 2: a shard is half the rows
  const std::vector<RankTraffic> traffic = count_traffic(run.trace);
  for (const RankResult<double>& result : run.results) {
    EXPECT_EQ(traffic[static_cast<std::size_t>(result.rank)],
              expected_traffic(p.config, problem.shape, sizeof(double), result.rank, p.step()))
        << "rank " << result.rank;
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, SequenceParallelTest, ::testing::ValuesIn(sp_schedules()),
                         [](const auto& param_info) { return param_info.param.name(); });

//! Without TP the pipeline's sums are the dense model's sums in the same order: GPipe with
//! 4 micro-batches gives the bits of a dense run that accumulates the same 4 micro-batches.
TEST(PipelineStepBitwiseTest, MicrobatchedDenseReferenceBitForBit) {
  const ParallelConfig config{.pp = 4};
  const Problem<double> problem = make_problem<double>(kShape, 1, 9);
  for (const ScheduleKind kind :
       {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
    const auto run =
        run_job<double>(config, problem, {.step = {.schedule = kind, .microbatches = 4}});
    ASSERT_TRUE(testing::run_ok(run.report));
    // The dense model over the same micro-batches, gradients accumulated in order.
    const int m_count = 4;
    const std::int64_t rows = problem.inputs[0].rows() / m_count;
    const std::int64_t elements = problem.inputs[0].size();
    StackCache<double> cache;
    std::vector<LayerGrads<double>> grads;
    Matrix<double> dy;
    double loss = 0;
    for (int m = 0; m < m_count; ++m) {
      const auto x = problem.inputs[0].middleRows(m * rows, rows);
      const auto t = problem.targets[0].middleRows(m * rows, rows);
      const Matrix<double>& y = dense_forward<double>(problem.layers, x, cache);
      loss += mse_loss_part<double>(y, t, elements);
      mse_loss_grad_part<double>(y, t, dy, elements);
      dense_backward<double>(problem.layers, cache, dy, grads, nullptr,
                             m == 0 ? GradMode::overwrite : GradMode::accumulate);
    }
    for (const RankResult<double>& r : run.results) {
      for (std::size_t k = 0; k < r.layers.size(); ++k) {
        const LayerGrads<double>& want = grads[static_cast<std::size_t>(r.layers[k])];
        EXPECT_TRUE(r.grads[k].w1 == want.w1 && r.grads[k].b1 == want.b1 &&
                    r.grads[k].w2 == want.w2 && r.grads[k].b2 == want.b2)
            << to_string(kind) << " layer " << r.layers[k];
      }
      if (r.loss) {
        EXPECT_EQ(*r.loss, loss) << to_string(kind);
      }
    }
  }
}

//! On the seed's shape in float32, micro-batched schedules stay within the float32
//! tolerance, and give the same bits under any scheduler policy and thread count.
TEST(PipelineStepBitwiseTest, Float32SeedShapeAcrossPolicies) {
  const ParallelConfig config{.tp = 2, .pp = 2, .dp = 2};
  const Problem<float> problem = make_problem<float>(ModelShape{}, 2);
  const DenseReference<float> reference = compute_dense_reference(problem);
  for (const StepOptions step :
       {StepOptions{.schedule = ScheduleKind::one_f_one_b, .microbatches = 4},
        StepOptions{.schedule = ScheduleKind::interleaved,
        .microbatches = 8,
        .virtual_stages = 2,
        .tp_comm = TpComm::sequence_parallel}}) {
    const auto base = run_job<float>(config, problem, {.step = step});
    ASSERT_TRUE(testing::run_ok(base.report)) << step.describe();
    for (const RankResult<float>& r : base.results) {
      EXPECT_TRUE(check_rank(r, config, reference).ok(relative_tolerance<float>()))
          << step.describe() << " rank " << r.rank;
    }
    const auto other =
        run_job<float>(config, problem, {.policy = "random:3", .threads = 2, .step = step});
    ASSERT_TRUE(testing::run_ok(other.report)) << step.describe();
    for (std::size_t r = 0; r < base.results.size(); ++r) {
      EXPECT_EQ(base.results[r].loss, other.results[r].loss);
      ASSERT_EQ(base.results[r].grads.size(), other.results[r].grads.size());
      for (std::size_t l = 0; l < base.results[r].grads.size(); ++l) {
        EXPECT_TRUE(base.results[r].grads[l].w1 == other.results[r].grads[l].w1 &&
                    base.results[r].grads[l].w2 == other.results[r].grads[l].w2)
            << step.describe() << " rank " << r;
      }
    }
  }
}

//! Options that do not fit the problem fail every rank with the one-line UsageError.
TEST(PipelineStepBitwiseTest, BadOptionsFail) {
  const Problem<double> problem = make_problem<double>(kShape, 1);
  auto run = run_job<double>({.pp = 2}, problem,
                             {.step = {.schedule = ScheduleKind::gpipe, .microbatches = 3}});
  EXPECT_THROW_MSG(run.report.rethrow_if_failed(), UsageError,
                   "--microbatches 3 does not divide the batch B=8");
  run = run_job<double>({.tp = 4}, problem, {.step = {.tp_comm = TpComm::sequence_parallel}});
  EXPECT_THROW_MSG(run.report.rethrow_if_failed(), UsageError, "S=2 is not divisible by TP=4");
}

}  // namespace
}  // namespace ranklab
