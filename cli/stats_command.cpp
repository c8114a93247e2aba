#include "cli/stats_command.hpp"

#include <iostream>

#include "cli/ras_stats.hpp"
#include "cli/trace_input_flags.hpp"
#include "emulator/report_json.hpp"
#include "traces/stats.hpp"
#include "traces/wait_analysis.hpp"

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
  const Trace trace = read_trace_input(flags.format, paths);
  const TraceStats stats = compute_stats(trace);
  const std::string name = input_name(flags.trace, flags.more_traces);
  if (flags.json) {
    nlohmann::ordered_json out = report_header("stats", "ok", 0);
    out["trace"] = name;
    out.update(nlohmann::ordered_json(stats_to_json(stats)));
    // A timed trace: who waited for whom by its own times (traces/wait_analysis.hpp).
    if (nlohmann::json timing = recorded_timing_to_json(trace); !timing.is_null()) {
      out["timing"] = std::move(timing);
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << format_stats(stats, name);
    if (const std::string timing = format_recorded_timing(trace); !timing.empty()) {
      std::cout << "\n" << timing;
    }
  }
  return 0;
}

}  // namespace ranklab::cli
