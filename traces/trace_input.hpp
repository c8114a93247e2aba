// Every input a trace tool reads, behind one function: ranklab's JSON Lines traces and the
// traces other tools write (SimGrid SMPI time-independent traces, PyTorch Flight Recorder
// dumps, NCCL debug logs), so `replay`, `diff`, `stats`, `export` and `explore` take the same
// inputs. Each format is one row of traces/trace_input.cpp: --format's choices, help and
// errors derive from the rows, so adding a format is its reader and its row.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

/// One input format.
struct TraceFormat {
  std::string_view name;         ///< --format's value: "simgrid-ti"
  std::string_view description;  ///< what it reads, for --format's help
  /// Reads the paths (never empty; exactly one unless `several_paths`). Throws TraceError
  /// naming the file for unreadable or malformed input.
  Trace (*read)(const std::vector<std::filesystem::path>& paths);
  bool several_paths = false;  ///< files and folders of them (one per rank, process, ...)
  /// Counts rather than operations (NCCL RAS snapshots): read by `stats` alone, and `read`
  /// refuses it with a UsageError naming that command.
  bool stats_only = false;
};

/// Every format, in the order --format's help lists them.
std::span<const TraceFormat> trace_formats();

/// The format named `name`, or null.
const TraceFormat* find_trace_format(std::string_view name);

/// The names find_trace_format knows, for messages: "ranklab, simgrid-ti, ... or nccl-ras".
std::string trace_format_names();

/// Reads `paths` as `format`. Formats of one file refuse more than one path (UsageError);
/// unreadable or malformed input is a TraceError naming the file. A stats-only format is no
/// trace: a UsageError that names the command which reads it.
Trace read_trace_input(const TraceFormat& format, const std::vector<std::filesystem::path>& paths);

}  // namespace ranklab
