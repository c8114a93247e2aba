// Typed access to the fields of one parsed JSON line, for the trace reader. Every failure
// throws LineError with a reason only ("missing required field 'count'"); the reader adds
// the `name:line: ` prefix. Private to traces/.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

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

/// A value as it appears in the file, shortened for an error message.
std::string describe(const nlohmann::json& value);

/// The field, or nullptr if the line does not have it.
const nlohmann::json* find_field(const nlohmann::json& object, const char* key);

/// The field; "missing required field 'KEY'" if absent.
const nlohmann::json& require_field(const nlohmann::json& object, const char* key);

/// A JSON integer >= 0 (no floats, no strings).
std::uint64_t as_unsigned(const nlohmann::json& value, const char* key);

/// A JSON integer that fits std::int64_t.
std::int64_t as_integer(const nlohmann::json& value, const char* key);

/// A JSON string.
const std::string& as_string(const nlohmann::json& value, const char* key);

/// A JSON object.
const nlohmann::json& as_object(const nlohmann::json& value, const char* key);

/// A JSON array.
const nlohmann::json& as_array(const nlohmann::json& value, const char* key);

/// An integer in [0, world_size); "KEY N out of range [0, W)" otherwise.
int as_rank(const nlohmann::json& value, const char* key, int world_size);

/// A name that `parse` knows (one of types.hpp's parse_*); "unknown KEY 'NAME'" otherwise.
template <typename Enum>
Enum as_enum(const nlohmann::json& value, const char* key,
             std::optional<Enum> (*parse)(std::string_view)) {
  const std::string& name = as_string(value, key);
  const std::optional<Enum> parsed = parse(name);
  if (!parsed) fail("unknown {} {}", key, quote_input(name));
  return *parsed;
}

/// A whole string of decimal (base 10) or hex (base 16) digits, no sign; nullopt otherwise.
std::optional<std::uint64_t> parse_digits(std::string_view text, int base);

}  // namespace ranklab::detail
