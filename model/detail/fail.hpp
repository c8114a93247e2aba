// The one funnel for errors about a file (reading or writing it): TraceError "PATH: reason",
// the error type of every input file ranklab reads.
#pragma once

#include <filesystem>
#include <string_view>

namespace ranklab::detail {

/// Throws TraceError "PATH: reason".
[[noreturn]] void fail(const std::filesystem::path& path, std::string_view reason);

}  // namespace ranklab::detail
