// `ranklab run`: runs the main job (the seed's TP/PP/DP training step, cli/train_command.hpp)
// or, with --scenario, a built-in scenario, on a fresh cluster and reports.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cluster_flags.hpp"
#include "cli/cost_flags.hpp"
#include "cli/flags_given.hpp"
#include "cli/train_flags.hpp"

namespace ranklab::cli {

struct RunFlags {
  ClusterFlags cluster;
  std::string scenario;  ///< empty: the main job
  std::size_t count = 16;
  TrainFlags train;  ///< the main job's flags; refused next to --scenario
  CostFlags cost;    ///< time the run's trace under a cost model
  /// --compare-rank-order: also run under rank order; differing results or per-rank events
  /// fail the run (exit 2), as explore's nondeterminism check does.
  bool compare_rank_order = false;
  std::string backend = "emulator";  ///< or "mpi": this process is one rank of an MPI job
  bool check_collectives = false;    ///< MPI: exchange fingerprints before each collective
  /// The flags as given, for the processes of an MPI job to check that they agree.
  FlagsGiven given;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_run_command(CLI::App& app, RunFlags& flags);

/// Runs what `flags` name; returns the process exit code (DESIGN.md §7).
int run_command(const RunFlags& flags);

}  // namespace ranklab::cli
