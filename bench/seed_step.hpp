// One rank's part of the seed's TP2 x PP2 x DP2 training step, set up once and run as often
// as a benchmark asks: the same step on the emulator (step_bench) and on MPI processes
// (mpi_step_bench), so both time the same work.
#pragma once

#include <cstddef>
#include <utility>

#include "model/parallel_step.hpp"
#include "model/pipeline_step.hpp"
#include "model/problem.hpp"
#include "model/schedule_builders.hpp"

namespace ranklab::bench {

inline constexpr ParallelConfig kSeedLayout{.tp = 2, .pp = 2, .dp = 2};

class SeedStep {
 public:
  /// `world` (8 ranks) and `problem` must outlive the step.
  SeedStep(Communicator& world, const Problem<float>& problem)
      : problem_(problem),
        layout_(world, kSeedLayout),
        chunks_(shard_stage<float>(problem.layers, kSeedLayout, 1, layout_.coords())),
        schedule_(build_schedule(options_.schedule_spec(kSeedLayout.pp))),
        replica_(static_cast<std::size_t>(layout_.coords().d)),
        step_(layout_, schedule_, options_.tp_comm, problem.shape.seq, chunks_) {}

  void operator()() { step_(problem_.inputs[replica_], problem_.targets[replica_], out_); }

 private:
  const Problem<float>& problem_;
  const StepOptions options_;
  ParallelLayout layout_;
  decltype(shard_stage<float>(std::declval<const Problem<float>&>().layers, kSeedLayout, 1,
                              std::declval<const Coords&>())) chunks_;
  Schedule schedule_;
  std::size_t replica_;
  PipelineStep<float> step_;  // keeps its buffers from one step to the next, as training does
  RankResult<float> out_;
};

}  // namespace ranklab::bench
