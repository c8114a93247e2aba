// `ranklab diff A B`: the first divergence of each rank between two traces
// (traces/diff.hpp says what is compared). Exit 0 identical, 2 different, 1 bad input.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ranklab::cli {

struct DiffFlags {
  std::string a;
  std::string b;
  std::string format = "ranklab";  ///< of both
  bool json = false;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_diff_command(CLI::App& app, DiffFlags& flags);

/// Compares the traces and prints the report; returns the exit code.
int diff_command(const DiffFlags& flags);

/// The exit code of two traces that differ.
inline constexpr int kExitDifferent = 2;

}  // namespace ranklab::cli
