// The dense reference: L layers on one rank, with no communication. It is what every
// TP/PP/DP run is checked against (DESIGN.md §4), and its stack functions are also the
// compute of a pipeline stage: pass the stage's layers (or their TP shards) as a span, and
// StackHooks for the two places where Megatron's tensor parallelism communicates.
#pragma once

#include <array>
#include <functional>
#include <source_location>
#include <span>
#include <vector>

#include "model/device.hpp"
#include "model/layer.hpp"

namespace ranklab {

/// A run of consecutive layers: the whole model, or the layers of one pipeline stage.
/// Not deduced (see tensor.hpp): a std::vector<LayerParams<Scalar>> converts to it.
template <typename Scalar>
using LayerSpan = std::span<const LayerParams<std::type_identity_t<Scalar>>>;

/// One matrix per DP replica (inputs or targets), not deduced either.
template <typename Scalar>
using MatrixSpan = std::span<const Matrix<std::type_identity_t<Scalar>>>;

/// Forward state of a stack of layers, kept for backward and reused across steps so that a
/// steady-state step does not allocate.
template <typename Scalar>
struct StackCache {
  std::vector<Matrix<Scalar>> inputs;          ///< inputs[l]: input of layer l (inputs[0] = x)
  std::vector<LayerCache<Scalar>> layers;      ///< per-layer forward state
  Matrix<Scalar> output;                       ///< output of the last layer
  Matrix<Scalar> loss_grad;                    ///< dL/doutput, when dense_step computes it
  std::array<Matrix<Scalar>, 2> grad_buffers;  ///< backward ping-pong between layers
};

/// A hook's communication on a matrix of the stack. `where` is the line of dense_forward or
/// dense_backward that calls the hook: the hook hands it on to its Communicator call, so
/// traces and reports name the layer loop's line that triggered the communication, not the
/// helper that makes it (as a PyTorch user's report names their script's line).
template <typename Scalar>
using MatrixHook = std::function<void(Matrix<Scalar>&, std::source_location where)>;

/// Where a stack of TP shards meets the other shards (Megatron's two regions). Empty
/// functions (the default) mean a dense stack: no communication.
template <typename Scalar>
struct StackHooks {
  /// Reduce-from-TP, forward: applied to each layer's partial output y = a·W2ᵀ before b2
  /// is added (an all_reduce over the TP group). Its backward is the identity.
  MatrixHook<Scalar> reduce_output;
  /// Copy-to-TP, backward: applied to each layer's input gradient where one is computed
  /// (an all_reduce over the TP group); not called for a first layer given no dx. Its
  /// forward is the identity.
  MatrixHook<Scalar> reduce_input_grad;
  /// Sequence parallelism only (model/sequence_parallel.hpp), where reduce_output leaves
  /// each rank its sequence shard and reduce_input_grad likewise: forward, applied to the
  /// input of every layer after the first (shard to full rows); backward, to the output
  /// gradient of every layer but the last. The stack's own input and output gradient are
  /// full rows, and its output and input gradient shards: the caller gathers at the edges.
  MatrixHook<Scalar> gather_input;
  MatrixHook<Scalar> gather_output_grad;
  /// Called with a layer's index in the stack before the layer's own hooks, forward and
  /// backward: lets the caller name the layer's communication (Communicator::annotate).
  std::function<void(std::size_t layer)> enter_layer;
};

/// Runs x [rows, H] through every layer (b2 included); returns cache.output.
/// Keeps a copy of x, so the caller's buffer need not outlive backward.
/// Throws UsageError for an empty stack or a wrong input width.
/// The layers' math runs on `device` (model/device.hpp), where layers, x and cache live.
template <typename Scalar>
const Matrix<Scalar>& dense_forward(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> x,
                                    StackCache<Scalar>& cache,
                                    const StackHooks<Scalar>& hooks = {},
                                    const ModelDevice<Scalar>& device = cpu_device<Scalar>());

/// Backward through the stack of the last dense_forward for dy = dL/doutput: writes (or
/// accumulates) one LayerGrads per layer into `grads`, and dL/dx into *dx unless dx is null.
template <typename Scalar>
void dense_backward(LayerSpan<Scalar> layers, StackCache<Scalar>& cache, ConstMatrixRef<Scalar> dy,
                    std::vector<LayerGrads<Scalar>>& grads, MatrixPtr<Scalar> dx,
                    GradMode mode = GradMode::overwrite, const StackHooks<Scalar>& hooks = {},
                    const ModelDevice<Scalar>& device = cpu_device<Scalar>());

/// One replica's forward, MSE loss and backward.
template <typename Scalar>
struct ReplicaResult {
  Matrix<Scalar> output;                  ///< last layer's output [rows, H]
  Scalar loss = 0;                        ///< mse_loss(output, targets)
  std::vector<LayerGrads<Scalar>> grads;  ///< this replica's gradients, one per layer
};

/// The DP reference: every replica's result and the gradients averaged over replicas.
template <typename Scalar>
struct DataParallelResult {
  std::vector<ReplicaResult<Scalar>> replicas;  ///< index d = DP replica d
  std::vector<LayerGrads<Scalar>> grads;        ///< Σ_d replicas[d].grads / DP
};

/// Forward + loss + backward of one replica, reusing `cache` and `out`'s storage.
template <typename Scalar>
void dense_step(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> inputs,
                ConstMatrixRef<Scalar> targets, StackCache<Scalar>& cache,
                ReplicaResult<Scalar>& out);

/// Convenience form of dense_step with fresh storage; call as dense_step<float>(...).
template <typename Scalar>
ReplicaResult<Scalar> dense_step(LayerSpan<Scalar> layers, ConstMatrixRef<Scalar> inputs,
                                 ConstMatrixRef<Scalar> targets);

/// Runs dense_step for each replica d on (inputs[d], targets[d]) and averages the gradients
/// as DP does: summed in replica order, then divided by the replica count (so a DP run whose
/// all_reduce sums in ascending rank order gives the same bits). Reuses cache and out.
/// Throws UsageError if there are no replicas or inputs and targets differ in count.
template <typename Scalar>
void dense_data_parallel(LayerSpan<Scalar> layers, MatrixSpan<Scalar> inputs,
                         MatrixSpan<Scalar> targets, StackCache<Scalar>& cache,
                         DataParallelResult<Scalar>& out);

/// Convenience form of dense_data_parallel with fresh storage; call with the Scalar
/// spelled out, as dense_data_parallel<double>(layers, inputs, targets).
template <typename Scalar>
DataParallelResult<Scalar> dense_data_parallel(LayerSpan<Scalar> layers, MatrixSpan<Scalar> inputs,
                                               MatrixSpan<Scalar> targets);

}  // namespace ranklab
