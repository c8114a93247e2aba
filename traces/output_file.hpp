// Writing a report file (Perfetto JSON, HTML) with errors that name the file.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string_view>

namespace ranklab {

/// Opens `path` for writing, lets `write` fill it, and closes it. Any failure throws
/// TraceError "PATH: cannot write WHAT (reason)"; a partly written file is removed so no
/// truncated report is left behind.
void write_output_file(const std::filesystem::path& path, std::string_view what,
                       const std::function<void(std::ostream&)>& write);

/// Checks, before any work whose result `path` is to hold, that the file can be written:
/// creates its parent folders, opens it without truncating (a new file is removed again),
/// and throws the same TraceError as write_output_file when it cannot. So a run's outcome
/// is never hidden behind an output path found unwritable only after the run.
void require_writable_output(const std::filesystem::path& path, std::string_view what);

}  // namespace ranklab
