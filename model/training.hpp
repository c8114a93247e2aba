// Many training steps of one rank (`ranklab run --steps N`): each step is the step of
// model/parallel_step.hpp (forward, backward with its TP and PP communication, the DP
// gradient all_reduce), then plain SGD on the rank's own shards, Megatron's order: average
// over DP, then update. Every rank of a replica group then holds the same updated shard,
// so no weight ever crosses the fabric; the next step starts from the updated weights.
//
// SGD is torch.optim.SGD without momentum or weight decay: w -= lr * grad, elementwise,
// the same function for the dense reference (model/dense_training.hpp), so that equal
// gradients give equal bits.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/device.hpp"
#include "model/parallel_step.hpp"

namespace ranklab {

/// How many steps, and the update between them.
struct TrainingOptions {
  int steps = 1;
  /// SGD's learning rate; nullopt: no update at all (the seed's single gradient step).
  std::optional<double> lr;
};

/// The SGD learning rate `ranklab run --steps N` uses unless --lr says otherwise.
inline constexpr double kDefaultLearningRate = 0.05;

/// params -= lr * grads, elementwise. Throws UsageError if the sizes differ.
template <typename Scalar>
void sgd_update(std::span<Scalar> params, std::span<const Scalar> grads, Scalar lr);

/// The same on a layer's four tensors, with `device`'s kernel (they live there).
template <typename Scalar>
void sgd_update(LayerParams<Scalar>& params, const LayerGrads<Scalar>& grads, Scalar lr,
                const ModelDevice<Scalar>& device = cpu_device<Scalar>());

/// Called on the rank after each step `step` (0-based) with what it produced (host copies):
/// the step's result and, when the options update, the rank's shards after the update (one
/// per layer, result.layers' order; empty without an update).
template <typename Scalar>
using StepObserver = std::function<void(int step, const RankResult<Scalar>& result,
                                        const std::vector<LayerParams<Scalar>>& updated)>;

/// Called on the rank after each compute pass of a step: the forward or the backward of one
/// micro-batch through one of its chunks (model/schedule.hpp), so that a long step shows
/// progress before it ends. Finer would mean hooks inside the layers' kernels.
using PassObserver = std::function<void()>;

/// run_parallel_rank for `training.steps` steps with the update after each (the last one
/// included). Returns the last step's result; `observe` (may be empty) sees every step's,
/// `after_pass` (may be empty) every compute pass of every step.
/// Throws UsageError as run_parallel_rank does, and for steps < 1.
template <typename Scalar>
RankResult<Scalar> run_training_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem, const StepOptions& options,
                                     const TrainingOptions& training,
                                     const StepObserver<Scalar>& observe = {},
                                     const PassObserver& after_pass = {});

}  // namespace ranklab
