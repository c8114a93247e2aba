#include "traces/detail/json_fields.hpp"

#include <limits>

namespace ranklab::detail {

std::string describe(const nlohmann::json& value) {
  constexpr std::size_t kMaxShown = 40;
  return excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kMaxShown);
}

std::string describe(const JsonValue& value) {
  constexpr std::size_t kMaxShown = 40;
  const std::string_view text = value.text();
  return excerpt(value.is_string() ? fmt::format("\"{}\"", text) : std::string(text), kMaxShown);
}

const nlohmann::json* find_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::uint64_t> parse_digits(std::string_view text, int base) {
  // What from_chars accepts (digits of the base, either case for hex; no sign, no prefix;
  // nothing that overflows), in a loop a third as long: each event has a hash and a msg.
  if (text.empty()) return std::nullopt;
  const auto radix = static_cast<std::uint64_t>(base);
  const std::size_t safe_digits = base == 16 ? 16 : 19;  // bases 10 and 16 only
  std::uint64_t number = 0;
  for (const char c : text) {
    std::uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'z') {
      digit = static_cast<std::uint64_t>(c - 'a') + 10;
    } else if (c >= 'A' && c <= 'Z') {
      digit = static_cast<std::uint64_t>(c - 'A') + 10;
    } else {
      return std::nullopt;
    }
    if (digit >= radix) return std::nullopt;
    // Only a number of more digits than always fit (16 hex, 19 decimal) is checked, so
    // the division is for those alone.
    if (text.size() > safe_digits &&
        number > (std::numeric_limits<std::uint64_t>::max() - digit) / radix) {
      return std::nullopt;
    }
    number = number * radix + digit;
  }
  return number;
}

}  // namespace ranklab::detail
