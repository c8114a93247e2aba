#include "traces/detail/json_fields.hpp"

#include <charconv>
#include <limits>

namespace ranklab::detail {

std::string describe(const nlohmann::json& value) {
  constexpr std::size_t kMaxShown = 40;
  return excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kMaxShown);
}

const nlohmann::json* find_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const nlohmann::json& require_field(const nlohmann::json& object, const char* key) {
  const nlohmann::json* value = find_field(object, key);
  if (value == nullptr) fail("missing required field '{}'", key);
  return *value;
}

std::uint64_t as_unsigned(const nlohmann::json& value, const char* key) {
  // The parser stores every integer literal without a minus sign as number_unsigned.
  if (!value.is_number_unsigned()) {
    fail("field '{}' must be a non-negative integer, got {}", key, describe(value));
  }
  return value.get<std::uint64_t>();
}

std::int64_t as_integer(const nlohmann::json& value, const char* key) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail("field '{}' is out of range, got {}", key, number);
    }
    return static_cast<std::int64_t>(number);
  }
  if (!value.is_number_integer())
    fail("field '{}' must be an integer, got {}", key, describe(value));
  return value.get<std::int64_t>();
}

const std::string& as_string(const nlohmann::json& value, const char* key) {
  if (!value.is_string()) fail("field '{}' must be a string, got {}", key, describe(value));
  return value.get_ref<const std::string&>();
}

const nlohmann::json& as_object(const nlohmann::json& value, const char* key) {
  if (!value.is_object()) fail("field '{}' must be an object, got {}", key, describe(value));
  return value;
}

const nlohmann::json& as_array(const nlohmann::json& value, const char* key) {
  if (!value.is_array()) fail("field '{}' must be an array, got {}", key, describe(value));
  return value;
}

int as_rank(const nlohmann::json& value, const char* key, int world_size) {
  const std::int64_t rank = as_integer(value, key);
  if (rank < 0 || rank >= world_size) fail("{} {} out of range [0, {})", key, rank, world_size);
  return static_cast<int>(rank);
}

std::optional<std::uint64_t> parse_digits(std::string_view text, int base) {
  std::uint64_t number = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no sign for unsigned types, so "-1" and "+1" fail here as they should.
  const auto [stop, error] = std::from_chars(text.data(), end, number, base);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return number;
}

}  // namespace ranklab::detail
