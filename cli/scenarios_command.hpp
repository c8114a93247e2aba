// `ranklab scenarios`: the built-in scenarios, one line each.
#pragma once

#include <CLI/CLI.hpp>

namespace ranklab::cli {

CLI::App& add_scenarios_command(CLI::App& app);
int scenarios_command();

}  // namespace ranklab::cli
