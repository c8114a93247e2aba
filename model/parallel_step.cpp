#include "model/parallel_step.hpp"

#include <fmt/format.h>

#include "model/training.hpp"
#include "traces/error.hpp"

namespace ranklab {

template <typename Scalar>
std::vector<std::vector<LayerParams<Scalar>>> shard_stage(LayerSpan<Scalar> full,
                                                          const ParallelConfig& config,
                                                          int virtual_stages,
                                                          const Coords& coords) {
  const auto layers = static_cast<std::int64_t>(full.size());
  std::vector<std::vector<LayerParams<Scalar>>> chunks;
  for (const StageLayers& chunk : stage_chunks(layers, config.pp, virtual_stages, coords.p)) {
    std::vector<LayerParams<Scalar>>& shards = chunks.emplace_back();
    for (std::int64_t l = chunk.first; l < chunk.end; ++l) {
      shards.push_back(shard_layer(full[static_cast<std::size_t>(l)], coords.t, config.tp));
    }
  }
  return chunks;
}

// One step, no update: the training loop's first step is the seed's step, call for call.
template <typename Scalar>
RankResult<Scalar> run_parallel_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem, const StepOptions& options) {
  return run_training_rank<Scalar>(world, config, problem, options, TrainingOptions{});
}

#define RANKLAB_INSTANTIATE_STEP(Scalar)                                      \
  template std::vector<std::vector<LayerParams<Scalar>>> shard_stage<Scalar>( \
      LayerSpan<Scalar>, const ParallelConfig&, int, const Coords&);          \
  template RankResult<Scalar> run_parallel_rank<Scalar>(                      \
      Communicator&, const ParallelConfig&, const Problem<Scalar>&, const StepOptions&);

RANKLAB_INSTANTIATE_STEP(float)
RANKLAB_INSTANTIATE_STEP(double)

#undef RANKLAB_INSTANTIATE_STEP

}  // namespace ranklab
