// `ranklab export --perfetto`: a trace as Chrome Trace Event Format JSON, which
// ui.perfetto.dev and chrome://tracing open.
//
// Mapping: a process per rank (pid = rank + 1: Perfetto keeps pid 0 for the idle
// process; the process is named "rank R"), one thread in it, a complete slice ("X") per
// operation named like "send to 3" or "all_reduce tp[0,1]" whose args are the event's
// trace line, and a flow ("s" on the send's slice, "f" on the receive's) per message whose
// two ends are in the trace, named after its message id ("msg 0:4"). Time is Timeline's:
// Lamport ticks drawn as microseconds until events carry virtual time.
#pragma once

#include <filesystem>
#include <iosfwd>

#include "traces/event.hpp"

namespace ranklab {

/// Writes the JSON object {"traceEvents": [...], "displayTimeUnit", "otherData"}.
void write_perfetto(std::ostream& out, const Trace& trace);

/// Writes it to `path`; throws TraceError naming the path if it cannot.
void write_perfetto_file(const std::filesystem::path& path, const Trace& trace);

}  // namespace ranklab
