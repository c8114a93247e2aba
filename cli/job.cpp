#include "cli/job.hpp"

#include <sstream>

#include <fmt/format.h>

#include "cli/cost_flags.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/scenario_report.hpp"
#include "cli/scenarios.hpp"
#include "cli/trace_input_flags.hpp"
#include "cli/train_command.hpp"
#include "collectives/cluster.hpp"
#include "comm/errors.hpp"
#include "emulator/replay.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::cli {
namespace {

class ScenarioJob final : public Job {
 public:
  explicit ScenarioJob(const RunFlags& flags)
      : scenario_(find_scenario(flags.scenario)),
        params_{.count = flags.count},
        algorithm_(to_algorithm(flags.cluster)),
        cost_(to_cost_model(flags.cost)) {
    const int world = flags.cluster.world.value_or(scenario_.default_world);
    check_scenario_world(scenario_, world, fmt::format("--world {}", world));
    options_ = to_cluster_options(flags.cluster, world);
    // The scenario's own faults first, so that the plan reads in the order it was given.
    std::vector<FaultSpec> own;
    for (const std::string& text : scenario_.faults) own.push_back(FaultSpec::parse(text));
    options_.faults.faults.insert(options_.faults.faults.begin(), own.begin(), own.end());
    options_.faults.validate(world);
    if (cost_) check_slowed_ranks(*cost_, world);
  }

  std::string describe() const override {
    return fmt::format("scenario {} (world {}, send mode {}, algorithm {})", scenario_.name,
                       options_.world_size, options_.send_mode.to_string(),
                       to_string(algorithm_));
  }

  const ClusterOptions& options() const override { return options_; }

  JobOutcome run(ClusterOptions options) const override {
    return run_recording(std::move(options), /*record=*/true);
  }

  // The cost model times the trace, so it records one all the same.
  JobOutcome run_unrecorded(ClusterOptions options) const override {
    return run_recording(std::move(options), /*record=*/cost_.has_value());
  }

 private:
  JobOutcome run_recording(ClusterOptions options, bool record) const {
    const LaunchOptions launch{.algorithm = algorithm_,
                               .record = record,
                               .trace_config = {{"program", "scenario"},
                                                {"scenario", scenario_.name},
                                                {"count", params_.count},
                                                {"algorithm", to_string(algorithm_)}}};
    ScenarioReport report{.scenario = scenario_.name,
                          .world = options.world_size,
                          .cluster = fmt::format("policy {}, threads {}, send mode {}, algorithm {}",
                                                 options.policy.to_string(), options.threads,
                                                 options.send_mode.to_string(),
                                                 to_string(algorithm_))};
    const SendMode send_mode = options.send_mode;
    // First: it refuses a world too large for memory.
    EmulatorLauncher launcher(std::move(options));
    ScenarioOutput output(launcher.world_size());
    JobOutcome out;
    Launched run =
        launcher.run(launch, [&](Communicator& comm) { scenario_.body(comm, params_, output); });
    report.run = std::move(run.report);
    report.output = output.lines();
    for (const auto& line : report.output) out.results += line + "\n";
    out.trace = std::move(run.trace);  // a million ranks' events: moved, not copied
    if (cost_) {
      // Virtual time: the trace timed under the cost model, and annotated with it.
      const VirtualTimes times = time_trace(out.trace, *cost_, send_mode);
      annotate(out.trace, times);
      report.virtual_time = format_virtual_times(times, *cost_);
      report.virtual_time_json = virtual_times_to_json(times, *cost_);
    }
    std::ostringstream text;
    print_text(text, report);
    out.exit_code = exit_code(report.run.status);
    out.verdict = report.run.summary;
    out.report = std::move(report.run);  // a million ranks' outcomes: moved, not copied
    out.set_text(text.str());
    // The report but its run, which the outcome holds: the JSON reads it from there.
    out.render_json = [fields = std::make_shared<const ScenarioReport>(std::move(report))](
                          const JobOutcome& o) { return to_json(*fields, o.report); };
    return out;
  }

  const Scenario& scenario_;
  ScenarioParams params_;
  Algorithm algorithm_;
  std::optional<CostModel> cost_;
  ClusterOptions options_;
};

class MainJob final : public Job {
 public:
  explicit MainJob(const RunFlags& flags)
      : job_(flags.cluster, flags.train, flags.cluster.world, flags.cost) {}

