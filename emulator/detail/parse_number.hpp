// Whole unsigned decimal numbers in option texts (policies, send modes, fault plans).
#pragma once

#include <cstdint>
#include <string_view>

namespace ranklab::detail {

/// Parses a whole unsigned decimal number; throws UsageError naming `what` (the field) and
/// `whole` (the text it came from) otherwise.
std::uint64_t parse_number(std::string_view text, std::string_view what, std::string_view whole);

}  // namespace ranklab::detail
