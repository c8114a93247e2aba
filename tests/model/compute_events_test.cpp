// The training step's compute events sit where the work happens (issue 14 §2): each
// layer's forward or backward is recorded just before the TP collective that reduces its
// matmuls' result, and after the SP all_gather that brings its input, so a timeline shows
// compute, then communication, layer by layer.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>

#include "model/pipeline_step.hpp"
#include "tests/model/model_test_support.hpp"
#include "tests/model/parallel_test_support.hpp"

namespace ranklab {
namespace {

// 4 layers per stage at PP 2, so a chunk's layers are distinguishable.
const ModelShape kShape{.batch = 4, .seq = 2, .hidden = 4, .inter = 8, .layers = 8};

// What a TP or SP collective's label names: "TP all_reduce of layer 2 forward, micro-batch 1".
struct LayerCall {
  bool gather = false;
  int layer = 0;
  std::string pass;
  int microbatch = 0;
};

std::optional<LayerCall> layer_call(const std::string& label) {
  static const std::regex pattern(
      R"((TP all_reduce|SP reduce_scatter|SP all_gather) of layer (\d+) (forward|backward), micro-batch (\d+))");
  std::smatch m;
  if (!std::regex_match(label, m, pattern)) return std::nullopt;
  return LayerCall{.gather = m[1] == "SP all_gather",
                   .layer = std::stoi(m[2]),
                   .pass = m[3],
                   .microbatch = std::stoi(m[4])};
}

bool same_pass(const ComputeItem& item, const LayerCall& call) {
  return item.layer == call.layer && item.label == call.pass && item.microbatch == call.microbatch;
}

struct ComputeCase {
  ScheduleKind kind;
  int microbatches;
  int virtual_stages;
  TpComm tp_comm;
};

class ComputeEventsTest : public ::testing::TestWithParam<ComputeCase> {};

//! On every rank of a TP2 x PP2 run, the compute done just before each TP reduction (an
//! all_reduce, or SP's reduce_scatter) ends with that layer's pass for that micro-batch, and
//! no SP all_gather comes after the compute of the layer pass it feeds: every layer pass is
//! recorded once, where its matmuls run.
TEST_P(ComputeEventsTest, EachLayerPassPrecedesItsCollective) {
  const ComputeCase c = GetParam();
  const ParallelConfig config{.tp = 2, .pp = 2};
  const Problem<double> problem = make_problem<double>(kShape, 1, 3);
  const auto run = testing::run_job<double>(
      config, problem,
      {.step = {.schedule = c.kind,
                .microbatches = c.microbatches,
                .virtual_stages = c.virtual_stages,
                .tp_comm = c.tp_comm}});
  ASSERT_TRUE(testing::run_ok(run.report));
  for (std::size_t rank = 0; rank < run.trace.ranks.size(); ++rank) {
    int reductions = 0;
    int items = 0;
    for (const TraceEvent& e : run.trace.ranks[rank]) {
      items += static_cast<int>(e.compute.items.size() + e.compute_after.items.size());
      const std::optional<LayerCall> call = layer_call(e.site->label);
      if (!call) continue;
      const std::string where = fmt::format("rank {}, op {} ({})", rank, e.rank_seq, e.site->label);
      const std::vector<ComputeItem>& before = e.compute.items;
      if (call->gather) {
        for (const ComputeItem& item : before) EXPECT_FALSE(same_pass(item, *call)) << where;
        continue;
      }
      ++reductions;
      ASSERT_FALSE(before.empty()) << where << ": no compute before it";
      EXPECT_TRUE(same_pass(before.back(), *call))
          << where << ": the compute just before it is layer " << before.back().layer << " "
          << before.back().label << " of micro-batch " << before.back().microbatch;
    }
    EXPECT_GT(reductions, 0) << "rank " << rank;
    // 4 layers, forward and backward, of every micro-batch (through every chunk).
    EXPECT_EQ(items, 2 * 4 * c.microbatches) << "rank " << rank;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, ComputeEventsTest,
    ::testing::Values(ComputeCase{ScheduleKind::seed, 1, 1, TpComm::all_reduce},
                    ComputeCase{ScheduleKind::one_f_one_b, 2, 1, TpComm::all_reduce},
                    ComputeCase{ScheduleKind::interleaved, 2, 2, TpComm::all_reduce},
                    ComputeCase{ScheduleKind::one_f_one_b, 2, 1, TpComm::sequence_parallel},
                    ComputeCase{ScheduleKind::interleaved, 2, 2, TpComm::sequence_parallel}),
    [](const auto& param_info) {
      const ComputeCase& c = param_info.param;
      return fmt::format("{}_m{}_v{}{}",
                         c.kind == ScheduleKind::one_f_one_b ? "onefoneb"
                                                             : std::string(to_string(c.kind)),
                         c.microbatches, c.virtual_stages,
                         c.tp_comm == TpComm::sequence_parallel ? "_sp" : "");
    });

}  // namespace
}  // namespace ranklab
