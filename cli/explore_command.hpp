// `ranklab explore (--scenario NAME | --run [ARGS...] | TRACE [ARGS...]) [--runs K]
// [--strategy random|pct] [--jobs J]`: the schedule explorer of cli/explore.hpp on what
// `ranklab run ARGS` (or `ranklab replay TRACE ARGS`) runs. Every argument explore does not
// know is one of that command's, parsed by the same code, so the command it prints to
// reproduce a failure is exactly `ranklab run ARGS --policy P`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/explore.hpp"

namespace ranklab::cli {

struct ExploreFlags {
  std::string scenario;
  bool run = false;
  int runs = 100;
  std::string strategy = "random";
  int depth = 3;
  std::optional<int> jobs;  ///< unset: one per hardware thread
  bool no_shrink = false;
  bool json = false;
  bool keep_send_mode = false;  ///< every schedule under --send-mode (else odd ones under the other)
  std::vector<std::string> run_args;  ///< filled from the arguments explore does not know
};

/// --strategy's value; throws UsageError for another.
Strategy parse_strategy(std::string_view text);

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_explore_command(CLI::App& app, ExploreFlags& flags);

/// Runs the exploration and prints the report; returns the failing run's exit code (2 for
/// nondeterminism), or 0 if every schedule passed and agreed.
int explore_command(ExploreFlags flags, const CLI::App& command);

}  // namespace ranklab::cli
