#include "cli/run_command.hpp"

#include <filesystem>
#include <iostream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "cli/choice_flags.hpp"
#include "cli/explore.hpp"
#include "cli/job.hpp"
#include "cli/mpi_command.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/timing_matches.hpp"
#include "cli/train_command.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::cli {

CLI::App& add_run_command(CLI::App& app, RunFlags& flags) {
  CLI::App& run = *app.add_subcommand(
      "run",
      "run the seed's TP/PP/DP training step on the virtual cluster, checked against the dense "
      "reference (the main job), or a --scenario");
  run.add_option("--scenario", flags.scenario, "a built-in scenario (see `ranklab scenarios`)")
      ->check(not_empty("names no scenario: `ranklab scenarios` lists them"));
  run.add_option("--count", flags.count, "elements per collective, for scenarios with a payload")
      ->capture_default_str();
  run.add_flag("--compare-rank-order", flags.compare_rank_order,
               "also run under rank-order and fail (exit 2) where the results or any rank's "
               "events differ, printing the first divergence (explore's nondeterminism check)");
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
  run.parse_complete_callback([&run, &flags] { flags.given = flags_given(run); });
  return run;
}

namespace {

void print_without_result_lines(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("result: ")) std::cout << line << "\n";
  }
}

void write_trace_if_asked(const ClusterFlags& cluster, const Trace& trace) {
  if (!cluster.trace_path.empty()) write_trace_creating_folders(cluster.trace_path, trace);
}

// The text report's last line, when a trace was written.
void print_trace_line(const ClusterFlags& cluster) {
  if (!cluster.trace_path.empty()) std::cout << "trace: " << cluster.trace_path << "\n";
}

// The run's JSON document, with the trace it wrote.
void print_json(nlohmann::ordered_json json, const ClusterFlags& cluster) {
  json["trace"] = cluster.trace_path;
  std::cout << json.dump(2) << "\n";
}

// The run under its policy, then under rank order: the same results and per-rank events, or
// the first divergence and exit 2. So explore's `reproduce:` line for nondeterminism shows
// the finding when run.
int run_compared_with_rank_order(const Job& job, const ClusterFlags& cluster, bool json) {
  ClusterOptions reference_options = job.options();
  reference_options.policy = SchedulePolicy{};
  const JobOutcome outcome = job.run(job.options());
  const JobOutcome reference = job.run(reference_options);
  const std::optional<Verdict> verdict = judge(outcome, &reference);
  write_trace_if_asked(cluster, outcome.trace);
  write_wait_graph(cluster.wait_graph_path, outcome.report);
  const bool diverged = outcome.exit_code == 0 && verdict;
  const std::string policy = job.options().policy.to_string();
  const std::string difference =
      diverged ? describe_difference(reference, outcome, "rank-order", policy) : "";
  if (json) {
    nlohmann::ordered_json doc = outcome.json();
    doc["comparison"] = {{"reference_policy", "rank-order"},
                         {"same", !diverged},
                         {"why", diverged ? verdict->why : ""},
                         {"difference", difference}};
    if (diverged) {
      doc["status"] = verdict->kind;
      doc["exit_code"] = 2;
      doc["result"] = verdict->why;
    }
    print_json(std::move(doc), cluster);
    return diverged ? 2 : outcome.exit_code;
  }
  if (!diverged) {
    std::cout << outcome.text();
    if (outcome.exit_code == 0) {
      std::cout << "compared with rank-order: the same results and per-rank events\n";
    }
    print_trace_line(cluster);
    return outcome.exit_code;
  }
  print_without_result_lines(outcome.text());
  std::cout << "compared with rank-order: " << verdict->why << "\n";
  std::istringstream lines(difference);
  for (std::string line; std::getline(lines, line);) {
    std::cout << (line.empty() ? "" : "  ") << line << "\n";
  }
  print_trace_line(cluster);
  std::cout << "result: " << verdict->why << "\n";
  return 2;
}

}  // namespace

int run_command(const RunFlags& flags) {
  if (flags.backend == "mpi") return run_command_on_mpi(flags);
  if (flags.cluster.algorithm == "mpi") {
    throw UsageError("--algo mpi calls the MPI library's own collectives: it needs --backend mpi");
  }
  const bool json = flags.train.json;
  if (flags.compare_rank_order) {
    return run_compared_with_rank_order(*make_job(flags), flags.cluster, json);
  }
  if (flags.scenario.empty()) {
    return train_command(flags.cluster, flags.train, flags.cluster.world, flags.cost);
  }
  const std::unique_ptr<Job> job = make_job(flags);
  spdlog::info("starting {}", job->describe());
  // Nobody reads a trace that is not written, but on several threads the report reads it
  // for the receives that timing matched.
  const bool trace_read = !flags.cluster.trace_path.empty() || job->options().threads > 1;
  const JobOutcome outcome =
      trace_read ? job->run(job->options()) : job->run_unrecorded(job->options());
  spdlog::info("run ended: {}", to_string(outcome.report.status));
  write_trace_if_asked(flags.cluster, outcome.trace);
  write_wait_graph(flags.cluster.wait_graph_path, outcome.report);
  const std::vector<std::string> timing =
      timing_report(outcome.trace, job->options().threads, flags.cluster.trace_path);
  if (json) {
    nlohmann::ordered_json doc = outcome.json();
    doc["timing_matches"] = timing;
    print_json(std::move(doc), flags.cluster);
  } else {
    std::cout << outcome.text();
    for (const std::string& line : timing) std::cout << line << "\n";
    print_trace_line(flags.cluster);
  }
  return outcome.exit_code;
}

}  // namespace ranklab::cli
