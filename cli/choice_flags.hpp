// Options that take one of a few values, or a value with a syntax of its own (--policy,
// --send-mode): CLI11 validators that refuse a bad value while parsing, with the parser's own
// message ("--mode: unknown mode 'xx': expected tp, pp, dp or hybrid"), and that list the
// values in --help ("--mode TEXT:{tp,pp,dp,hybrid}=hybrid").
#pragma once

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "traces/error.hpp"

namespace ranklab::cli {

/// A validator that runs `parse` on the value: a UsageError it throws rejects the value
/// with its message. `values` is what --help shows after the type: "{f32,f64}".
template <typename Parse>
CLI::Validator parsed_as(std::string values, Parse parse) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
          return {};
        } catch (const UsageError& e) {
          return e.what();
        }
      },
      std::move(values));
}

/// "{f32,f64}": `names` as the values parsed_as shows in --help.
inline std::string choices_text(std::span<const std::string_view> names) {
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ",";
    out += names[i];
  }
  return out + "}";
}

/// A validator that refuses an empty value with `message` (`--scenario ''` ran the main
/// job, as if no --scenario had been given).
inline CLI::Validator not_empty(std::string message) {
  return CLI::Validator(
      [message = std::move(message)](std::string& value) -> std::string {
        return value.empty() ? message : std::string();
      },
      "");
}

}  // namespace ranklab::cli
