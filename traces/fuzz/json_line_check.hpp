// Whether the reader's fast JSON parser (traces/detail/json_line.hpp) agrees with nlohmann on
// a line: it may leave any line to nlohmann, but a line it takes must be one nlohmann takes,
// with the same values of the same types (the trace reader decodes either and must get the
// same event). For the differential test (tests/traces/json_line_test.cpp) and the fuzzer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "traces/detail/json_line.hpp"

namespace ranklab::fuzz {

/// "" when `fast` and `slow` are the same value, else where they part.
inline std::string json_difference(const detail::JsonValue& fast, const nlohmann::json& slow,
                                   const std::string& at = "$") {
  using Kind = nlohmann::json::value_t;
  const auto differs = [&](std::string_view what) { return at + ": " + std::string(what); };
  switch (slow.type()) {
    case Kind::null: return fast.is_null() ? "" : differs("null");
    case Kind::boolean:
      return fast.is_boolean() && fast.get<bool>() == slow.get<bool>() ? "" : differs("boolean");
    case Kind::number_unsigned:
      return fast.is_number_unsigned() && fast.get<std::uint64_t>() == slow.get<std::uint64_t>()
                 ? ""
                 : differs("unsigned");
    case Kind::number_integer:
      return fast.is_number_integer() && !fast.is_number_unsigned() &&
                     fast.get<std::int64_t>() == slow.get<std::int64_t>()
                 ? ""
                 : differs("integer");
    case Kind::number_float:
      return fast.is_number() && !fast.is_number_integer() &&
                     fast.get<double>() == slow.get<double>()
                 ? ""
                 : differs("float");
    case Kind::string:
      return fast.is_string() && fast.text() == slow.get_ref<const std::string&>() ? ""
                                                                                   : differs("string");
    case Kind::array: {
      if (!fast.is_array() || fast.size() != slow.size()) return differs("array");
      std::size_t i = 0;
      for (const detail::JsonValue& item : fast) {
        const std::string inner = json_difference(item, slow[i], at + "[" + std::to_string(i) + "]");
        if (!inner.empty()) return inner;
        ++i;
      }
      return "";
    }
    case Kind::object: {
      if (!fast.is_object() || fast.size() != slow.size()) return differs("object");
      for (const auto& [key, value] : slow.items()) {
        const detail::JsonValue* member = fast.find(key);
        if (member == nullptr) return differs("no member " + key);
        const std::string inner = json_difference(*member, value, at + "." + key);
        if (!inner.empty()) return inner;
      }
      return "";
    }
    default: return differs("a kind the fast parser never makes");
  }
}

/// "" when the fast parser leaves `line` to nlohmann or agrees with it, else what is wrong.
inline std::string fast_parser_disagreement(std::string_view line) {
  detail::JsonLineParser parser;
  const detail::JsonValue* fast = parser.parse(line);
  if (fast == nullptr) return "";
  nlohmann::json slow;
  try {
    slow = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& error) {
    return std::string("the fast parser took a line nlohmann refuses: ") + error.what();
  }
  return json_difference(*fast, slow);
}

}  // namespace ranklab::fuzz
