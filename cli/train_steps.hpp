// The checks of the main job trained for --steps N > 1: every rank, after every step,
// against the same step of the dense run (model/dense_training.hpp): loss, output,
// gradients as for one step, and the shards after the SGD update. Each rank checks its own
// step as it ends, so nothing of a step outlives it but a few numbers, whatever N is; the
// report gets a row per step and, per rank, the step that matters (the first that failed,
// else the one with the largest error). Progress is cli/train_progress.hpp's.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/train_report.hpp"
#include "model/dense_training.hpp"
#include "model/golden.hpp"
#include "model/training.hpp"

namespace ranklab::cli {

template <typename Scalar>
class TrainingChecks {
 public:
  /// For `spec`'s run from `problem`'s weights; `golden` (may be null) is compared with
  /// the first step, the one its gradients belong to. `local_ranks` of the ranks record
  /// their steps here (Launcher::local_ranks): a dense step is dropped once each has.
  TrainingChecks(const TrainSpec& spec, const Problem<Scalar>& problem,
                 const GoldenSet<Scalar>* golden, int local_ranks);

  /// What rank `rank` calls after each step; each rank writes only its own records.
  StepObserver<Scalar> observer(int rank);

  /// Rank `rank`'s records as bytes, and back: where ranks run in processes of their own
  /// (MPI), each records its own rank, and rank 0 gathers them before fill(). Throws Error
  /// for bytes encode_rank did not write.
  std::string encode_rank(int rank) const;
  void decode_rank(int rank, const std::string& bytes);

  /// After a run that finished: every rank's check and every step's row into `report`.
  void fill(TrainReport& report);

  /// What the records of `spec`'s run take, at least: one per rank and step, and a row per
  /// step with a loss per replica (cli/train_memory.hpp counts them before the run).
  static double record_bytes(const TrainSpec& spec) {
    const double per_step = static_cast<double>(spec.layout.world_size()) * sizeof(StepRecord) +
                            sizeof(TrainStepRow) + spec.layout.dp * sizeof(double);
    return spec.training.steps * per_step;
  }

  /// The last step of the dense run (--save writes it; its losses are the last ones).
  const DenseTrainingStep<Scalar>& last() const { return *last_; }
  /// Time spent on the dense run, in milliseconds.
  double dense_ms() const { return trajectory_.ms(); }

 private:
  struct StepRecord {
    double max_relative = 0.0;
    bool ok = true;
    std::optional<double> loss;  ///< the replica's loss, on its last stage's TP rank 0
    double dense = 0.0;          ///< the dense run's loss of the rank's replica
  };
  struct RankRecord {
    std::vector<StepRecord> steps;
    std::optional<RankCheck> shown;
    int shown_step = 0;
    std::optional<ErrorStat> golden;  ///< the first step's gradients against the golden set
  };
  void record(int rank, int step, const RankResult<Scalar>& result,
              const std::vector<LayerParams<Scalar>>& updated);

  const TrainSpec& spec_;
  const GoldenSet<Scalar>* golden_;
  double tolerance_;
  DenseTrajectory<Scalar> trajectory_;
  std::vector<RankRecord> ranks_;
  std::shared_ptr<const DenseTrainingStep<Scalar>> last_;  ///< set by rank 0
};

}  // namespace ranklab::cli