  std::string describe() const override {
    const TrainSpec& s = job_.spec();
    return fmt::format("the main job (mode {}, {}, B{} S{} H{} I{} L{}, send mode {})",
                       to_string(s.mode), s.layout.describe(), s.shape.batch, s.shape.seq,
                       s.shape.hidden, s.shape.inter, s.shape.layers,
                       job_.options().send_mode.to_string());
  }

  const ClusterOptions& options() const override { return job_.options(); }

  JobOutcome run(ClusterOptions options) const override {
    TrainRun run = job_.run(std::move(options));
    JobOutcome out;
    out.exit_code = run.report.exit_code();
    out.verdict = run.report.verdict();
    const auto report = std::make_shared<const TrainReport>(std::move(run.report));
    out.render_text = [report](const JobOutcome&) {
      std::ostringstream text;
      print_text(text, *report);
      return text.str();
    };
    out.render_json = [report](const JobOutcome&) { return to_json(*report); };
    out.results = std::move(run.results);
    out.report = std::move(run.run);
    out.trace = std::move(run.trace);
    return out;
  }

 private:
  TrainJob job_;
};

// A recorded trace re-issued on the fabric: what `ranklab replay TRACE` runs.
class ReplayJob final : public Job {
 public:
  explicit ReplayJob(const ReplayFlags& flags)
      : path_(input_name(flags.trace, flags.more_traces)),
        trace_(read_replay_input(flags)),
        cost_(to_cost_model(flags.cost)),
        free_any_source_(flags.wildcards == "free") {
    options_ = to_cluster_options(flags.cluster, trace_.header.world_size);
  }

  std::string describe() const override {
    return fmt::format("replay of {} (world {}, send mode {})", path_, options_.world_size,
                       options_.send_mode.to_string());
  }

  const ClusterOptions& options() const override { return options_; }

  JobOutcome run(ClusterOptions options) const override {
    auto sink = std::make_shared<MemorySink>();
    options.trace_sink = sink;
    options.trace_config = {{"program", "replay"}, {"replayed", path_}};
    JobOutcome out;
    std::string text = "replay: " + replay_cluster(options) + "\n";
    const std::string cluster = replay_cluster(options);
    const SendMode send_mode = options.send_mode;
    ReplayOptions replay;
    replay.cluster = std::move(options);
    replay.free_any_source = free_any_source_;
    const ReplayReport report = replay_trace(trace_, replay);
    text += format_replay(report, path_);
    nlohmann::ordered_json json = replay_to_json(report, path_);
    json["cluster"] = cluster;
    out.trace = sink->trace();
    if (cost_) {
      // As `ranklab replay` does: the recording is timed, the replayed trace annotated.
      const VirtualTimes times = time_trace(trace_, *cost_, send_mode);
      annotate(out.trace, trace_, times);
      text += format_virtual_times(times, *cost_);
      json["virtual_time"] = virtual_times_to_json(times, *cost_);
    }
    out.set_text(std::move(text));
    out.set_json(std::move(json));
    out.exit_code = replay_exit_code(report);
    out.verdict = !report.run.ok()     ? report.run.summary
                  : report.reproduced() ? "reproduced: every operation as recorded"
                                        : fmt::format("not reproduced: {} diverge",
                                                      plural(report.diverging_operations,
                                                             "operation"));
    out.check_failed = "not reproduced";
    out.report = report.run;
    return out;
  }

 private:
  std::string path_;
  Trace trace_;
  std::optional<CostModel> cost_;
  bool free_any_source_;
  ClusterOptions options_;
};

}  // namespace

const std::string& JobOutcome::text() const {
  if (!text_) text_ = render_text ? render_text(*this) : std::string();
  return *text_;
}

const nlohmann::ordered_json& JobOutcome::json() const {
  if (!json_) json_ = render_json ? render_json(*this) : nlohmann::ordered_json();
  return *json_;
}

std::unique_ptr<Job> make_replay_job(const ReplayFlags& flags) {
  return std::make_unique<ReplayJob>(flags);
}

std::unique_ptr<Job> make_job(const RunFlags& flags) {
  if (flags.scenario.empty()) return std::make_unique<MainJob>(flags);
  if (const std::string flag = flags.train.first_given(); !flag.empty()) {
    throw UsageError(fmt::format("{} belongs to the main job, not to --scenario", flag));
  }
  return std::make_unique<ScenarioJob>(flags);
}

}  // namespace ranklab::cli
