// --max-memory-mib, shared by `replay` (its buffers) and `run`'s main job (its model, copies
// and per-step records): the same flag, the same default and the same refusal of 0.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace ranklab::cli {

/// Adds --max-memory-mib to `command`, storing MiB in `mib` (0 or absent: the default);
/// `help` says what it bounds.
template <typename T>
CLI::Option* add_max_memory_flag(CLI::App& command, T& mib, const std::string& help);

/// The limit in bytes for --max-memory-mib `mib` (0: default_replay_memory_limit(), half of
/// this machine's memory), and how a refusal names it.
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string described;  ///< "... (--max-memory-mib sets it)"
};
MemoryLimit memory_limit(std::uint64_t mib);

/// Refuses 0 in one line (CLI::PositiveNumber printed its range: 0.000000 to a 309-digit
/// double).
const CLI::Validator& at_least_one_mib();

template <typename T>
CLI::Option* add_max_memory_flag(CLI::App& command, T& mib, const std::string& help) {
  return command.add_option("--max-memory-mib", mib, help)->check(at_least_one_mib());
}

}  // namespace ranklab::cli
