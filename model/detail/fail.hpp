// The one funnel for errors about a file: UsageError "PATH: reason".
#pragma once

#include <filesystem>
#include <string_view>

namespace ranklab::detail {

/// Throws UsageError "PATH: reason".
[[noreturn]] void fail(const std::filesystem::path& path, std::string_view reason);

}  // namespace ranklab::detail
