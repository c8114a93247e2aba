// The input every trace-reading subcommand takes: `TRACE [MORE...] [--format F]`, read by
// traces/trace_input.hpp, so replay, diff, stats, export and explore accept the same inputs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::cli {

/// The help text of --format.
inline constexpr const char* kFormatHelp =
    "ranklab (JSON Lines), simgrid-ti (SMPI's time-independent trace: its trace.txt, the "
    "folder holding it, or a file of actions), pytorch-fr (PyTorch Flight Recorder dumps, "
    "JSON or pickle: one file per rank, or their folder) or nccl-log (NCCL_DEBUG=INFO logs "
    "with NCCL_DEBUG_SUBSYS=INIT,COLL: one file per process, one interleaved file, or their "
    "folder); with stats only, nccl-ras (what `ncclras` or `ncclras -f json` prints: one or "
    "more snapshots of one job, in the order taken)";

/// Adds --format to `command`, bound to `format`.
void add_format_flag(CLI::App& command, std::string& format);

/// Reads `paths` (one trace, or with pytorch-fr and nccl-log several files and folders) as
/// `format`. Throws UsageError for an unknown format, TraceError for bad input.
Trace read_trace_input(const std::string& format, const std::vector<std::string>& paths);

/// `path`, or with more paths "path (+N more)": how reports name the input.
std::string input_name(const std::string& path, const std::vector<std::string>& more);

}  // namespace ranklab::cli
