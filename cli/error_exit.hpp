// How an exception that ended a subcommand leaves the `ranklab` command.
#pragma once

#include <exception>
#include <ostream>

namespace ranklab::cli {

/// A std::logic_error is a bug in ranklab, not the user's mistake: it exits with this
/// (sysexits.h's EX_SOFTWARE), apart from the codes of DESIGN.md §7.
inline constexpr int kExitInternalError = 70;

/// Writes the one stderr line for `error` and returns the exit code: a std::logic_error is
/// an internal error (kExitInternalError); anything else (ranklab::Error, the library's
/// runtime errors) is bad usage or input, exit 1.
int report_error(const std::exception& error, std::ostream& err);

/// Flushes standard output (std::cout and C's stdout) at the end of a command and returns
/// `code`; when something written there was lost (a full disk, an I/O error) it writes one
/// line on `err` and returns 1, so a report never vanishes with exit 0. A reader that closed
/// its pipe (EPIPE) is not an error: the command ends as if it had read everything.
int flush_standard_output(int code, std::ostream& err);

}  // namespace ranklab::cli
