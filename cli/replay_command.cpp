#include "cli/replay_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "emulator/errors.hpp"
#include "emulator/replay.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::cli {

CLI::App& add_replay_command(CLI::App& app, ReplayFlags& flags) {
  CLI::App& command = *app.add_subcommand(
      "replay",
      "re-issue every rank's recorded operations on the fabric (synthetic payloads) and check "
      "that each rank's sequence and every send->receive match reproduce (exit 0 reproduced, "
      "2 not, 3 deadlock, 4 mismatch, 5 a rank failed)");
  command.add_option("TRACE", flags.trace, "trace to replay (JSON Lines)")->required();
  command.add_option("--format", flags.format, "trace format: ranklab")->capture_default_str();
  command.add_flag("--json", flags.json, "print the report as JSON");
  add_cluster_flags(command, flags.cluster, ClusterFlagSet::replay);
  return command;
}

int replay_command(const ReplayFlags& flags) {
  if (flags.format != "ranklab") {
    throw UsageError(fmt::format("unknown --format '{}': expected ranklab", flags.format));
  }
  const Trace trace = read_trace_file(flags.trace);
  ReplayOptions options;
  options.cluster = to_cluster_options(flags.cluster, trace.header.world_size);
  options.cluster.trace_sink = open_trace_sink(flags.cluster);
  options.cluster.trace_config = {{"program", "replay"}, {"replayed", flags.trace}};

  spdlog::info("replaying {} ({} ranks)", flags.trace, trace.header.world_size);
  const ReplayReport report = replay_trace(trace, options);
  if (flags.json) {
    std::cout << replay_to_json(report, flags.trace).dump(2) << "\n";
  } else {
    std::cout << fmt::format("replay: policy {}, threads {}, send mode {}\n",
                             options.cluster.policy.to_string(), options.cluster.threads,
                             options.cluster.send_mode.to_string())
              << format_replay(report, flags.trace);
    if (!flags.cluster.trace_path.empty())
      std::cout << "trace: " << flags.cluster.trace_path << "\n";
  }
  return replay_exit_code(report);
}

}  // namespace ranklab::cli
