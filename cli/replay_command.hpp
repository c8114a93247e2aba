// `ranklab replay TRACE`: re-issue a recorded trace's operations on the fabric and say
// whether each rank's sequence and every message match reproduce (emulator/replay.hpp).
// Exit 0 reproduced, 2 not reproduced, 3/4/5 when the replayed run deadlocked, mismatched
// or failed (a recorded deadlock replays into exit 3), 1 bad usage or input.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cluster_flags.hpp"
#include "cli/cost_flags.hpp"
#include "traces/event.hpp"

namespace ranklab::cli {

struct ReplayFlags {
  std::string trace;
  std::vector<std::string> more_traces;  ///< pytorch-fr: further dump files or folders
  std::string format = "ranklab";
  bool json = false;
  std::uint64_t max_memory_mib = 0;  ///< 0: default_replay_memory_limit()
  /// "recorded": a receive from any source takes the sender it took when recorded; "free":
  /// the schedule chooses (ReplayOptions::free_any_source). Empty: the command's default
  /// (replay: recorded; explore: free).
  std::string wildcards;
  ClusterFlags cluster;
  CostFlags cost;
  /// replay only: "slow:R=xF" or "skip:R@OP" (cli/what_if.hpp); empty: none.
  std::string what_if;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_replay_command(CLI::App& app, ReplayFlags& flags);

/// The trace `flags` names, in its --format (cli/trace_input_flags.hpp).
Trace read_replay_input(const ReplayFlags& flags);

/// "policy rank-order, threads 1, send mode rendezvous": the replay's cluster, as its report
/// heads it.
std::string replay_cluster(const ClusterOptions& options);

/// Replays the trace and prints the report; returns the exit code.
int replay_command(const ReplayFlags& flags);

}  // namespace ranklab::cli
