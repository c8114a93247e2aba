// What traces/'s JSON writers share (the trace writer, jsonl.cpp, and the Perfetto export):
// they build their output in a buffer by hand, far cheaper than a JSON object per event.
// Private to traces/.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ranklab::detail {

/// A writer's buffer goes to the stream once it holds this much: traces reach millions of
/// events, and one write per event costs more than the formatting.
inline constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

/// `text` as a JSON string literal, quotes included. Invalid UTF-8 is replaced rather than
/// thrown on, so a strange group name can never lose a whole trace.
inline std::string quote_json(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ranklab::detail
