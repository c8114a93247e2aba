#include "cli/scenarios_command.hpp"

#include <iostream>

#include <fmt/format.h>

#include "cli/scenarios.hpp"

namespace ranklab::cli {

CLI::App& add_scenarios_command(CLI::App& app) {
  return *app.add_subcommand("scenarios", "list the built-in scenarios, one line each");
}

int scenarios_command() {
  for (const auto& s : scenarios()) {
    std::cout << fmt::format("{:<20} (world {}) {}\n", s.name, s.default_world, s.summary);
  }
  return 0;
}

}  // namespace ranklab::cli
