#include "cli/stats_command.hpp"

#include <iostream>

#include "traces/jsonl.hpp"
#include "traces/stats.hpp"

namespace ranklab::cli {

CLI::App& add_stats_command(CLI::App& app, StatsFlags& flags) {
  CLI::App& stats = *app.add_subcommand(
      "stats", "traffic of a trace: per group kind, per operation, rank x rank matrix");
  stats.add_option("TRACE", flags.trace, "trace (JSON Lines)")->required();
  stats.add_flag("--json", flags.json, "print the statistics as JSON");
  return stats;
}

int stats_command(const StatsFlags& flags) {
  const TraceStats stats = compute_stats(read_trace_file(flags.trace));
  if (flags.json) {
    nlohmann::json out = stats_to_json(stats);
    out["trace"] = flags.trace;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << format_stats(stats, flags.trace);
  }
  return 0;
}

}  // namespace ranklab::cli
