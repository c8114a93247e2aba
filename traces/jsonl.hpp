// Trace format v1 as text: JSON Lines, one header line then one line per event
// (traces/FORMAT.md). Writing is deterministic: same Trace, same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

/// Writes `trace` as JSON Lines: the header, then every rank's events in order.
void write_trace(std::ostream& out, const Trace& trace);

/// Writes `trace` to `path` (write_output_file: TraceError "PATH: cannot write the trace
/// (reason)", and no partly written file left, if it cannot).
void write_trace_file(const std::filesystem::path& path, const Trace& trace);

/// The JSON text of one event line (no newline), using the header's group names.
std::string format_event(const TraceEvent& event, const TraceHeader& header);

/// Reads a trace, validating every line; throws TraceError with `name:line: reason` for
/// a malformed header or event, an unknown format version, or an unknown group or rank.
Trace read_trace(std::istream& in, std::string_view name);

/// Reads a trace file; a missing or unreadable file throws TraceError naming it.
Trace read_trace_file(const std::filesystem::path& path);

/// A trace read one event at a time, in the file's order, for tools that need not hold it
/// all (`ranklab diff`). Each line is checked as read_trace checks it, with the same
/// `name:line: reason` errors; what read_trace checks across lines (rank_seq strictly
/// increasing per rank, compute_after only on a rank's last operation) is the caller's.
/// Shows progress on a terminal (traces/progress.hpp) unless told not to.
class JsonlEventReader {
 public:
  /// Reads and checks the header line. `total_bytes`: the input's size (0: unknown).
  JsonlEventReader(std::istream& in, std::string_view name, std::uint64_t total_bytes = 0,
                   bool show_progress = true);
  ~JsonlEventReader();
  JsonlEventReader(const JsonlEventReader&) = delete;
  JsonlEventReader& operator=(const JsonlEventReader&) = delete;

  const TraceHeader& header() const;
  /// The header's line number (blank lines may come first).
  std::uint64_t header_line() const;
  /// Bytes read so far, and the input's size (0: unknown, a pipe).
  std::uint64_t bytes_read() const;
  std::uint64_t total_bytes() const;
  /// The next event, its `source` set to its line; false at the end of the input.
  bool next(TraceEvent& event);
  /// Throws TraceError "name:line: reason".
  [[noreturn]] void fail_at(std::uint64_t line, std::string_view reason) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// `path` opened for JsonlEventReader, which reads from `in` (kept alive with it).
struct JsonlEventFile {
  explicit JsonlEventFile(const std::filesystem::path& path, bool show_progress = true);
  std::unique_ptr<std::istream> in;
  JsonlEventReader reader;
};

}  // namespace ranklab
