// The one way ranklab writes a user's output file (a trace, a report, a schedule, a golden
// set's arrays and manifest), so every failure reads the same: "PATH: cannot write WHAT (reason)".
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace ranklab {

/// Opens `path` for writing, lets `write` fill it, and closes it. Any failure throws
/// TraceError "PATH: cannot write WHAT (reason)". A partly written file that this call
/// created is removed, so no truncated report is left behind; whatever was at `path`
/// before (a device node, a pipe, a symbolic link, a user's file) is never removed.
void write_output_file(const std::filesystem::path& path, std::string_view what,
                       const std::function<void(std::ostream&)>& write);

/// Creates the folder `folder` (and the folders above it) that output files are to be written
/// in; throws the same TraceError as write_output_file, naming `folder`, when it cannot.
void create_output_folder(const std::filesystem::path& folder, std::string_view what);

/// Checks, before any work whose result `path` is to hold, that the file can be written:
/// creates its parent folders, opens it without truncating (a file this call created is
/// removed again, nothing else is),
/// and throws the same TraceError as write_output_file when it cannot. So a run's outcome
/// is never hidden behind an output path found unwritable only after the run.
void require_writable_output(const std::filesystem::path& path, std::string_view what);

}  // namespace ranklab
