#include "traces/trace_input.hpp"

#include <fmt/format.h>

#include "traces/enum_names.hpp"
#include "traces/error.hpp"
#include "traces/flight_recorder.hpp"
#include "traces/jsonl.hpp"
#include "traces/nccl_log.hpp"
#include "traces/simgrid_ti.hpp"

namespace ranklab {
namespace {

Trace refuse_ras_snapshot(const std::vector<std::filesystem::path>& paths) {
  throw UsageError(fmt::format("{}: an NCCL RAS snapshot holds each rank's collective counts, "
                               "not its operations, so it cannot be replayed, diffed or "
                               "exported: `ranklab stats --format nccl-ras {}` reports who is "
                               "behind",
                               paths.front().string(), paths.front().string()));
}

// The formats, in the order --format's help lists them (stats-only ones last).
constexpr TraceFormat kFormats[] = {
    {"ranklab", "JSON Lines",
     [](const std::vector<std::filesystem::path>& paths) { return read_trace_file(paths.front()); }},
    {"simgrid-ti",
     "SMPI's time-independent trace: its trace.txt, the folder holding it, or a file of actions",
     [](const std::vector<std::filesystem::path>& paths) { return read_simgrid_ti(paths.front()); }},
    {"pytorch-fr",
     "PyTorch Flight Recorder dumps, JSON or pickle: one file per rank, or their folder",
     read_flight_recorder, /*several_paths=*/true},
    {"nccl-log",
     "NCCL_DEBUG=INFO logs with NCCL_DEBUG_SUBSYS=INIT,COLL: one file per process, one "
     "interleaved file, or their folder",
     read_nccl_logs, /*several_paths=*/true},
    {"nccl-ras",
     "what `ncclras` or `ncclras -f json` prints: one or more snapshots of one job, in the "
     "order taken",
     refuse_ras_snapshot, /*several_paths=*/true, /*stats_only=*/true},
};

// "pytorch-fr and nccl-log": the formats that take several files, for the error of one that
// does not.
std::string several_paths_names() {
  std::vector<std::string_view> names;
  for (const TraceFormat& format : kFormats) {
    if (format.several_paths && !format.stats_only) names.push_back(format.name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

std::span<const TraceFormat> trace_formats() { return kFormats; }

const TraceFormat* find_trace_format(std::string_view name) {
  for (const TraceFormat& format : kFormats) {
    if (format.name == name) return &format;
  }
  return nullptr;
}

std::string trace_format_names() {
  std::vector<std::string_view> names;
  for (const TraceFormat& format : kFormats) names.push_back(format.name);
  return alternatives_text(names);
}

Trace read_trace_input(const TraceFormat& format, const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) throw UsageError("no trace given");
  if (!format.several_paths && paths.size() != 1) {
    throw UsageError(fmt::format("{} paths given, but this format is one trace: {} (only "
                                 "--format {} take several files)",
                                 paths.size(), paths.front().string(), several_paths_names()));
  }
  return format.read(paths);
}

}  // namespace ranklab
