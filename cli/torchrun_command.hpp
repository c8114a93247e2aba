// `ranklab torchrun`: an unmodified torch.distributed script on the emulator's fabric, one
// Python process per rank (backends/torch, python/ranklab_torch), with run's reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cluster_flags.hpp"

namespace ranklab::cli {

struct TorchRunFlags {
  ClusterFlags cluster;
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string python;  ///< empty: the first python3 on PATH that has torch, else /usr/bin/python3
  bool keep_backend = false;
  std::string log_dir;
  std::string master_addr = "127.0.0.1";
  std::optional<int> master_port;
  bool json = false;
  std::string script;
  std::vector<std::string> script_args;
};

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_torchrun_command(CLI::App& app, TorchRunFlags& flags);

/// Runs the script; returns the process exit code (DESIGN.md §7).
int torchrun_command(const TorchRunFlags& flags);

}  // namespace ranklab::cli
