// Input quoted in an error message. An error is one line naming what and where, and the bad
// token can be megabytes (a 50 MB group name, a 300 KB line of brackets): what is shown is cut
// to a few dozen bytes, with the full size said, and control bytes are escaped so a token can
// never break the line or drive the terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ranklab {

/// How much of a token an error message shows.
inline constexpr std::size_t kQuotedBytes = 80;

/// `text` as shown in an error: itself when it has at most `max` bytes, else its first `max`
/// bytes (never half a UTF-8 character) then `... (N bytes)`; bytes below 0x20 and 0x7f as \xNN.
std::string excerpt(std::string_view text, std::size_t max = kQuotedBytes);

/// `'text'` for an error message, cut as excerpt() cuts it: `'first bytes'... (N bytes)`.
std::string quote_input(std::string_view text);

}  // namespace ranklab
