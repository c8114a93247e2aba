// The small text tools every reader of a text format shares (SimGrid TI, the cost model, the
// schedule text, command-line values): a whole string as a number, and trimming. In the
// leaf module so that each module above parses numbers alike.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace ranklab {

/// The whole of `text` as a T (an integer type, or double), or nothing: for empty text,
/// anything after the number, a value T cannot hold, a sign from_chars refuses ('+' always,
/// '-' for unsigned types) and, for double, an infinity or NaN.
template <typename T>
std::optional<T> parse_whole(std::string_view text) {
  static_assert(std::is_integral_v<T> || std::is_same_v<T, double>);
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  if constexpr (std::is_same_v<T, double>) {
    if (!std::isfinite(value)) return std::nullopt;
  }
  return value;
}

/// `text` without leading and trailing spaces, tabs and carriage returns.
inline std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r";
  const std::size_t first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

}  // namespace ranklab
