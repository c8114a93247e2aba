// `ranklab torchrun`'s launcher: starts N PyTorch processes, each connected to a coordinator
// that runs, on the emulator's launcher (collectives/cluster.hpp), one ProcessProxy fiber per
// process as its rank program, so every torch.distributed call of the script runs on the
// emulator's fabric and every report and trace is the emulator's own (DESIGN.md §9).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/launcher.hpp"
#include "collectives/options.hpp"
#include "comm/run_report.hpp"
#include "emulator/options.hpp"

namespace ranklab::torch_bridge {

struct TorchRunOptions {
  std::string script;                    ///< the user's script, as given
  std::vector<std::string> script_args;  ///< its arguments
  std::string python;       ///< the interpreter that runs it
  std::string python_path;  ///< the folder holding the ranklab_torch package
  bool keep_backend = false;  ///< leave gloo and nccl process groups as the script asks
  std::string log_dir;        ///< empty: output prefixed on stderr
  std::string master_addr = "127.0.0.1";
  std::optional<int> master_port;  ///< unset: a free port on one node, else 29500
  int nproc_per_node = 1;
  int nnodes = 1;     ///< > 1: processes of other nodes join over TCP (MASTER_PORT + 1)
  int node_rank = 0;  ///< 0: this node runs the coordinator and reports
  /// world_size is nnodes x nproc_per_node. The bridge runs one worker thread: each fiber
  /// holds its worker while its process computes, so that decisions follow the policy.
  ClusterOptions cluster;
  LaunchOptions launch;  ///< the trace (record, its header's config), the default algorithm
  int connect_timeout_ms = 120'000;  ///< for every process to start and connect
};

struct TorchRunResult {
  Launched run;  ///< the report and trace: the master node's; empty on the others
  bool worker_node = false;  ///< this node only ran its processes: the report is the master's
  std::vector<std::string> process_endings;  ///< by local rank: "exit status 0", ...
  std::vector<int> killed;  ///< the ranks whose processes had to be killed at the end
  /// By rank: the script's frames at its last call, innermost first, as
  /// [[file, line, function], ...] (where a blocked rank waits).
  std::vector<nlohmann::json> python_stacks;
};

/// Runs the job; returns when every process has ended. Throws Error when the processes
/// cannot be started or do not connect (a bad interpreter, a script that fails before its
/// first line runs).
TorchRunResult run_torch_job(TorchRunOptions options);

}  // namespace ranklab::torch_bridge
