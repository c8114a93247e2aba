// The command-line flags every cluster-running subcommand shares, and their translation
// into ClusterOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <spdlog/common.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/options.hpp"
#include "emulator/options.hpp"

namespace ranklab::cli {

struct ClusterFlags {
  std::optional<int> world;  ///< unset: the program's default
  std::string policy = "rank-order";
  int threads = 1;
  std::string send_mode = "rendezvous";
  std::string algorithm = "direct";
  std::string device = "cpu";  ///< every rank's device (comm/device.hpp)
  long timeout_ms = 60'000;
  std::size_t stack_kib = 256;
  std::string trace_path;  ///< empty: no trace (the main job: traces/main.jsonl)
  bool no_trace = false;   ///< --no-trace: not even the main job's default one
  std::vector<std::string> faults;  ///< --fault, repeatable (emulator/faults.hpp)
  std::string wait_graph_path;      ///< empty: no wait-for graph file
};

/// Which flags a subcommand takes: a program to run takes all; a replay takes its world
/// and its operations from the trace, so neither --world nor --algo.
/// A PyTorch script (torchrun) takes its world from --nproc-per-node and runs on one thread
/// with host tensors, so neither --world, --threads, --algo nor --device.
enum class ClusterFlagSet { program, replay, torch };

/// Adds --world --policy --threads --send-mode --algo --device --timeout-ms --stack-kib
/// --trace --fault --wait-graph (without --world, --algo and --device for
/// ClusterFlagSet::replay).
void add_cluster_flags(CLI::App& command, ClusterFlags& flags,
                       ClusterFlagSet set = ClusterFlagSet::program);

/// ClusterOptions for `world_size` ranks; throws UsageError naming the bad flag (and for
/// --device cuda on a build without CUDA). Opens no file: the trace sink is attached by
/// the caller.
ClusterOptions to_cluster_options(const ClusterFlags& flags, int world_size);

/// Writes `trace` to `path`, creating its folder first.
void write_trace_creating_folders(const std::string& path, const Trace& trace);

/// The sink that writes --trace (creating its folder), or null without --trace.
std::shared_ptr<JsonlFileSink> open_trace_sink(const ClusterFlags& flags);

/// The --algo value; throws UsageError listing the known names.
Algorithm to_algorithm(const ClusterFlags& flags);
/// --algo's value; throws UsageError naming the algorithms for another.
Algorithm parse_algorithm_flag(std::string_view name);
/// --log-level's value: "trace" ... "off"; throws UsageError for another.
spdlog::level::level_enum parse_log_level(std::string_view level);

/// Sets spdlog's level from --log-level; logs go to stderr, results to stdout.
void configure_logging(const std::string& level);

}  // namespace ranklab::cli
