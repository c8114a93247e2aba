#include "cli/run_command.hpp"

#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/job.hpp"
#include "cli/mpi_command.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/train_command.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::cli {

CLI::App& add_run_command(CLI::App& app, RunFlags& flags) {
  CLI::App& run = *app.add_subcommand(
      "run",
      "run the seed's TP/PP/DP training step on the virtual cluster, checked against the dense "
      "reference (the main job), or a --scenario");
  run.add_option("--scenario", flags.scenario, "a built-in scenario (see `ranklab scenarios`)");
  run.add_option("--count", flags.count, "elements per collective, for scenarios with a payload")
      ->capture_default_str();
  run.add_option("--backend", flags.backend,
                 "emulator (the virtual cluster), or mpi: every process started by `mpirun -np N "
                 "ranklab run --backend mpi` runs one rank over Open MPI, rank 0 reports")
      ->check(CLI::IsMember({"emulator", "mpi"}))
      ->capture_default_str();
  run.add_flag("--check-collectives", flags.check_collectives,
               "MPI: exchange every collective's fingerprint first, so mismatched calls fail "
               "(exit 4) before anything hangs (the emulator always checks)");
  add_cluster_flags(run, flags.cluster);
  add_cost_flags(run, flags.cost);
  add_train_flags(run, flags.train);
  return run;
}

int run_command(const RunFlags& flags) {
  if (flags.backend == "mpi") return run_command_on_mpi(flags);
  if (flags.cluster.algorithm == "mpi") {
    throw UsageError("--algo mpi calls the MPI library's own collectives: it needs --backend mpi");
  }
  if (flags.scenario.empty()) {
    return train_command(flags.cluster, flags.train, flags.cluster.world, flags.cost);
  }
  const std::unique_ptr<Job> job = make_job(flags);
  spdlog::info("starting {}", job->describe());
  const JobOutcome outcome = job->run(job->options());
  spdlog::info("run ended: {}", to_string(outcome.report.status));
  std::cout << outcome.text;
  const std::string& trace = flags.cluster.trace_path;
  if (!trace.empty()) {
    write_trace_creating_folders(trace, outcome.trace);
    std::cout << "trace: " << trace << "\n";
  }
  write_wait_graph(flags.cluster.wait_graph_path, outcome.report);
  return outcome.exit_code;
}

}  // namespace ranklab::cli
