// The input every trace-reading subcommand takes: `TRACE [MORE...] [--format F]`, read by
// traces/trace_input.hpp, so replay, diff, stats, export and explore accept the same inputs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::cli {

/// The help text of --format, from the formats' rows (traces/trace_input.hpp).
std::string format_help();

/// Adds --format to `command`, bound to `format`.
void add_format_flag(CLI::App& command, std::string& format);

/// Reads `paths` (one trace, or with pytorch-fr and nccl-log several files and folders) as
/// `format`. Throws UsageError for an unknown format, TraceError for bad input.
Trace read_trace_input(const std::string& format, const std::vector<std::string>& paths);

/// `path`, or with more paths "path (+N more)": how reports name the input.
std::string input_name(const std::string& path, const std::vector<std::string>& more);

}  // namespace ranklab::cli
