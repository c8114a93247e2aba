// What the main job reports, and its two renderings: text for people, JSON for machines
// (`--json`, the same content).
#pragma once

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "comm/run_report.hpp"
#include "model/parallel_check.hpp"
#include "model/problem.hpp"
#include "model/run_golden.hpp"
#include "model/schedule.hpp"
#include "model/schedule_validator.hpp"
#include "model/step_options.hpp"
#include "model/traffic.hpp"
#include "model/training.hpp"
#include "traces/types.hpp"

namespace ranklab::cli {

/// A resolved main job: what runs, on which layout and data.
struct TrainSpec {
  ParallelMode mode = ParallelMode::hybrid;
  ParallelConfig layout;  ///< the layout the mode runs (mode_config of the requested one)
  ModelShape shape;       ///< the shape the mode trains (mode_shape of the requested one)
  DataType dtype = DataType::f32;  ///< f32 or f64 (cli/train_flags.hpp)
  std::uint64_t seed = 0;
  std::filesystem::path init_from;  ///< empty: generated weights and data
  std::filesystem::path save;       ///< empty: nothing saved
  StepOptions step;                 ///< schedule and TP communication (the seed's by default)
  TrainingOptions training;         ///< steps and SGD (one step without update by default)

  /// Whether the job trains for more than the seed's single step (--steps > 1).
  bool multi_step() const { return training.steps > 1; }
};

/// One rank: where it sits and how far its results are from the references.
struct RankRow {
  int rank = 0;
  Coords coords;
  std::vector<std::int64_t> layers;   ///< the global layers the rank holds
  std::array<std::string, 3> groups;  ///< tp, pp, dp group names
  std::optional<RankCheck> check;     ///< absent when the run failed; with --steps > 1 the
                                      ///< step shown in check_step (the first failing one,
                                      ///< else the one with the largest relative error)
  int check_step = 0;                 ///< 0-based
};

/// One step of a run of --steps > 1: its losses beside the dense run's, and its verdict.
struct TrainStepRow {
  int step = 0;                 ///< 0-based
  std::vector<double> losses;   ///< per DP replica, from its last stage
  std::vector<double> dense;    ///< the dense run's, per replica
  double max_relative = 0.0;    ///< the largest relative error of any rank's check this step
  bool ok = true;               ///< every rank within tolerance this step

  /// The mean over replicas of `losses` (or `dense`): the loss a Megatron log line shows.
  static double mean(const std::vector<double>& values);
};

/// One DP replica's loss from its last stage, beside the dense loss and the golden set's
/// (PyTorch's, for a set the reference exported).
struct ReplicaLoss {
  int replica = 0;
  double loss = 0.0;
  double dense = 0.0;
  std::optional<double> golden;
};

/// The pipeline of a run: the schedule, the validator's verdict on it, and the messages
/// each stage's ranks exchanged on their PP groups according to the trace.
struct PipelineReport {
  Schedule schedule;
  ScheduleVerdict verdict;
  std::vector<std::uint64_t> traced_messages;  ///< per stage: PP sends + recvs, all its ranks
  int ranks_per_stage = 0;
};

struct TrainReport {
  TrainSpec spec;
  std::string cluster;  ///< "policy rank-order, threads 1, send mode rendezvous, algorithm direct"
  std::vector<RankRow> ranks;
  std::vector<ReplicaLoss> losses;
  std::array<KindTraffic, 3> traffic;  ///< summed over ranks, by GroupKind
  std::array<std::size_t, 3> group_counts{};
  PipelineReport pipeline;
  std::vector<TrainStepRow> steps;  ///< --steps > 1 only: every step, in order
  bool traffic_checked = false;                 ///< only direct collectives have known counts
  std::vector<std::string> traffic_mismatches;  ///< ranks whose traffic differs from the step's
  std::optional<DenseGoldenCheck> dense_golden;
  double tolerance = 0.0;
  double run_ms = 0.0;    ///< the cluster run: start-up, every step on every rank, shut-down
  double dense_ms = 0.0;  ///< the dense reference on one thread (every step)
  RunReport run;  ///< the cluster run's: status, summary, culprit, analysis, faults
  std::string trace_path;
  std::string saved_to;
  std::string virtual_time;          ///< with --cost/--topology: the timing section
  nlohmann::json virtual_time_json;  ///< the same as JSON (null without)

  /// Every rank within tolerance, the dense reference within tolerance of the golden set's, and
  /// the seed's traffic (where checked).
  bool checks_ok() const;
  /// The result line, without "result: ": the run's summary if it failed, else what the
  /// checks found ("ok: 8 ranks finished; every check passed", "check failed: ...").
  std::string verdict() const;
  /// "ok", "check failed", or the run's status ("deadlock", ...): the JSON's status.
  std::string status() const;
  /// DESIGN.md §7: the run's own code if it failed, 2 if a check failed, else 0.
  int exit_code() const;
};

/// The report as text, section by section.
void print_text(std::ostream& out, const TrainReport& report);

/// A wall time of `ms` milliseconds as the report's `time:` line prints it: "4.2 ms" below
/// 10 s, "61.6 s" from there (it printed "61582.4 ms").
std::string wall_time(double ms);

/// The same content as JSON.
nlohmann::ordered_json to_json(const TrainReport& report);

}  // namespace ranklab::cli
