#include "cli/run_command.hpp"

#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/scenarios.hpp"
#include "cli/train_command.hpp"
#include "emulator/cluster.hpp"
#include "emulator/errors.hpp"

namespace ranklab::cli {
namespace {

// Prints the report as a user reads it: program output, then verdict, then details.
int print_report(const RunReport& report, const ScenarioOutput& output, const std::string& trace,
                 const std::string& virtual_time) {
  for (const auto& line : output.lines()) std::cout << line << "\n";
  if (!report.ok()) std::cout << "\n" << report.details << "\n";
  if (!virtual_time.empty()) std::cout << "\n" << virtual_time;
  std::cout << "result: " << report.summary << "\n";
  if (!trace.empty()) std::cout << "trace: " << trace << "\n";
  return exit_code(report.status);
}

}  // namespace

CLI::App& add_run_command(CLI::App& app, RunFlags& flags) {
  CLI::App& run = *app.add_subcommand(
      "run",
      "run the seed's TP/PP/DP training step on the virtual cluster, checked against the dense "
      "reference (the main job), or a --scenario");
  run.add_option("--scenario", flags.scenario, "a built-in scenario (see `ranklab scenarios`)");
  run.add_option("--count", flags.count, "elements per collective, for scenarios with a payload")
      ->capture_default_str();
  add_cluster_flags(run, flags.cluster);
  add_cost_flags(run, flags.cost);
  add_train_flags(run, flags.train);
  return run;
}

int run_command(const RunFlags& flags) {
  if (flags.scenario.empty()) {
    return train_command(flags.cluster, flags.train, flags.cluster.world, flags.cost);
  }
  if (const std::string flag = flags.train.first_given(); !flag.empty()) {
    throw UsageError(fmt::format("{} belongs to the main job, not to --scenario", flag));
  }
  const Scenario& scenario = find_scenario(flags.scenario);
  const int world = flags.cluster.world.value_or(scenario.default_world);
  if (world < scenario.min_world) {
    throw UsageError(fmt::format("scenario {} needs at least {} ranks, got --world {}",
                                 scenario.name, scenario.min_world, world));
  }
  ClusterOptions options = to_cluster_options(flags.cluster, world);
  const Algorithm algorithm = to_algorithm(flags.cluster);
  const std::optional<CostModel> cost = to_cost_model(flags.cost);
  // Timing needs the whole trace in memory; without it the file sink writes it directly.
  auto memory = cost ? std::make_shared<MemorySink>() : nullptr;
  options.trace_sink = memory ? std::shared_ptr<TraceSink>(memory) : open_trace_sink(flags.cluster);
  options.trace_config = {{"program", "scenario"},
                          {"scenario", scenario.name},
                          {"count", flags.count},
                          {"algorithm", to_string(algorithm)}};

  std::cout << fmt::format(
      "scenario {}: world {}, policy {}, threads {}, send mode {}, algorithm {}\n", scenario.name,
      world, options.policy.to_string(), options.threads, options.send_mode.to_string(),
      to_string(algorithm));
  spdlog::info("starting {} ranks", world);
  ScenarioOutput output(world);
  const ScenarioParams params{.count = flags.count};
  Cluster cluster(options);
  const RunReport report = cluster.run([&](RankContext& context) {
    Communicator comm(context, algorithm);
    scenario.body(comm, params, output);
  });
  spdlog::info("run ended: {}", to_string(report.status));
  std::string virtual_time;
  if (cost) {
    Trace trace = memory->trace();
    const VirtualTimes times = time_trace(trace, *cost, options.send_mode);
    annotate(trace, times);
    virtual_time = format_virtual_times(times, *cost);
    if (!flags.cluster.trace_path.empty()) {
      write_trace_creating_folders(flags.cluster.trace_path, trace);
    }
  }
  return print_report(report, output, flags.cluster.trace_path, virtual_time);
}

}  // namespace ranklab::cli
