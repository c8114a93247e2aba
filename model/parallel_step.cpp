#include "model/parallel_step.hpp"

#include <fmt/format.h>

#include <span>

#include "model/data_parallel.hpp"
#include "model/tensor_parallel.hpp"
#include "traces/error.hpp"

namespace ranklab {

namespace {

template <typename Scalar>
void send_matrix(Communicator& group, const Matrix<Scalar>& m, int dst, int tag) {
  group.send(std::span<const Scalar>(m.data(), static_cast<std::size_t>(m.size())), dst, tag);
}

// Receives exactly rows x cols elements: a shorter message is a pipeline bug, named here.
template <typename Scalar>
void recv_matrix(Communicator& group, Matrix<Scalar>& m, Eigen::Index rows, Eigen::Index cols,
                 int src, int tag) {
  m.resize(rows, cols);
  const RecvStatus status =
      group.recv(std::span<Scalar>(m.data(), static_cast<std::size_t>(m.size())), src, tag);
  if (status.count != static_cast<std::size_t>(m.size())) {
    throw UsageError(fmt::format("{}: expected {} elements from group rank {} (tag {}), got {}",
                                 group.name(), m.size(), src, tag, status.count));
  }
}

}  // namespace

template <typename Scalar>
std::vector<LayerParams<Scalar>> shard_stage(LayerSpan<Scalar> full, const ParallelConfig& config,
                                             const Coords& coords) {
  const auto layers = static_cast<std::int64_t>(full.size());
  const StageLayers stage = stage_layers(layers, config.pp, coords.p);
  std::vector<LayerParams<Scalar>> shards;
  for (std::int64_t l = stage.first; l < stage.end; ++l) {
    shards.push_back(shard_layer(full[static_cast<std::size_t>(l)], coords.t, config.tp));
  }
  return shards;
}

template <typename Scalar>
void parallel_step(ParallelLayout& layout, LayerSpan<Scalar> shards, ConstMatrixRef<Scalar> inputs,
                   ConstMatrixRef<Scalar> targets, StepState<Scalar>& state,
                   RankResult<Scalar>& out) {
  Communicator& pp = layout.pipeline_parallel();
  const StackHooks<Scalar> tp_regions = tensor_parallel_hooks<Scalar>(layout.tensor_parallel());
  const Eigen::Index rows = inputs.rows();
  const Eigen::Index hidden = inputs.cols();
  const bool first = layout.is_first_stage();
  const bool last = layout.is_last_stage();

  // Forward: the stage input, then the TP-sharded layers.
  if (!first) {
    recv_matrix(pp, state.received, rows, hidden, layout.previous_stage(), kActivationTag);
  }
  const Matrix<Scalar>& output = dense_forward<Scalar>(
      shards, first ? inputs : ConstMatrixRef<Scalar>(state.received), state.cache, tp_regions);
  out.output = output;

  // The gradient of the stage output: from the next stage, or from the loss.
  if (!last) {
    send_matrix(pp, output, layout.next_stage(), kActivationTag);
    recv_matrix(pp, state.output_grad, rows, hidden, layout.next_stage(), kGradientTag);
    out.loss.reset();
  } else {
    out.loss = mse_loss<Scalar>(output, targets);
    mse_loss_grad<Scalar>(output, targets, state.output_grad);
  }

  // Backward; stage 0's data needs no gradient, so its first layer computes (and reduces)
  // no input gradient, as in the reference where the inputs do not require grad.
  Matrix<Scalar>* input_grad = first ? nullptr : &state.input_grad;
  dense_backward<Scalar>(shards, state.cache, state.output_grad, out.grads, input_grad,
                         GradMode::overwrite, tp_regions);
  if (!first) send_matrix(pp, state.input_grad, layout.previous_stage(), kGradientTag);

  average_gradients(layout.data_parallel(), out.grads);
}

template <typename Scalar>
RankResult<Scalar> run_parallel_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem) {
  config.validate(problem.shape);
  ParallelLayout layout(world, config);
  const Coords& c = layout.coords();
  if (c.d >= problem.replicas()) {
    throw UsageError(fmt::format("rank {} is DP replica {}, the problem has {} replicas",
                                 layout.rank(), c.d, problem.replicas()));
  }
  const std::vector<LayerParams<Scalar>> shards = shard_stage<Scalar>(problem.layers, config, c);
  RankResult<Scalar> out{.rank = layout.rank(),
                         .coords = c,
                         .stage = stage_layers(problem.shape.layers, config.pp, c.p)};
  StepState<Scalar> state;
  const auto d = static_cast<std::size_t>(c.d);
  parallel_step<Scalar>(layout, shards, problem.inputs[d], problem.targets[d], state, out);
  return out;
}

#define RANKLAB_INSTANTIATE_STEP(Scalar)                                                          \
  template std::vector<LayerParams<Scalar>> shard_stage<Scalar>(                                  \
      LayerSpan<Scalar>, const ParallelConfig&, const Coords&);                                   \
  template void parallel_step<Scalar>(ParallelLayout&, LayerSpan<Scalar>, ConstMatrixRef<Scalar>, \
                                      ConstMatrixRef<Scalar>, StepState<Scalar>&,                 \
                                      RankResult<Scalar>&);                                       \
  template RankResult<Scalar> run_parallel_rank<Scalar>(Communicator&, const ParallelConfig&,     \
                                                        const Problem<Scalar>&);

RANKLAB_INSTANTIATE_STEP(float)
RANKLAB_INSTANTIATE_STEP(double)

#undef RANKLAB_INSTANTIATE_STEP

}  // namespace ranklab
