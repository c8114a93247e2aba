// The `ranklab` command: results on stdout, logs on stderr, exit codes per DESIGN.md §7
// (0 ok, 1 bad usage or input, 2 numerical check failed, 3 deadlock, 4 mismatch, 5 rank failed,
// 6 unsafe: a potential deadlock or a request leak), and 70 for an internal error
// (cli/error_exit.hpp).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/choice_flags.hpp"
#include "cli/cluster_flags.hpp"
#include "cli/diff_command.hpp"
#include "cli/error_exit.hpp"
#include "cli/explore_command.hpp"
#include "cli/export_command.hpp"
#include "cli/replay_command.hpp"
#include "cli/run_command.hpp"
#include "cli/scenarios_command.hpp"
#include "cli/schedule_command.hpp"
#include "cli/stats_command.hpp"
#include "cli/torchrun_command.hpp"
#include "cli/unsigned_flags.hpp"
#include "model/kernels/dispatch.hpp"

namespace {

// A large world allocates a few KiB per rank on its worker threads, whose glibc arenas grow
// 128 KiB (M_TOP_PAD's default) at a time, each growth an mprotect: 8% of a 65,536-rank run's
// samples. Asking for 64 MiB at a time reserves address space only (pages are still faulted
// in as used). MALLOC_TOP_PAD_ in the environment, glibc's own knob, still wins.
// bench/RESULTS.md, "Issue 19", §3.
void grow_malloc_arenas_in_large_steps() {
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) ::mallopt(M_TOP_PAD, 64 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ranklab::cli;
  grow_malloc_arenas_in_large_steps();
  CLI::App app{"ranklab: a distributed training cluster emulated in one process"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", std::string("ranklab ") + RANKLAB_VERSION);
  // A bad usage is one line, like every other error (CLI11's default adds a second).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("ranklab: error: ") + e.what() + " (see --help)\n";
  });
  std::string log_level = "warn";
  const CLI::Validator log_levels = parsed_as(
      "{trace,debug,info,warn,error,critical,off}", parse_log_level);
  app.add_option("--log-level", log_level, "what is logged on stderr")
      ->check(log_levels)
      ->capture_default_str();

  RunFlags run_flags;
  CLI::App& run = add_run_command(app, run_flags);
  TorchRunFlags torchrun_flags;
  CLI::App& torchrun = add_torchrun_command(app, torchrun_flags);
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
    command->add_option("--log-level", log_level, "as before the subcommand")->check(log_levels);
  }
  refuse_negative_unsigned(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help is not an error; every bad usage exits 1.
    return flush_standard_output(app.exit(e) == 0 ? 0 : 1, std::cerr);
  }
  const auto dispatch = [&]() -> int {
    configure_logging(log_level);
    // The dense kernels' instruction set, resolved before any rank computes: a bad
    // RANKLAB_ISA is then one usage error here rather than a failure in every rank.
    spdlog::info("dense kernels: {}", ranklab::kernels::active_kernels().isa);
    if (run) return run_command(run_flags);
    if (torchrun) {
      for (const std::string& arg : torchrun.remaining()) torchrun_flags.script_args.push_back(arg);
      return torchrun_command(torchrun_flags);
    }
    if (list) return scenarios_command();
    if (diff) return diff_command(diff_flags);
    if (stats) return stats_command(stats_flags);
    if (export_) return export_command(export_flags);
    if (replay) return replay_command(replay_flags);
    if (schedule) return schedule_command(schedule_flags);
    if (explore) return explore_command(explore_flags, explore);
    return 1;
  };
  int code = 1;
  try {
    code = dispatch();
  } catch (const std::exception& e) {
    code = report_error(e, std::cerr);
  }
  return flush_standard_output(code, std::cerr);
}
