// Events as people read them: the short label of a timeline slice and the one-line
// description that `ranklab diff` prints. Shared by diff, stats and the exporters so an
// operation reads the same everywhere.
#pragma once

#include <string>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

/// The name of the event's group; throws UsageError if the header has no such group
/// (only possible for a trace built in memory: the reader rejects unknown groups).
const std::string& group_name(const TraceHeader& header, const TraceEvent& event);

/// A slice label: "send to 3", "recv from 2", "recv from any", "all_reduce tp[0,1]".
std::string event_label(const TraceEvent& event, const TraceHeader& header);

/// Every field that `ranklab diff` compares, on one line:
/// "#4 send world peer 1 tag 0 4 x f32 hash 0123456789abcdef msg 0:4" (+ " pending").
std::string describe_event(const TraceEvent& event, const TraceHeader& header);

/// "FILE:LINE" where `event` of `trace` was read, or "" for an event not read from a file.
std::string source_of(const Trace& trace, const TraceEvent& event);

/// "FILE:LINE" of the trace's header line, or "" for a trace not read from a file.
std::string header_source(const Trace& trace);

/// Where an operation was called, as report lines end: " at model/pipeline_step.cpp:42
/// (backward) for \"PP send of micro-batch 1 backward\"" (each part only when known); empty
/// when the site is unknown.
std::string describe_site(const CallSite& site);

}  // namespace ranklab
