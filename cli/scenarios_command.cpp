#include "cli/scenarios_command.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli/scenarios.hpp"

namespace ranklab::cli {

CLI::App& add_scenarios_command(CLI::App& app) {
  return *app.add_subcommand("scenarios", "list the built-in scenarios, one line each");
}

int scenarios_command() {
  // One column for every name, the longest included (a fixed 20 pushed the longer names'
  // lines out of line).
  std::size_t width = 0;
  for (const auto& s : scenarios()) width = std::max(width, s.name.size());
  for (const auto& s : scenarios()) {
    std::cout << fmt::format("{:<{}} (world {}) {}\n", s.name, width, s.default_world, s.summary);
  }
  return 0;
}

}  // namespace ranklab::cli
