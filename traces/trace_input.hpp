// Every input a trace tool reads, behind one function: ranklab's JSON Lines traces and the
// traces other tools write (SimGrid SMPI time-independent traces, PyTorch Flight Recorder
// dumps, NCCL debug logs), so `replay`, `diff`, `stats`, `export` and `explore` take the same inputs.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "traces/event.hpp"

namespace ranklab {

enum class TraceFormat {
  ranklab,     ///< JSON Lines (traces/FORMAT.md): one file
  simgrid_ti,  ///< SMPI's trace.txt, its folder, or a file of actions (traces/simgrid_ti.hpp)
  pytorch_fr,  ///< Flight Recorder dumps: files and folders of them (traces/flight_recorder.hpp)
  nccl_log,    ///< NCCL debug logs: files and folders of them (traces/nccl_log.hpp)
  nccl_ras,    ///< NCCL RAS snapshots: counts, not operations (traces/nccl_ras.hpp); stats only
};

/// "ranklab", "simgrid-ti", "pytorch-fr", "nccl-log" or "nccl-ras"; std::nullopt otherwise.
std::optional<TraceFormat> parse_trace_format(std::string_view name);

/// The names parse_trace_format knows, for messages: "ranklab, simgrid-ti, ... or nccl-ras".
std::string_view trace_format_names();

/// Reads `paths` as `format`. Formats of one file refuse more than one path (UsageError);
/// unreadable or malformed input is a TraceError naming the file. A RAS snapshot is no trace:
/// nccl-ras is a UsageError that names the command which reads it.
Trace read_trace_input(TraceFormat format, const std::vector<std::filesystem::path>& paths);

}  // namespace ranklab
