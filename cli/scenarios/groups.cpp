// Process-group bugs: collectives on two groups in opposite orders, a TP rank that skips a
// barrier, and an all_reduce on the pipeline group where the tensor-parallel one was meant.
#include <fmt/format.h>

#include "cli/scenarios/catalogue.hpp"
#include "model/parallel_step.hpp"

namespace ranklab::cli {
namespace {

// TP2 DP2: every rank averages its gradient over DP and sums its loss over the world for
// logging. The bug: replica 1 logs first ("to overlap the logging"), so rank 0 waits in
// dp[0,2] for rank 2 while rank 2 waits in world for rank 0.
auto opposite_group_order(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 2, .pp = 1, .dp = 2});
    Communicator& dp = layout.data_parallel();
    const int d = layout.coords().d;
    std::vector<float> grad(params.count, static_cast<float>(d + 1));
    float loss = static_cast<float>(d + 1);
    const auto average_gradients = [&] {
      dp.all_reduce(std::span(grad), {.op = ReduceOp::avg});
    };
    const auto log_loss = [&] { world.all_reduce(std::span(&loss, 1), {.op = ReduceOp::sum}); };
    if (buggy && d == 1) {
      log_loss();
      average_gradients();
    } else {
      average_gradients();
      log_loss();
    }
    expect_all(grad, 1.5f, world.rank(), "the averaged gradient");
    expect_all({loss}, 6.0f, world.rank(), "the logged loss");
    if (world.rank() == 0) out.say(0, "gradients averaged over dp, loss summed over world: ok");
  };
}

// TP2 DP2: global rank 0 saves a checkpoint and waits for its TP partner at a barrier; the
// bug puts the barrier inside `if (rank == 0)`, so rank 1 goes on to the next layer's
// all_reduce while rank 0 is in the barrier.
auto tp_skip_barrier(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 2, .pp = 1, .dp = 2});
    Communicator& tp = layout.tensor_parallel();
    std::vector<float> x(params.count, 0.0f);
    toy_layer(tp, x);
    if (world.rank() == 0) {
      out.say(0, "rank 0: checkpoint saved after layer 0");
      if (buggy) tp.barrier();
    }
    if (!buggy) tp.barrier();
    toy_layer(tp, x);
    expect_all(x, 2.0f, world.rank(), "the output of layer 1");
  };
}

// TP2 PP2: stage 0's row-parallel layer reduces its partial sums over the pipeline group,
// where the tensor-parallel group was meant; stage 1 meanwhile waits in recv on that same
// pipeline group for stage 0's activations.
auto wrong_group(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 2, .pp = 2, .dp = 1});
    Communicator& tp = layout.tensor_parallel();
    Communicator& pp = layout.pipeline_parallel();
    std::vector<float> x(params.count, 0.0f);
    if (layout.is_first_stage()) {
      for (float& v : x) v = (v + 1.0f) / static_cast<float>(tp.size());
      (buggy ? pp : tp).all_reduce(std::span(x), {.op = ReduceOp::sum});
      pp.send(std::span<const float>(x), layout.next_stage(), kActivationTag);
    } else {
      pp.recv(std::span(x), layout.previous_stage(), kActivationTag);
      toy_layer(tp, x);
      expect_all(x, 2.0f, world.rank(), "stage 1's output");
    }
    if (world.rank() == world.size() - 1) out.say(world.rank(), "stage 1's output: ok");
  };
}

}  // namespace

std::vector<Scenario> group_scenarios() {
  std::vector<Scenario> out;
  add_bug_and_twin(
      out,
      {.name = "opposite-group-order",
       .summary = "TP2 DP2: replica 1 sums the loss over world before averaging gradients over "
                  "dp, the others after: order mismatch",
       .default_world = 4,
       .expect = {RunStatus::mismatch, CulpritKind::collective_order, {2, 3}}},
      {.name = "opposite-group-order-fixed", .summary = "the same order on every replica: passes"},
      opposite_group_order);
  add_bug_and_twin(
      out,
      {.name = "tp-skip-barrier",
       .summary = "TP2 DP2: the TP barrier sits inside `if (rank == 0)`, so rank 1 skips it: "
                  "mismatch, one call against one, both sides named",
       .default_world = 4,
       .expect = {RunStatus::mismatch, CulpritKind::collective_mismatch, {0, 1}}},
      {.name = "tp-skip-barrier-fixed", .summary = "every TP rank enters the barrier: passes"},
      tp_skip_barrier);
  add_bug_and_twin(
      out,
      {.name = "wrong-group",
       .summary = "TP2 PP2: stage 0 all_reduces its partial sums on the PP group instead of TP: "
                  "collective against point-to-point",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::collective_vs_p2p, {0}}},
      {.name = "wrong-group-fixed", .summary = "the all_reduce on the TP group: passes"},
      wrong_group);
  return out;
}

}  // namespace ranklab::cli
