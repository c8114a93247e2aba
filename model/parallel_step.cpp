#include "model/parallel_step.hpp"

#include <fmt/format.h>

#include "model/device.hpp"
#include "model/pipeline_step.hpp"
#include "model/schedule_builders.hpp"
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

template <typename Scalar>
RankResult<Scalar> run_parallel_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem, const StepOptions& options) {
  config.validate(problem.shape);
  options.validate(config, problem.shape);
  ParallelLayout layout(world, config);
  const Coords& c = layout.coords();
  if (c.d >= problem.replicas()) {
    throw UsageError(fmt::format("rank {} is DP replica {}, the problem has {} replicas",
                                 layout.rank(), c.d, problem.replicas()));
  }
  const int v = options.virtual_stages;
  const auto chunks = shard_stage<Scalar>(problem.layers, config, v, c);
  RankResult<Scalar> out{.rank = layout.rank(),
                         .coords = c,
                         .layers = stage_layer_indices(problem.shape.layers, config.pp, v, c.p)};
  const Schedule schedule = build_schedule(options.schedule_spec(config.pp));
  const auto d = static_cast<std::size_t>(c.d);
  // The rank's device: its shards and its replica's data go there once; its output and
  // gradients come back once (what --save writes). On cpu nothing moves.
  const std::unique_ptr<ModelDevice<Scalar>> device = make_model_device<Scalar>(world.device());
  if (device->memory() == nullptr) {
    pipeline_step<Scalar>(layout, schedule, options.tp_comm, problem.shape.seq, chunks,
                          problem.inputs[d], problem.targets[d], out, *device);
    return out;
  }
  std::vector<std::vector<LayerParams<Scalar>>> device_chunks;
  for (const auto& chunk : chunks) {
    auto& layers = device_chunks.emplace_back();
    for (const LayerParams<Scalar>& layer : chunk) layers.push_back(upload(*device, layer));
  }
  const Matrix<Scalar> inputs = device->upload(problem.inputs[d]);
  const Matrix<Scalar> targets = device->upload(problem.targets[d]);
  pipeline_step<Scalar>(layout, schedule, options.tp_comm, problem.shape.seq, device_chunks,
                        inputs, targets, out, *device);
  out.output = device->download(std::move(out.output));
  for (LayerGrads<Scalar>& grads : out.grads) grads = download(*device, std::move(grads));
  return out;
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
