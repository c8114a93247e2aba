// Typed access to the fields of one parsed JSON line, for the trace reader. Every failure
// throws LineError with a reason only ("missing required field 'count'"); the reader adds
// the `name:line: ` prefix. Private to traces/.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "traces/detail/json_line.hpp"
#include "traces/quote_input.hpp"

namespace ranklab::detail {

/// A problem with one line; the reader turns it into a TraceError naming the line.
class LineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw LineError(fmt::format(format, std::forward<Args>(args)...));
}

// Each accessor takes a parsed value of either parser: nlohmann::json (every line the fast
// parser leaves, and headers) or JsonValue (json_line.hpp, the reader's fast path), whose
// calls mimic nlohmann's. So the trace's fields are decoded by one set of rules.

/// A value as it appears in the file, shortened for an error message.
std::string describe(const nlohmann::json& value);
std::string describe(const JsonValue& value);

/// The field, or nullptr if the line does not have it.
const nlohmann::json* find_field(const nlohmann::json& object, const char* key);
/// Always inlined: the key is a literal at every call, so its length and bit fold away.
[[gnu::always_inline]] inline const JsonValue* find_field(const JsonValue& object,
                                                          const char* key) {
  return object.find(key);
}

/// A JSON string's characters: nlohmann's string, or a view into the line.
inline const std::string& string_of(const nlohmann::json& value) {
  return value.get_ref<const std::string&>();
}
inline std::string_view string_of(const JsonValue& value) { return value.text(); }

/// The field; "missing required field 'KEY'" if absent.
template <typename Json>
[[gnu::always_inline]] inline const Json& require_field(const Json& object, const char* key) {
  const Json* value = find_field(object, key);
  if (value == nullptr) fail("missing required field '{}'", key);
  return *value;
}

/// A JSON integer >= 0 (no floats, no strings).
template <typename Json>
std::uint64_t as_unsigned(const Json& value, const char* key) {
  // Both parsers type every integer literal without a minus sign as unsigned.
  if (!value.is_number_unsigned()) {
    fail("field '{}' must be a non-negative integer, got {}", key, describe(value));
  }
  return value.template get<std::uint64_t>();
}

/// A JSON integer that fits std::int64_t.
template <typename Json>
std::int64_t as_integer(const Json& value, const char* key) {
  if (value.is_number_unsigned()) {
    const auto number = value.template get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("field '{}' is out of range, got {}", key, number);
    }
    return static_cast<std::int64_t>(number);
  }
  if (!value.is_number_integer())
    fail("field '{}' must be an integer, got {}", key, describe(value));
  return value.template get<std::int64_t>();
}

/// A JSON string (a std::string of nlohmann's, a std::string_view into a JsonValue's line).
template <typename Json>
decltype(auto) as_string(const Json& value, const char* key) {
  if (!value.is_string()) fail("field '{}' must be a string, got {}", key, describe(value));
  return string_of(value);
}

/// A JSON object.
template <typename Json>
const Json& as_object(const Json& value, const char* key) {
  if (!value.is_object()) fail("field '{}' must be an object, got {}", key, describe(value));
  return value;
}

/// A JSON array.
template <typename Json>
const Json& as_array(const Json& value, const char* key) {
  if (!value.is_array()) fail("field '{}' must be an array, got {}", key, describe(value));
  return value;
}

/// An integer in [0, world_size); "KEY N out of range [0, W)" otherwise.
template <typename Json>
int as_rank(const Json& value, const char* key, int world_size) {
  const std::int64_t rank = as_integer(value, key);
  if (rank < 0 || rank >= world_size) fail("{} {} out of range [0, {})", key, rank, world_size);
  return static_cast<int>(rank);
}

/// A name that `parse` knows (one of types.hpp's parse_*); "unknown KEY 'NAME'" otherwise.
template <typename Enum, typename Json>
Enum as_enum(const Json& value, const char* key, std::optional<Enum> (*parse)(std::string_view)) {
  const std::string_view name = as_string(value, key);
  const std::optional<Enum> parsed = parse(name);
  if (!parsed) fail("unknown {} {}", key, quote_input(name));
  return *parsed;
}

/// A whole string of decimal (base 10) or hex (base 16) digits, no sign; nullopt otherwise.
std::optional<std::uint64_t> parse_digits(std::string_view text, int base);

}  // namespace ranklab::detail
