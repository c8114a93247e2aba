// One training step of one rank under TP x PP x DP: the seed's hybrid step
// (shared/seeds/000 §4.4, HybridRank.step in shared/reference/torch/parallel_reference.py).
//
//   1. stage 0 takes its replica's inputs; stage p > 0 receives them from stage p-1 (PP recv)
//   2. forward through the stage's layers as TP shards: after each layer the partial outputs
//      are all_reduced over TP (reduce-from-TP), then b2 is added
//   3. a stage before the last sends its output to p+1 (PP send) and receives the output's
//      gradient back (PP recv); the last stage computes the MSE loss and its gradient
//   4. backward through the stage; each input gradient that is needed is all_reduced over
//      TP (copy-to-TP's backward). Stage 0's first layer needs none: the data has no grad
//   5. stage p > 0 sends its input gradient to p-1 (PP send)
//   6. every parameter gradient is all_reduced over DP and divided by DP
//
// An axis of degree 1 sends nothing, so TP, PP and DP alone are this same step. Only the
// communicator API is used: the step runs on the emulator or any other backend.
#pragma once

#include <optional>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/dense_model.hpp"
#include "model/parallel_layout.hpp"
#include "model/problem.hpp"

namespace ranklab {

/// Point-to-point tags of the pipeline: activations forward, their gradients backward.
inline constexpr int kActivationTag = 0;
inline constexpr int kGradientTag = 1;

/// What one rank's step produced.
template <typename Scalar>
struct RankResult {
  int rank = 0;
  Coords coords;
  StageLayers stage;           ///< the global layers [first, end) the rank holds
  Matrix<Scalar> output;       ///< the stage's output [rows, H] (after TP reduction and b2)
  std::optional<Scalar> loss;  ///< the replica's loss; last stage only
  std::vector<LayerGrads<Scalar>> grads;  ///< per stage layer: the TP shard's gradient,
                                          ///< averaged over DP
};

/// Scratch of a step, reused across steps so that a steady-state step does not allocate.
template <typename Scalar>
struct StepState {
  StackCache<Scalar> cache;
  Matrix<Scalar> received;     ///< the stage input from the previous stage
  Matrix<Scalar> output_grad;  ///< dL/d(stage output)
  Matrix<Scalar> input_grad;   ///< dL/d(stage input), sent back to the previous stage
};

/// The TP shards (shard_layer) of the layers `coords`' stage holds, from the full layers.
/// Throws UsageError if the layers do not split by config's PP and TP.
template <typename Scalar>
std::vector<LayerParams<Scalar>> shard_stage(LayerSpan<Scalar> full, const ParallelConfig& config,
                                             const Coords& coords);

/// One step of the rank of `layout` on its TP-sharded stage layers `shards`, with its
/// replica's `inputs` and `targets` [rows, H] (every rank of a replica passes the same;
/// only stage 0 reads the inputs, only the last stage the targets). Fills out.output,
/// out.loss and out.grads. Blocking; throws what the communicator throws.
template <typename Scalar>
void parallel_step(ParallelLayout& layout, LayerSpan<Scalar> shards, ConstMatrixRef<Scalar> inputs,
                   ConstMatrixRef<Scalar> targets, StepState<Scalar>& state,
                   RankResult<Scalar>& out);

/// The whole rank program: builds the layout over `world`, takes the rank's shard of
/// `problem` (full weights; replica d's data) and runs one step. Throws UsageError if
/// config does not fit the world or the problem.
template <typename Scalar>
RankResult<Scalar> run_parallel_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem);

}  // namespace ranklab
