#include "cli/train_progress.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ranklab::cli {

std::uint64_t TrainingProgress::total_passes(const TrainSpec& spec, const Schedule& schedule) {
  std::uint64_t per_step = 0;
  for (const std::vector<Step>& stage : schedule.stages) {
    per_step += static_cast<std::uint64_t>(
        std::count_if(stage.begin(), stage.end(), [](const Step& step) { return step.compute; }));
  }
  const auto ranks_per_stage = static_cast<std::uint64_t>(spec.layout.tp * spec.layout.dp);
  return per_step * ranks_per_stage * static_cast<std::uint64_t>(spec.training.steps);
}

TrainingProgress::TrainingProgress(const TrainSpec& spec, const Schedule& schedule)
    : progress_(spec.multi_step() ? fmt::format("training {} steps", spec.training.steps)
                                  : std::string("training"),
                total_passes(spec, schedule), Progress::Unit::items, "passes") {}

PassObserver TrainingProgress::observer() {
  return [this] {
    // A pass is milliseconds of matrix products at least: the clock on every one is cheap.
    progress_.update_now(done_.fetch_add(1, std::memory_order_relaxed) + 1);
  };
}

}  // namespace ranklab::cli
