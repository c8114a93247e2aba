// The `ranklab` command: results on stdout, logs on stderr, exit codes per DESIGN.md §7
// (0 ok, 1 bad usage or input, 2 numerical check failed, 3 deadlock, 4 mismatch, 5 rank failed).
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/cluster_flags.hpp"
#include "cli/run_command.hpp"
#include "cli/scenarios_command.hpp"
#include "traces/error.hpp"

int main(int argc, char** argv) {
  using namespace ranklab::cli;
  CLI::App app{"ranklab: a distributed training cluster emulated in one process"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off")
      ->capture_default_str();

  RunFlags run_flags;
  CLI::App& run = add_run_command(app, run_flags);
  CLI::App& list = add_scenarios_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // help is not an error; every bad usage exits 1
  }
  try {
    configure_logging(log_level);
    if (run) return run_command(run_flags);
    if (list) return scenarios_command();
  } catch (const ranklab::Error& e) {
    std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ranklab: error: " << e.what() << "\n";
    return 1;
  }
  return 1;
}
