// Data-parallel bugs: gradients all_reduced in another parameter order on one replica, a
// rank that skips the loss all_reduce when its loss is NaN, a wildcard-receive race that
// changes a float sum, and a rank that dies inside an all_reduce.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/scenarios/catalogue.hpp"
#include "comm/errors.hpp"

namespace ranklab::cli {
namespace {

// TP2 DP2: each rank averages the gradients of two parameters (a weight of 2 x count and a
// bias of count elements) over DP. The bug: replica 1 walks its parameters in another order
// (built from a map, say), so the k-th all_reduce of a DP group has different sizes.
auto dp_param_order(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 2, .pp = 1, .dp = 2});
    Communicator& dp = layout.data_parallel();
    const auto g = static_cast<float>(layout.coords().d + 1);
    std::vector<float> weight(2 * params.count, g), bias(params.count, g);
    std::vector<std::vector<float>*> order = {&weight, &bias};
    if (buggy && layout.coords().d == 1) std::swap(order[0], order[1]);
    for (std::vector<float>* grad : order) dp.all_reduce(std::span(*grad), {.op = ReduceOp::avg});
    expect_all(weight, 1.5f, world.rank(), "the averaged weight gradient");
    expect_all(bias, 1.5f, world.rank(), "the averaged bias gradient");
    if (world.rank() == 0) out.say(0, "weight and bias gradients averaged over dp: ok");
  };
}

// TP2 DP2: replica 1's batch overflows to a NaN loss. The bug: its ranks skip the step
// (return) before the loss all_reduce, so replica 0 waits for them in dp. The fix: reduce
// the loss everywhere; NaN propagates, and every replica skips the update together.
auto nan_skip(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams&, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 2, .pp = 1, .dp = 2});
    Communicator& dp = layout.data_parallel();
    const int d = layout.coords().d;
    float loss = d == 1 ? std::numeric_limits<float>::quiet_NaN() : 0.25f;
    if (buggy && std::isnan(loss)) {
      out.say(world.rank(), fmt::format("rank {}: loss is NaN, skipping this step", world.rank()));
      return;
    }
    dp.all_reduce(std::span(&loss, 1), {.op = ReduceOp::avg});
    if (!std::isnan(loss)) {
      throw Error(fmt::format("rank {}: the averaged loss is {}, expected NaN", world.rank(), loss));
    }
    if (world.rank() == 0) out.say(0, "loss is NaN on some replica: every replica skips the update");
  };
}

// World 4: rank 0 sums the other ranks' partial losses (1e8, 1, -1e8) in float. The bug:
// it adds them in arrival order, receiving from any source, and float addition is not
// associative ((1e8 + 1) - 1e8 is 0, (1e8 - 1e8) + 1 is 1): the total depends on the
// schedule. The fix: receive from each rank in rank order.
auto wildcard_sum(bool buggy) {
  return [buggy](Communicator& world, const ScenarioParams&, ScenarioOutput& out) {
    const int me = world.rank();
    constexpr float kPartial[] = {0.0f, 1e8f, 1.0f, -1e8f};
    if (me != 0) {
      world.send(std::span(&kPartial[me % 4], 1), 0, /*tag=*/0);
      return;
    }
    float total = 0.0f;
    for (int i = 1; i < world.size(); ++i) {
      float partial = 0.0f;
      world.recv(std::span(&partial, 1), buggy ? kAnySource : i, /*tag=*/0);
      total += partial;
    }
    out.say(0, fmt::format("rank 0: total loss {} ({:a})", total, total));
  };
}

// DP4: two gradient buckets, each all_reduced over the world. The scenario's fault plan
// kills rank 2 as it posts the second (kill:2@1): every other rank must fail fast with a
// peer-aborted error, and the report must name rank 2 as the root cause.
auto allreduce_death(bool) {
  return [](Communicator& world, const ScenarioParams& params, ScenarioOutput& out) {
    ParallelLayout layout(world, {.tp = 1, .pp = 1, .dp = 4});
    Communicator& dp = layout.data_parallel();
    for (int bucket = 0; bucket < 2; ++bucket) {
      std::vector<float> grad(params.count, static_cast<float>(world.rank()));
      dp.all_reduce(std::span(grad), {.op = ReduceOp::sum});
      expect_all(grad, 6.0f, world.rank(), "the reduced gradient");
    }
    if (world.rank() == 0) out.say(0, "two gradient buckets all_reduced over dp: ok");
  };
}

}  // namespace

std::vector<Scenario> data_parallel_scenarios() {
  std::vector<Scenario> out;
  add_bug_and_twin(
      out,
      {.name = "dp-param-order",
       .summary = "TP2 DP2: replica 1 all_reduces the bias gradient before the weight's: "
                  "mismatch, sizes side by side",
       .default_world = 4,
       .expect = {RunStatus::mismatch, CulpritKind::collective_mismatch, {0, 1, 2, 3}}},
      {.name = "dp-param-order-fixed", .summary = "the same parameter order everywhere: passes"},
      dp_param_order);
  add_bug_and_twin(
      out,
      {.name = "nan-skip",
       .summary = "TP2 DP2: replica 1's loss is NaN and its ranks skip the loss all_reduce: "
                  "deadlock naming them",
       .default_world = 4,
       .expect = {RunStatus::deadlock, CulpritKind::missing_participant, {2}}},
      {.name = "nan-skip-fixed",
       .summary = "the loss all_reduced everywhere, the update skipped together: passes"},
      nan_skip);
  add_bug_and_twin(
      out,
      {.name = "wildcard-sum",
       .summary = "rank 0 adds partial losses in arrival order from any source: the float sum "
                  "depends on the schedule (found by explore)",
       .default_world = 4,
       .expect = {RunStatus::ok, CulpritKind::nondeterminism, {}, /*needs_exploration=*/true}},
      {.name = "wildcard-sum-fixed", .summary = "receiving in rank order: the same sum always"},
      wildcard_sum);
  add_bug_and_twin(
      out,
      {.name = "allreduce-death",
       .summary = "DP4: rank 2 dies inside the second gradient all_reduce (fault kill:2@1): "
                  "rank 2 the root cause",
       .default_world = 4,
       .faults = {"kill:2@1"},
       .expect = {RunStatus::rank_failed, CulpritKind::rank_failure, {2}}},
      {.name = "allreduce-death-fixed", .summary = "the same all_reduces on healthy ranks: passes"},
      allreduce_death);
  return out;
}

}  // namespace ranklab::cli
