#include "model/dense_model.hpp"

#include <fmt/format.h>

#include <source_location>

#include "traces/error.hpp"

namespace ranklab {

template <typename Scalar>
const Matrix<Scalar>& dense_forward(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> x,
                                    StackCache<Scalar>& cache, const StackHooks<Scalar>& hooks,
                                    const ModelDevice<Scalar>& device) {
  if (layers.empty()) throw UsageError("dense_forward: the stack has no layers");
  const std::size_t count = layers.size();
  cache.inputs.resize(count);
  cache.layers.resize(count);
  cache.inputs[0] = x;
  for (std::size_t l = 0; l < count; ++l) {
    // Layer l writes straight into the slot where backward will look for its output.
    Matrix<Scalar>& y = l + 1 < count ? cache.inputs[l + 1] : cache.output;
    if (hooks.enter_layer) hooks.enter_layer(l);
    device.layer_forward(layers[l], cache.inputs[l], cache.layers[l], y);
    if (hooks.reduce_output) hooks.reduce_output(y, std::source_location::current());
    device.add_output_bias(layers[l].b2, y);
    if (l + 1 < count && hooks.gather_input) {
      hooks.gather_input(y, std::source_location::current());
    }
  }
  return cache.output;
}

template <typename Scalar>
void dense_backward(LayerSpan<Scalar> layers, StackCache<Scalar>& cache, ConstMatrixRef<Scalar> dy,
                    std::vector<LayerGrads<Scalar>>& grads, MatrixPtr<Scalar> dx, GradMode mode,
                    const StackHooks<Scalar>& hooks, const ModelDevice<Scalar>& device) {
  const std::size_t count = layers.size();
  if (count == 0 || cache.layers.size() != count) {
    throw UsageError(
        fmt::format("dense_backward: {} layers, but the cache holds a forward pass of {} layers",
                    count, cache.layers.size()));
  }
  if (mode == GradMode::overwrite) {
    grads.resize(count);
  } else if (grads.size() != count) {
    throw UsageError(fmt::format("dense_backward: accumulating into {} gradients for {} layers",
                                 grads.size(), count));
  }
  auto& buffers = cache.grad_buffers;
  for (std::size_t l = count; l-- > 0;) {
    // dL/d(input of layer l) goes to a ping-pong buffer, or to dx for the first layer.
    Matrix<Scalar>* grad_input = l > 0 ? &buffers[l % 2] : dx;
    if (hooks.enter_layer) hooks.enter_layer(l);
    if (l + 1 < count && hooks.gather_output_grad) {
      hooks.gather_output_grad(buffers[(l + 1) % 2], std::source_location::current());
    }
    const ConstMatrixRef<Scalar> grad_output =
        l + 1 == count ? dy : ConstMatrixRef<Scalar>(buffers[(l + 1) % 2]);
    device.layer_backward(layers[l], cache.inputs[l], cache.layers[l], grad_output, grads[l],
                          grad_input, mode);
    if (grad_input != nullptr && hooks.reduce_input_grad) {
      hooks.reduce_input_grad(*grad_input, std::source_location::current());
    }
  }
}

template <typename Scalar>
void dense_step(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> inputs,
                ConstMatrixRef<Scalar> targets, StackCache<Scalar>& cache,
                ReplicaResult<Scalar>& out) {
  const Matrix<Scalar>& output = dense_forward<Scalar>(layers, inputs, cache);
  out.output = output;
  out.loss = mse_loss<Scalar>(output, targets);
  mse_loss_grad<Scalar>(output, targets, cache.loss_grad);
  dense_backward<Scalar>(layers, cache, cache.loss_grad, out.grads, nullptr);
}

template <typename Scalar>
ReplicaResult<Scalar> dense_step(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> inputs,
                                 ConstMatrixRef<Scalar> targets) {
  StackCache<Scalar> cache;
  ReplicaResult<Scalar> out;
  dense_step<Scalar>(layers, inputs, targets, cache, out);
  return out;
}

template <typename Scalar>
void dense_data_parallel(LayerSpan<Scalar> layers, MatrixSpan<Scalar> inputs,
                         MatrixSpan<Scalar> targets, StackCache<Scalar>& cache,
                         DataParallelResult<Scalar>& out) {
  if (inputs.empty() || inputs.size() != targets.size()) {
    throw UsageError(fmt::format(
        "dense_data_parallel: need one target per input and at least one replica, got {} "
        "inputs and {} targets",
        inputs.size(), targets.size()));
  }
  const std::size_t replicas = inputs.size();
  out.replicas.resize(replicas);
  for (std::size_t d = 0; d < replicas; ++d) {
    dense_step<Scalar>(layers, inputs[d], targets[d], cache, out.replicas[d]);
  }
  // The DP all_reduce: a sum in ascending replica order, then a division (not a multiply
  // by 1/DP, which rounds differently when DP is not a power of two).
  out.grads = out.replicas[0].grads;
  for (std::size_t l = 0; l < out.grads.size(); ++l) {
    LayerGrads<Scalar>& sum = out.grads[l];
    for (std::size_t d = 1; d < replicas; ++d) {
      const LayerGrads<Scalar>& g = out.replicas[d].grads[l];
      sum.w1 += g.w1;
      sum.b1 += g.b1;
      sum.w2 += g.w2;
      sum.b2 += g.b2;
    }
    const auto count = static_cast<Scalar>(replicas);
    sum.w1 /= count;
    sum.b1 /= count;
    sum.w2 /= count;
    sum.b2 /= count;
  }
}

template <typename Scalar>
DataParallelResult<Scalar> dense_data_parallel(LayerSpan<Scalar> layers, MatrixSpan<Scalar> inputs,
                                               MatrixSpan<Scalar> targets) {
  StackCache<Scalar> cache;
  DataParallelResult<Scalar> out;
  dense_data_parallel<Scalar>(layers, inputs, targets, cache, out);
  return out;
}

#define RANKLAB_INSTANTIATE_DENSE(Scalar)                                                         \
  template const Matrix<Scalar>& dense_forward<Scalar>(                                           \
      LayerSpan<Scalar>, ConstMatrixRef<Scalar>, StackCache<Scalar>&, const StackHooks<Scalar>&,  \
      const ModelDevice<Scalar>&);                                                                \
  template void dense_backward<Scalar>(LayerSpan<Scalar>, StackCache<Scalar>&,                    \
                                       ConstMatrixRef<Scalar>, std::vector<LayerGrads<Scalar>>&,  \
                                       MatrixPtr<Scalar>, GradMode, const StackHooks<Scalar>&,    \
                                       const ModelDevice<Scalar>&);                               \
  template void dense_step<Scalar>(LayerSpan<Scalar>, ConstMatrixRef<Scalar>,                     \
                                   ConstMatrixRef<Scalar>, StackCache<Scalar>&,                   \
                                   ReplicaResult<Scalar>&);                                       \
  template ReplicaResult<Scalar> dense_step<Scalar>(LayerSpan<Scalar>, ConstMatrixRef<Scalar>,    \
                                                    ConstMatrixRef<Scalar>);                      \
  template void dense_data_parallel<Scalar>(LayerSpan<Scalar>, MatrixSpan<Scalar>,                \
                                            MatrixSpan<Scalar>, StackCache<Scalar>&,              \
                                            DataParallelResult<Scalar>&);                         \
  template DataParallelResult<Scalar> dense_data_parallel<Scalar>(                                \
      LayerSpan<Scalar>, MatrixSpan<Scalar>, MatrixSpan<Scalar>);

RANKLAB_INSTANTIATE_DENSE(float)
RANKLAB_INSTANTIATE_DENSE(double)

#undef RANKLAB_INSTANTIATE_DENSE

}  // namespace ranklab
