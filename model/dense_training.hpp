// The dense reference of a training run (`ranklab run --steps N`): the same N SGD steps
// (model/training.hpp) on one rank, each checked against by every rank of the parallel run.
// It is computed a step at a time, when the first rank asks for the step, and dropped once
// every rank has had it, so that its memory is that of a step or two whatever N is (ranks
// are never far apart: each step ends in collectives over every group).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "model/parallel_check.hpp"
#include "model/problem.hpp"

namespace ranklab {

/// One step of the dense run.
template <typename Scalar>
struct DenseTrainingStep {
  std::vector<LayerParams<Scalar>> weights;  ///< the weights the step started from
  DenseReference<Scalar> reference;          ///< the step from them: losses, outputs, gradients
  std::vector<LayerParams<Scalar>> updated;  ///< weights - lr * the DP-averaged gradients
};

template <typename Scalar>
class DenseTrajectory {
 public:
  /// Starts from `problem`'s weights; each step is asked for by `consumers` callers.
  DenseTrajectory(Problem<Scalar> problem, double lr, int consumers);

  /// Step `step` (0-based), computing it (and any before it) if no caller has yet. Each
  /// consumer asks for each step once, in order. Safe to call from several threads. Throws
  /// std::logic_error for a step already handed to every consumer.
  std::shared_ptr<const DenseTrainingStep<Scalar>> at(int step);

  /// The time spent computing steps so far, in milliseconds.
  double ms() const;

 private:
  struct Held {
    std::shared_ptr<const DenseTrainingStep<Scalar>> step;
    int handed = 0;  ///< to how many consumers
  };

  mutable std::mutex mutex_;
  Problem<Scalar> problem_;  ///< its layers: the weights the next step starts from
  Scalar lr_;
  int consumers_;
  int next_ = 0;  ///< the next step to compute
  std::map<int, Held> held_;
  double ms_ = 0.0;
};

/// The rank's shards after an update against the dense updated weights, sliced to the
/// rank's TP shard as check_rank slices gradients (`result` names the layers it holds).
/// Throws UsageError if the shapes do not fit.
template <typename Scalar>
ErrorStat check_updated_weights(const std::vector<LayerParams<Scalar>>& updated,
                                const RankResult<Scalar>& result, const ParallelConfig& config,
                                const std::vector<LayerParams<Scalar>>& dense_updated);

}  // namespace ranklab
