#include "traces/detail/json_fields.hpp"

#include <charconv>

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
  std::uint64_t number = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no sign for unsigned types, so "-1" and "+1" fail here as they should.
  const auto [stop, error] = std::from_chars(text.data(), end, number, base);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return number;
}

}  // namespace ranklab::detail
