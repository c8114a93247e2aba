// Whether the reader's direct decoding of the lines ranklab writes (EventParser::
// parse_written, traces/detail/written_line.cpp) agrees with its general one: it may leave
// any line to parse(), but a line it takes must be one nlohmann takes and parse() decodes,
// to the same event. For the differential test (tests/traces/written_line_test.cpp) and the
// fuzzer.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "traces/detail/event_parser.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::fuzz {

/// "" when `direct` leaves `line` or decodes it as `general` does, else what is wrong. Two
/// parsers of one header, so that each keeps its own caches (the last group and site) as
/// it would reading a file line by line.
inline std::string written_line_disagreement(const detail::EventParser& direct,
                                             const detail::EventParser& general,
                                             std::string_view line) {
  TraceEvent fast;
  try {
    if (!direct.parse_written(line, fast)) return "";
  } catch (const detail::LineError&) {
    return "";  // refused: parse() words it
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& error) {
    return std::string("parse_written took a line nlohmann refuses: ") + error.what();
  }
  try {
    const TraceEvent slow = general.parse(json);
    if (!(fast == slow) || !(fast.site == slow.site)) {
      return fmt::format("decoded differently: {} against {}", format_event(fast, general.header()),
                         format_event(slow, general.header()));
    }
  } catch (const detail::LineError& error) {
    return std::string("parse_written took a line parse() refuses: ") + error.what();
  }
  return "";
}

}  // namespace ranklab::fuzz
