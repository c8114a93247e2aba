// The `ranklab` command: results on stdout, logs on stderr, exit codes per DESIGN.md §7
// (0 ok, 1 bad usage or input, 2 numerical check failed, 3 deadlock, 4 mismatch, 5 rank failed,
// 6 unsafe: a potential deadlock or a request leak).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cluster_flags.hpp"
#include "cli/diff_command.hpp"
#include "cli/explore_command.hpp"
#include "cli/export_command.hpp"
#include "cli/replay_command.hpp"
#include "cli/run_command.hpp"
#include "cli/scenarios_command.hpp"
#include "cli/schedule_command.hpp"
#include "cli/stats_command.hpp"
#include "cli/unsigned_flags.hpp"
#include "traces/error.hpp"

int main(int argc, char** argv) {
  using namespace ranklab::cli;
  CLI::App app{"ranklab: a distributed training cluster emulated in one process"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ranklab ") + RANKLAB_VERSION);
  // A bad usage is one line, like every other error (CLI11's default adds a second).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("ranklab: error: ") + e.what() + " (see --help)\n";
  });
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off")
      ->capture_default_str();

  RunFlags run_flags;
  CLI::App& run = add_run_command(app, run_flags);
  CLI::App& list = add_scenarios_command(app);
  DiffFlags diff_flags;
  CLI::App& diff = add_diff_command(app, diff_flags);
  StatsFlags stats_flags;
  CLI::App& stats = add_stats_command(app, stats_flags);
  ExportFlags export_flags;
  CLI::App& export_ = add_export_command(app, export_flags);
  ReplayFlags replay_flags;
  CLI::App& replay = add_replay_command(app, replay_flags);
  ScheduleFlags schedule_flags;
  CLI::App& schedule = add_schedule_command(app, schedule_flags);
  ExploreFlags explore_flags;
  CLI::App& explore = add_explore_command(app, explore_flags);
  // --log-level is the whole command's, and may come after the subcommand too (CLI11's
  // fallthrough would also send explore's pass-through arguments up to `ranklab`).
  for (CLI::App* command : app.get_subcommands({})) {
    command->add_option("--log-level", log_level, "as before the subcommand");
  }
  refuse_negative_unsigned(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // help is not an error; every bad usage exits 1
  }
  try {
    configure_logging(log_level);
    if (run) return run_command(run_flags);
    if (list) return scenarios_command();
    if (diff) return diff_command(diff_flags);
    if (stats) return stats_command(stats_flags);
    if (export_) return export_command(export_flags);
    if (replay) return replay_command(replay_flags);
    if (schedule) return schedule_command(schedule_flags);
    if (explore) return explore_command(explore_flags, explore);
  } catch (const ranklab::Error& e) {
    std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  }
  return 1;
}
