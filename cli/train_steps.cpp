#include "cli/train_steps.hpp"

#include <fmt/format.h>

#include <numeric>

#include "cli/wire.hpp"
#include "model/run_golden.hpp"

namespace ranklab::cli {

double TrainStepRow::mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

template <typename Scalar>
TrainingChecks<Scalar>::TrainingChecks(const TrainSpec& spec, const Problem<Scalar>& problem,
                                       const GoldenSet<Scalar>* golden, int local_ranks)
    : spec_(spec),
      golden_(spec.mode == ParallelMode::hybrid ? golden : nullptr),
      tolerance_(relative_tolerance<Scalar>()),
      trajectory_(problem, spec.training.lr.value_or(0.0), local_ranks),
      ranks_(static_cast<std::size_t>(spec.layout.world_size())) {
  for (RankRecord& rank : ranks_) rank.steps.resize(static_cast<std::size_t>(spec.training.steps));
}

template <typename Scalar>
StepObserver<Scalar> TrainingChecks<Scalar>::observer(int rank) {
  return [this, rank](int step, const RankResult<Scalar>& result,
                      const std::vector<LayerParams<Scalar>>& updated) {
    record(rank, step, result, updated);
  };
}

template <typename Scalar>
void TrainingChecks<Scalar>::record(int rank, int step, const RankResult<Scalar>& result,
                                    const std::vector<LayerParams<Scalar>>& updated) {
  const std::shared_ptr<const DenseTrainingStep<Scalar>> dense = trajectory_.at(step);
  RankCheck check = check_rank(result, spec_.layout, dense->reference);
  check.weights = check_updated_weights(updated, result, spec_.layout, dense->updated);
  RankRecord& record = ranks_[static_cast<std::size_t>(rank)];
  // The golden set's gradients are those of the weights it holds: the first step's.
  if (step == 0 && golden_ != nullptr) {
    record.golden = compare_rank_with_golden(result, *golden_);
    check.golden = record.golden;
  }
  StepRecord& row = record.steps[static_cast<std::size_t>(step)];
  row.max_relative = check.max_relative();
  row.ok = check.ok(tolerance_);
  if (result.loss && result.coords.t == 0) {
    row.loss = static_cast<double>(*result.loss);
    row.dense = static_cast<double>(
        dense->reference.result.replicas[static_cast<std::size_t>(result.coords.d)].loss);
  }
  // The step a rank's row shows: its first failure, else its largest error.
  const bool keep = record.shown && (!record.shown->ok(tolerance_) ||
                                     (row.ok && row.max_relative <= record.shown->max_relative()));
  if (!keep) {
    record.shown = std::move(check);
    record.shown_step = step;
  }
  if (step + 1 == spec_.training.steps && rank == 0) last_ = dense;
}

namespace {

constexpr const char* kRecordBytes = "a rank's step checks";

void write_stat(wire::Writer& w, const std::optional<ErrorStat>& stat) {
  w.value<std::uint8_t>(stat ? 1 : 0);
  if (stat) w.value(*stat);
}

std::optional<ErrorStat> read_stat(wire::Reader& in) {
  if (in.value<std::uint8_t>() == 0) return std::nullopt;
  return in.value<ErrorStat>();
}

void write_check(wire::Writer& w, const RankCheck& check) {
  w.value<std::int32_t>(check.rank);
  w.value(check.coords);
  w.value<std::uint64_t>(check.layers.size());
  for (const std::int64_t layer : check.layers) w.value(layer);
  w.value(check.loss);
  w.value(check.output);
  w.value(check.grads);
  write_stat(w, check.golden);
  write_stat(w, check.weights);
}

RankCheck read_check(wire::Reader& in) {
  RankCheck check;
  check.rank = in.value<std::int32_t>();
  check.coords = in.value<Coords>();
  check.layers.resize(in.value<std::uint64_t>());
  for (std::int64_t& layer : check.layers) layer = in.value<std::int64_t>();
  check.loss = in.value<ErrorStat>();
  check.output = in.value<ErrorStat>();
  check.grads = in.value<ErrorStat>();
  check.golden = read_stat(in);
  check.weights = read_stat(in);
  return check;
}

}  // namespace

template <typename Scalar>
std::string TrainingChecks<Scalar>::encode_rank(int rank) const {
  const RankRecord& record = ranks_[static_cast<std::size_t>(rank)];
  wire::Writer w;
  w.value<std::uint64_t>(record.steps.size());
  for (const StepRecord& step : record.steps) {
    w.value(step.max_relative);
    w.value<std::uint8_t>(step.ok ? 1 : 0);
    w.value<std::uint8_t>(step.loss ? 1 : 0);
    w.value(step.loss.value_or(0.0));
    w.value(step.dense);
  }
  w.value<std::uint8_t>(record.shown ? 1 : 0);
  if (record.shown) write_check(w, *record.shown);
  w.value<std::int32_t>(record.shown_step);
  write_stat(w, record.golden);
  return w.take();
}

template <typename Scalar>
void TrainingChecks<Scalar>::decode_rank(int rank, const std::string& bytes) {
  wire::Reader in(bytes, kRecordBytes);
  RankRecord record;
  record.steps.resize(in.value<std::uint64_t>());
  if (record.steps.size() != static_cast<std::size_t>(spec_.training.steps)) {
    throw Error(fmt::format("{}: {} steps, the run has {}", kRecordBytes, record.steps.size(),
                            spec_.training.steps));
  }
  for (StepRecord& step : record.steps) {
    step.max_relative = in.value<double>();
    step.ok = in.value<std::uint8_t>() != 0;
    const bool has_loss = in.value<std::uint8_t>() != 0;
    const auto loss = in.value<double>();
    if (has_loss) step.loss = loss;
    step.dense = in.value<double>();
  }
  if (in.value<std::uint8_t>() != 0) record.shown = read_check(in);
  record.shown_step = in.value<std::int32_t>();
  record.golden = read_stat(in);
  in.expect_end();
  ranks_[static_cast<std::size_t>(rank)] = std::move(record);
}

template <typename Scalar>
void TrainingChecks<Scalar>::fill(TrainReport& report) {
  report.steps.assign(static_cast<std::size_t>(spec_.training.steps), {});
  const int replicas = spec_.layout.dp;
  for (std::size_t s = 0; s < report.steps.size(); ++s) {
    TrainStepRow& row = report.steps[s];
    row.step = static_cast<int>(s);
    row.losses.assign(static_cast<std::size_t>(replicas), 0.0);
    row.dense.assign(static_cast<std::size_t>(replicas), 0.0);
  }
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankRecord& record = ranks_[r];
    report.ranks[r].check = record.shown;
    if (record.shown) report.ranks[r].check->golden = record.golden;
    report.ranks[r].check_step = record.shown_step;
    const auto d = static_cast<std::size_t>(report.ranks[r].coords.d);
    for (std::size_t s = 0; s < record.steps.size(); ++s) {
      const StepRecord& step = record.steps[s];
      TrainStepRow& row = report.steps[s];
      row.max_relative = worse_error(row.max_relative, step.max_relative);
      row.ok = row.ok && step.ok;
      if (step.loss) {
        row.losses[d] = *step.loss;
        row.dense[d] = step.dense;
      }
    }
  }
}

template class TrainingChecks<float>;
template class TrainingChecks<double>;

}  // namespace ranklab::cli
