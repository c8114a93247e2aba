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
// An axis of degree 1 sends nothing, so TP, PP and DP alone are this same step. The step
// is the seed schedule run by the pipeline executor (model/pipeline_step.hpp); StepOptions
// pick another schedule (micro-batches, model chunks) or sequence-parallel TP regions. Only
// the communicator API is used: the step runs on the emulator or any other backend.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/communicator.hpp"
#include "model/dense_model.hpp"
#include "model/parallel_layout.hpp"
#include "model/problem.hpp"
#include "model/step_options.hpp"

namespace ranklab {

/// What one rank's step produced.
template <typename Scalar>
struct RankResult {
  int rank = 0;
  Coords coords;
  std::vector<std::int64_t> layers;  ///< the global layers the rank holds, in grads' order
  Matrix<Scalar> output;             ///< the stage's output [rows, H] (after TP reduction and b2)
  bool output_is_sequence_shard = false;  ///< output holds only the rank's sequence shard
                                          ///< (sp, a stage before the last)
  std::optional<Scalar> loss;             ///< the replica's loss; last stage only
  std::vector<LayerGrads<Scalar>> grads;  ///< per layer held: the TP shard's gradient,
                                          ///< averaged over DP
};

/// The TP shards (shard_layer) of the layers `coords`' stage holds, one vector per model
/// chunk (stage_chunks), from the full layers. Throws UsageError if the layers do not split
/// by config's PP and TP and `virtual_stages`.
template <typename Scalar>
std::vector<std::vector<LayerParams<Scalar>>> shard_stage(LayerSpan<Scalar> full,
                                                          const ParallelConfig& config,
                                                          int virtual_stages, const Coords& coords);

/// The whole rank program: builds the layout over `world`, takes the rank's shard of
/// `problem` (full weights; replica d's data), builds the schedule `options` name and runs
/// one step. Throws UsageError if config or options do not fit the world or the problem.
template <typename Scalar>
RankResult<Scalar> run_parallel_rank(Communicator& world, const ParallelConfig& config,
                                     const Problem<Scalar>& problem,
                                     const StepOptions& options = {});

}  // namespace ranklab
