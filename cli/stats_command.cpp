#include "cli/stats_command.hpp"

#include <iostream>

#include "cli/ras_stats.hpp"
#include "cli/trace_input_flags.hpp"
#include "emulator/report_json.hpp"
#include "traces/stats.hpp"

namespace ranklab::cli {

CLI::App& add_stats_command(CLI::App& app, StatsFlags& flags) {
  CLI::App& stats = *app.add_subcommand(
      "stats", "traffic of a trace: per group kind, per operation, rank x rank matrix");
  stats.add_option("TRACE", flags.trace, "trace (JSON Lines, or in the --format given)")->required();
  stats.add_option("MORE", flags.more_traces, "with --format pytorch-fr or nccl-log: further dump or log files or folders; with nccl-ras: later snapshots");
  add_format_flag(stats, flags.format);
  stats.add_flag("--json", flags.json, "print the statistics as JSON instead of text (docs/json.md)");
  return stats;
}

int stats_command(const StatsFlags& flags) {
  std::vector<std::string> paths = {flags.trace};
  paths.insert(paths.end(), flags.more_traces.begin(), flags.more_traces.end());
  if (flags.format == kRasFormat) return ras_stats(paths, flags.json);
  const TraceStats stats = compute_stats(read_trace_input(flags.format, paths));
  const std::string name = input_name(flags.trace, flags.more_traces);
  if (flags.json) {
    nlohmann::ordered_json out = report_header("stats", "ok", 0);
    out["trace"] = name;
    out.update(nlohmann::ordered_json(stats_to_json(stats)));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << format_stats(stats, name);
  }
  return 0;
}

}  // namespace ranklab::cli
