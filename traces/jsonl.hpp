// Trace format v1 as text: JSON Lines, one header line then one line per event
// (traces/FORMAT.md). Writing is deterministic: same Trace, same bytes.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

/// Writes `trace` as JSON Lines: the header, then every rank's events in order.
void write_trace(std::ostream& out, const Trace& trace);

/// Writes `trace` to `path`; throws TraceError naming the path if it cannot.
void write_trace_file(const std::filesystem::path& path, const Trace& trace);

/// The JSON text of one event line (no newline), using the header's group names.
std::string format_event(const TraceEvent& event, const TraceHeader& header);

/// Reads a trace, validating every line; throws TraceError with `name:line: reason` for
/// a malformed header or event, an unknown format version, or an unknown group or rank.
Trace read_trace(std::istream& in, std::string_view name);

/// Reads a trace file; a missing or unreadable file throws TraceError naming it.
Trace read_trace_file(const std::filesystem::path& path);

}  // namespace ranklab
