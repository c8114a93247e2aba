// `ranklab export --perfetto`: a trace as Chrome Trace Event Format JSON, which
// ui.perfetto.dev and chrome://tracing open.
//
// Mapping: a process per rank (pid = rank + 1: Perfetto keeps pid 0 for the idle
// process; the process is named "rank R"), one thread in it, a complete slice ("X") per
// operation named like "send to 3" or "all_reduce tp[0,1]" whose args are the event's
// trace line, and a flow ("s" on the send's slice, "f" on the receive's) per message whose
// two ends are in the trace, named after its message id ("msg 0:4"). Time is Timeline's:
// Lamport ticks drawn as microseconds until events carry virtual time.
//
// Big traces can be capped (`ranklab export --perfetto-max-events N`): only the N earliest
// operations on the axis get slices (and arrows, where both ends are drawn), and otherData
// says how many of how many ("operations_written", "operations").
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>

#include "traces/event.hpp"

namespace ranklab {

struct PerfettoOptions {
  std::size_t max_events = 0;  ///< operations drawn, the earliest first; 0: all
};

/// What was written: the trace's operations and how many of them got slices.
struct PerfettoSummary {
  std::size_t operations = 0;
  std::size_t written = 0;
  bool capped() const { return written < operations; }
};

/// Writes the JSON object {"traceEvents": [...], "displayTimeUnit", "otherData"}.
PerfettoSummary write_perfetto(std::ostream& out, const Trace& trace,
                               const PerfettoOptions& options = {});

/// Writes it to `path`; throws TraceError naming the path if it cannot.
PerfettoSummary write_perfetto_file(const std::filesystem::path& path, const Trace& trace,
                                    const PerfettoOptions& options = {});

}  // namespace ranklab
