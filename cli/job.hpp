// One run of what `ranklab run` runs (a scenario or the main job) on a schedule the caller
// chooses: `ranklab run` runs it once, `ranklab explore` once per schedule, in parallel.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/replay_command.hpp"
#include "cli/run_command.hpp"
#include "emulator/options.hpp"
#include "comm/run_report.hpp"
#include "traces/event.hpp"

namespace ranklab::cli {

/// What one run gave.
struct JobOutcome {
  RunReport report;
  int exit_code = 0;     ///< as `ranklab run` exits (2 when the main job's checks fail)
  std::string verdict;   ///< the result line, without "result: "
  std::string results;   ///< the program's results as text: compared between schedules
  Trace trace;
  /// What exit code 2 means for this job: the main job's checks, or a replay's comparison.
  std::string check_failed = "check failed";

  /// Everything `ranklab run` prints for this run, but the trace line.
  const std::string& text() const;
  /// The same report as `--json` prints it (docs/json.md).
  const nlohmann::ordered_json& json() const;

  /// How text() and json() are made, each on its first use, from what the job kept of its run
  /// and this outcome (a scenario's run lives in `report`): not by every run, since explore
  /// shows only its failing schedule's report (rendering every schedule's took 6.5% of its
  /// time), and apart, since a scenario's JSON holds an entry per rank (a fifth of a
  /// 65,536-rank run's CPU) where its text is a few lines. Not for two threads at once.
  std::function<std::string(const JobOutcome&)> render_text;
  std::function<nlohmann::ordered_json(const JobOutcome&)> render_json;
  /// For a job that has its text or JSON made already.
  void set_text(std::string text) { text_ = std::move(text); }
  void set_json(nlohmann::ordered_json json) { json_ = std::move(json); }

 private:
  mutable std::optional<std::string> text_;
  mutable std::optional<nlohmann::ordered_json> json_;
};

class Job {
 public:
  virtual ~Job() = default;
  /// "scenario send-send (world 2, send mode rendezvous, algorithm direct)".
  virtual std::string describe() const = 0;
  /// The cluster options the flags give.
  virtual const ClusterOptions& options() const = 0;
  /// One run on a fresh cluster with `options` (normally options() with another policy and
  /// a schedule log). Records the trace in memory; writes no file. Thread-safe.
  virtual JobOutcome run(ClusterOptions options) const = 0;
  /// The same run where nobody reads its trace (no --trace): a job may then record none
  /// (the outcome's trace is empty), as a scenario does at a million ranks, whose two events
  /// a rank would be a tenth of the run's memory. By default, run().
  virtual JobOutcome run_unrecorded(ClusterOptions options) const {
    return run(std::move(options));
  }
};

/// The job `flags` name: --scenario's, or the main job. Throws UsageError for bad flags
/// before any rank starts.
std::unique_ptr<Job> make_job(const RunFlags& flags);

/// The replay of `flags.trace` (emulator/replay.hpp), as `ranklab replay` runs it. Throws
/// TraceError if the trace cannot be read, UsageError for bad flags.
std::unique_ptr<Job> make_replay_job(const ReplayFlags& flags);

}  // namespace ranklab::cli
