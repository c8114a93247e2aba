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
  if (name == "nccl-ras") return TraceFormat::nccl_ras;
  return std::nullopt;
}

std::string_view trace_format_names() { return "ranklab, simgrid-ti, pytorch-fr, nccl-log or nccl-ras"; }

Trace read_trace_input(TraceFormat format, const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) throw UsageError("no trace given");
  if (format == TraceFormat::pytorch_fr) return read_flight_recorder(paths);
  if (format == TraceFormat::nccl_log) return read_nccl_logs(paths);
  if (format == TraceFormat::nccl_ras) {
    throw UsageError(fmt::format("{}: an NCCL RAS snapshot holds each rank's collective counts, "
                                 "not its operations, so it cannot be replayed, diffed or "
                                 "exported: `ranklab stats --format nccl-ras {}` reports who is "
                                 "behind",
                                 paths.front().string(), paths.front().string()));
  }
  if (paths.size() != 1) {
    throw UsageError(fmt::format("{} paths given, but this format is one trace: {} (only "
                                 "--format pytorch-fr and nccl-log take several files)",
                                 paths.size(), paths.front().string()));
  }
  return format == TraceFormat::ranklab ? read_trace_file(paths.front())
                                        : read_simgrid_ti(paths.front());
}

}  // namespace ranklab
