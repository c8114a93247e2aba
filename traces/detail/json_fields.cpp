#include "traces/detail/json_fields.hpp"

#include <array>
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

namespace {

/// Each byte's digit value in bases up to 36 (either case), 36 and above for a non-digit.
constexpr std::array<std::uint8_t, 256> kDigitValues = [] {
  std::array<std::uint8_t, 256> values{};
  values.fill(255);
  for (int c = '0'; c <= '9'; ++c) values[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
  for (int c = 'a'; c <= 'z'; ++c) values[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
  for (int c = 'A'; c <= 'Z'; ++c) values[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'A' + 10);
  return values;
}();

}  // namespace

std::optional<std::uint64_t> parse_digits(std::string_view text, int base) {
  // What from_chars accepts (digits of the base, either case for hex; no sign, no prefix;
  // nothing that overflows), a table lookup a digit: each event has a hash and a msg.
  if (text.empty()) return std::nullopt;
  const auto radix = static_cast<std::uint64_t>(base);
  // Only a number of more digits than always fit (16 hex, 19 decimal) is checked for
  // overflow, so the division is for those alone.
  const bool may_overflow = text.size() > (base == 16 ? 16U : 19U);  // bases 10 and 16 only
  std::uint64_t number = 0;
  for (const char c : text) {
    const std::uint64_t digit = kDigitValues[static_cast<unsigned char>(c)];
    if (digit >= radix) return std::nullopt;
    if (may_overflow && number > (std::numeric_limits<std::uint64_t>::max() - digit) / radix) {
      return std::nullopt;
    }
    number = number * radix + digit;
  }
  return number;
}

}  // namespace ranklab::detail
