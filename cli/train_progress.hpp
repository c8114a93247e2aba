// A training run's progress on stderr when it is a terminal (traces/progress.hpp), counted
// in compute passes: the forward or the backward of one micro-batch through one chunk, on
// one rank (model/schedule.hpp). Steps alone would leave a single long step (a big --hidden
// or --batch) silent to its end; a pass is the finest unit the step's executor knows
// without hooks inside the layers' kernels, and it is what the step's time is made of.
//   training: 45% (36 of 80 passes), 3 s            one step
//   training 20 steps: 45% (720 of 1600 passes), 3 s
#pragma once

#include <atomic>
#include <cstdint>

#include "cli/train_report.hpp"
#include "model/schedule.hpp"
#include "model/training.hpp"
#include "traces/progress.hpp"

namespace ranklab::cli {

class TrainingProgress {
 public:
  /// For `spec`'s run of `schedule` (built for its layout's PP).
  TrainingProgress(const TrainSpec& spec, const Schedule& schedule);

  /// What every rank calls after each of its passes (model/training.hpp); safe from all the
  /// ranks' threads at once.
  PassObserver observer();

  /// Erases the line, before the report prints.
  void finish() { progress_.finish(); }

  /// The run's passes: each stage's compute passes times the stage's ranks (TP x DP) and
  /// the steps.
  static std::uint64_t total_passes(const TrainSpec& spec, const Schedule& schedule);

 private:
  std::atomic<std::uint64_t> done_ = 0;
  Progress progress_;
};

}  // namespace ranklab::cli
