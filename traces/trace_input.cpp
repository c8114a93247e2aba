#include "traces/trace_input.hpp"

#include <fmt/format.h>

#include "traces/error.hpp"
#include "traces/flight_recorder.hpp"
#include "traces/jsonl.hpp"
#include "traces/nccl_log.hpp"
#include "traces/simgrid_ti.hpp"

namespace ranklab {

std::optional<TraceFormat> parse_trace_format(std::string_view name) {
  if (name == "ranklab") return TraceFormat::ranklab;
  if (name == "simgrid-ti") return TraceFormat::simgrid_ti;
  if (name == "pytorch-fr") return TraceFormat::pytorch_fr;
  if (name == "nccl-log") return TraceFormat::nccl_log;
  return std::nullopt;
}

std::string_view trace_format_names() { return "ranklab, simgrid-ti, pytorch-fr or nccl-log"; }

Trace read_trace_input(TraceFormat format, const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) throw UsageError("no trace given");
  if (format == TraceFormat::pytorch_fr) return read_flight_recorder(paths);
  if (format == TraceFormat::nccl_log) return read_nccl_logs(paths);
  if (paths.size() != 1) {
    throw UsageError(fmt::format("{} paths given, but this format is one trace: {} (only "
                                 "--format pytorch-fr and nccl-log take several files)",
                                 paths.size(), paths.front().string()));
  }
  return format == TraceFormat::ranklab ? read_trace_file(paths.front())
                                        : read_simgrid_ti(paths.front());
}

}  // namespace ranklab
