#include "cli/mpi_command.hpp"

#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/cluster_flags.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/scenario_report.hpp"
#include "cli/scenarios.hpp"
#include "cli/train_command.hpp"
#include "collectives/mpi/mpi_run.hpp"
#include "comm/errors.hpp"

namespace ranklab::cli {
namespace {

constexpr const char* kLibraryAlgorithm = "mpi";

// The options every process of the job gets from the flags.
MpiOptions to_mpi_options(const RunFlags& flags) {
  if (!flags.cluster.faults.empty()) {
    throw UsageError("--fault: faults are injected by the emulator's fabric; run without "
                     "--backend mpi");
  }
  if (!flags.cluster.wait_graph_path.empty()) {
    throw UsageError("--wait-graph: on MPI, record a trace with --trace and replay it on the "
                     "emulator (ranklab replay TRACE --wait-graph FILE)");
  }
  // Checks --timeout-ms and --send-mode as the emulator does.
  const ClusterOptions cluster = to_cluster_options(flags.cluster, 1);
  MpiOptions options;
  options.library_collectives = flags.cluster.algorithm == kLibraryAlgorithm;
  options.check_collectives = flags.check_collectives;
  options.timeout = cluster.timeout;
  options.device = cluster.device;
  switch (cluster.send_mode.kind) {
    case SendMode::Kind::rendezvous: options.eager_bytes = 0; break;
    case SendMode::Kind::eager: options.eager_bytes = MpiOptions::kEager; break;
    case SendMode::Kind::eager_upto: options.eager_bytes = cluster.send_mode.eager_limit; break;
  }
  return options;
}

// The flags as the emulator's code reads them: `--algo mpi` is `direct` there, the MPI
// library's own collectives being the backend's business.
ClusterFlags emulator_flags(const ClusterFlags& flags) {
  ClusterFlags out = flags;
  if (out.algorithm == kLibraryAlgorithm) out.algorithm = "direct";
  return out;
}

void check_world(const std::optional<int>& world, int processes) {
  if (world && *world != processes) {
    throw UsageError(
        fmt::format("--world {} does not match mpirun -np {}", *world, processes));
  }
}

std::string algorithm_name(const RunFlags& flags) {
  return flags.cluster.algorithm == kLibraryAlgorithm
             ? kLibraryAlgorithm
             : std::string(to_string(to_algorithm(flags.cluster)));
}

// Rank 0's part once the run is over: only rank 0 writes and prints, so a failure there
// (an unwritable trace) is caught and becomes exit 1 rather than leaving others waiting.
template <typename Body>
int at_rank0(const MpiSession& session, Body body) {
  if (session.rank() != 0) return 0;
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  }
}

int run_main_job(MpiSession& session, const RunFlags& flags) {
  check_world(flags.cluster.world, session.size());
  TrainJob job(emulator_flags(flags.cluster), flags.train, std::nullopt, flags.cost);
  const ParallelConfig& layout = job.spec().layout;
  if (layout.world_size() != session.size()) {
    throw UsageError(fmt::format("mpirun -np {} does not match the layout: {} needs {} processes",
                                 session.size(), layout.describe(), layout.world_size()));
  }
  if (session.rank() == 0) {
    spdlog::info("starting {} MPI processes: {}", session.size(), layout.describe());
  }
  const std::string cluster = fmt::format("backend mpi, {} processes, algorithm {}",
                                          session.size(), algorithm_name(flags));
  TrainLaunch launch{.cluster = cluster, .send_mode = job.options().send_mode};
  if (flags.train.json) {  // a job that ends in MPI_Abort: its report as the same document
    launch.before_run = [&session](const TrainReport& before) {
      session.set_report_renderer([before](const RunReport& failed) {
        TrainReport report = before;
        report.run = failed;
        return to_json(report).dump(2) + "\n";
      });
    };
  }
  MpiLauncher launcher(session);
  TrainRun run = job.run(launcher, launch);
  const int code = at_rank0(session, [&] {
    if (!flags.cluster.no_trace) {  // as the emulator's main job: --no-trace writes none
      run.report.trace_path = flags.cluster.trace_path.empty() ? kMainTrace : flags.cluster.trace_path;
      write_trace_creating_folders(run.report.trace_path, run.trace);
    }
    if (flags.train.json) {
      std::cout << to_json(run.report).dump(2) << "\n";
    } else {
      print_text(std::cout, run.report);
    }
    return run.report.exit_code();
  });
  return broadcast_from_rank0(code);
}

int run_scenario(MpiSession& session, const RunFlags& flags) {
  if (const std::string flag = flags.train.first_given(); !flag.empty()) {
    throw UsageError(fmt::format("{} belongs to the main job, not to --scenario", flag));
  }
  const Scenario& scenario = find_scenario(flags.scenario);
  const int world = session.size();
  check_world(flags.cluster.world, world);
  check_scenario_world(scenario, world, fmt::format("mpirun -np {}", world));
  if (!scenario.faults.empty()) {
    throw UsageError(fmt::format("scenario {} injects faults ({}), which only the emulator can",
                                 scenario.name, fmt::join(scenario.faults, ", ")));
  }
  const ClusterFlags cluster = emulator_flags(flags.cluster);
  const Algorithm algorithm = to_algorithm(cluster);
  const ScenarioParams params{.count = flags.count};
  // The launcher's header adds the backend, the hosts and, with --algo mpi, that algorithm.
  const LaunchOptions options{.algorithm = algorithm,
                              .record = !flags.cluster.trace_path.empty(),
                              .trace_config = {{"program", "scenario"},
                                               {"scenario", scenario.name},
                                               {"count", params.count},
                                               {"algorithm", to_string(algorithm)}}};
  const std::string cluster_text = fmt::format("backend mpi, send mode {}, algorithm {}",
                                               cluster.send_mode, algorithm_name(flags));
  if (flags.train.json) {  // a job that ends in MPI_Abort: its report as the same document
    session.set_report_renderer([&](const RunReport& failed) {
      const ScenarioReport report{
          .scenario = scenario.name, .world = world, .cluster = cluster_text, .run = {}};
      nlohmann::ordered_json json = to_json(report, failed);
      json["trace"] = "";  // none is written
      return json.dump(2) + "\n";
    });
  }
  ScenarioOutput output(world);
  MpiLauncher launcher(session);
  const Launched run = launcher.run(options, [&](Communicator& comm) {
    scenario.body(comm, params, output);
  });
  // Each process holds its own rank's lines.
  std::string mine;
  for (const std::string& line : output.lines()) mine += line + "\n";
  const std::vector<std::string> lines = gather_to_rank0(mine);
  const int code = at_rank0(session, [&] {
    ScenarioReport report{.scenario = scenario.name,
                          .world = world,
                          .cluster = cluster_text,
                          .run = run.report};
    for (const std::string& rank_lines : lines) {
      std::istringstream split(rank_lines);
      for (std::string line; std::getline(split, line);) report.output.push_back(line);
    }
    nlohmann::ordered_json json = to_json(report);
    if (!flags.train.json) print_text(std::cout, report);
    if (!flags.cluster.trace_path.empty()) {
      write_trace_creating_folders(flags.cluster.trace_path, run.trace);
      if (!flags.train.json) std::cout << "trace: " << flags.cluster.trace_path << "\n";
    }
    json["trace"] = flags.cluster.trace_path;
    if (flags.train.json) std::cout << json.dump(2) << "\n";
    return exit_code(run.report.status);
  });
  return broadcast_from_rank0(code);
}

// Processes given different flags would part ways at the first step only some take (one
// records a trace, the other not) and wait for each other forever: rank 0 compares every
// process's flags with its own before anything runs. Collective over the world.
std::string disagreeing_flags(const RunFlags& flags) {
  const std::vector<std::string> encoded = gather_to_rank0(encode_flags(flags.given));
  std::vector<FlagsGiven> by_rank;
  for (const std::string& text : encoded) by_rank.push_back(decode_flags(text));
  return flags_disagreement(by_rank);  // empty but at rank 0
}

}  // namespace

int run_command_on_mpi(const RunFlags& flags) {
  // Flag errors are the same on every process: each exits 1, rank 0 says why. (Whether this
  // process is rank 0 is known only once MPI runs, so MPI starts first.)
  std::optional<MpiOptions> options;
  std::string flag_error;
  try {
    options = to_mpi_options(flags);
  } catch (const UsageError& e) {
    flag_error = e.what();
  }
  MpiSession session(options.value_or(MpiOptions{}));
  const std::string disagreement = disagreeing_flags(flags);
  if (broadcast_from_rank0(disagreement.empty() ? 0 : 1) != 0) {
    if (session.rank() == 0) std::cerr << "ranklab: error: " << disagreement << "\n";
    return 1;
  }
  try {
    if (!flag_error.empty()) throw UsageError(flag_error);
    return flags.scenario.empty() ? run_main_job(session, flags) : run_scenario(session, flags);
  } catch (const Error& e) {
    // Thrown before the run, alike on every process.
    if (session.rank() == 0) std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace ranklab::cli
