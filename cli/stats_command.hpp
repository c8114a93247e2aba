// `ranklab stats TRACE`: messages and bytes per group kind and per operation, and the
// rank x rank matrix of point-to-point traffic (traces/stats.hpp defines what counts).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ranklab::cli {

struct StatsFlags {
  std::string trace;
  std::vector<std::string> more_traces;  ///< pytorch-fr: further dump files or folders
  std::string format = "ranklab";
  bool json = false;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_stats_command(CLI::App& app, StatsFlags& flags);

/// Prints the statistics; returns the exit code.
int stats_command(const StatsFlags& flags);

}  // namespace ranklab::cli
