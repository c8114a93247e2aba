// PipelineStep, the pipeline step that keeps its buffers from one step to the next: a step
// gives the bits of a fresh pipeline_step on the same data whatever ran before it (another
// replica's data, another step's gradients left in the result), on the seed's layout and
// on a micro-batched, interleaved, sequence-parallel schedule.
#include <gtest/gtest.h>

#include <vector>

#include "model/pipeline_step.hpp"
#include "model/problem.hpp"
#include "model/schedule_builders.hpp"
#include "tests/support/cluster_fixture.hpp"

namespace ranklab {
namespace {

template <typename Scalar>
bool same_bits(const RankResult<Scalar>& p, const RankResult<Scalar>& q) {
  if (p.output != q.output || p.loss != q.loss ||
      p.output_is_sequence_shard != q.output_is_sequence_shard ||
      p.grads.size() != q.grads.size()) {
    return false;
  }
  for (std::size_t l = 0; l < p.grads.size(); ++l) {
    if (p.grads[l].w1 != q.grads[l].w1 || p.grads[l].b1 != q.grads[l].b1 ||
        p.grads[l].w2 != q.grads[l].w2 || p.grads[l].b2 != q.grads[l].b2) {
      return false;
    }
  }
  return true;
}

// On every rank: a fresh pipeline_step on its replica's data, then one PipelineStep run
// on the other replica's data, then on its own, twice, into the same result. Each of the
// last two must be the fresh step's bits.
template <typename Scalar>
void expect_reuse_gives_fresh_bits(const ParallelConfig& config, const StepOptions& options,
                                   const ModelShape& shape) {
  const Problem<Scalar> problem = make_problem<Scalar>(shape, config.dp);
  ClusterOptions cluster;
  cluster.world_size = config.world_size();
  testing::expect_run_ok(cluster, [&](Communicator& world) {
    ParallelLayout layout(world, config);
    const Coords& c = layout.coords();
    const auto chunks = shard_stage<Scalar>(problem.layers, config, options.virtual_stages, c);
    const Schedule schedule = build_schedule(options.schedule_spec(config.pp));
    const auto mine = static_cast<std::size_t>(c.d);
    const std::size_t other = (mine + 1) % problem.inputs.size();
    RankResult<Scalar> fresh;
    pipeline_step<Scalar>(layout, schedule, options.tp_comm, shape.seq, chunks,
                          problem.inputs[mine], problem.targets[mine], fresh);

    PipelineStep<Scalar> step(layout, schedule, options.tp_comm, shape.seq, chunks);
    RankResult<Scalar> out;
    step(problem.inputs[other], problem.targets[other], out);
    for (int again = 0; again < 2; ++again) {
      step(problem.inputs[mine], problem.targets[mine], out);
      EXPECT_TRUE(same_bits(out, fresh)) << "rank " << world.rank() << ", reused step " << again;
    }
  });
}

//! The seed's step (TP2 PP2 DP2, its shape, float32): the one step_bench times.
TEST(PipelineReuseTest, SeedStepFloat32) {
  expect_reuse_gives_fresh_bits<float>({.tp = 2, .pp = 2, .dp = 2}, StepOptions{}, ModelShape{});
}

//! Interleaved 1F1B with micro-batches and two chunks a stage, sequence-parallel TP regions:
//! every slot buffer, the chunks' gradients and the gathers are reused.
TEST(PipelineReuseTest, InterleavedSequenceParallelFloat64) {
  const ModelShape shape{.batch = 8, .seq = 2, .hidden = 4, .inter = 8, .layers = 8};
  expect_reuse_gives_fresh_bits<double>({.tp = 2, .pp = 2, .dp = 2},
                                        {.schedule = ScheduleKind::interleaved,
                                         .microbatches = 4,
                                         .virtual_stages = 2,
                                         .tp_comm = TpComm::sequence_parallel},
                                        shape);
}

}  // namespace
}  // namespace ranklab
