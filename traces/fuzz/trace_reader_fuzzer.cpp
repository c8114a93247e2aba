// libFuzzer target: the JSONL trace reader, and every tool that reads a trace.
//
// The contract under test (issue 5 §7): any input either reads as a trace or throws
// TraceError with "NAME:LINE: reason"; anything else escaping (another exception type, a
// crash, a sanitizer report) is a bug. A trace that reads must then survive diff, stats and
// both exports, and round-trip through the writer. Every line the reader's fast JSON parser
// takes must parse the same with nlohmann (issue 17 §3), and every line its direct decoding
// of ranklab's own lines takes must decode as the general path decodes it (issue 30).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "traces/diff.hpp"
#include "traces/error.hpp"
#include "traces/export_html.hpp"
#include "traces/export_perfetto.hpp"
#include "traces/fuzz/json_line_check.hpp"
#include "traces/fuzz/trace_mutator.hpp"
#include "traces/fuzz/written_line_check.hpp"
#include "traces/jsonl.hpp"
#include "traces/stats.hpp"

namespace {

constexpr std::string_view kName = "fuzz.jsonl";
// Exports write a line per rank; a 2^20-rank header would make each run slow, not wrong.
constexpr int kMaxExportedWorld = 4096;

[[noreturn]] void bug(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "trace_reader_fuzzer: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

void exercise_exports(const ranklab::Trace& trace) {
  std::ostringstream perfetto;
  ranklab::write_perfetto(perfetto, trace);
  // Must be JSON: parse throws (and the fuzzer reports it) if escaping ever breaks.
  (void)nlohmann::json::parse(perfetto.str());
  std::ostringstream html;
  ranklab::write_html_report(html, trace, {.max_events = 1000});
}

void exercise_tools(const ranklab::Trace& trace) {
  const ranklab::TraceDiff self = ranklab::diff_traces(trace, trace);
  if (!self.identical()) bug("a trace differs from itself", ranklab::format_diff(self, "a", "b"));
  (void)ranklab::format_diff(self, "a", "b");
  const ranklab::TraceStats stats = ranklab::compute_stats(trace);
  (void)ranklab::format_stats(stats, kName);
  (void)ranklab::stats_to_json(stats).dump();
  if (trace.header.world_size <= kMaxExportedWorld) exercise_exports(trace);

  std::ostringstream written;
  ranklab::write_trace(written, trace);
  std::istringstream again(written.str());
  if (ranklab::read_trace(again, "rewritten") != trace) bug("write/read round trip", written.str());
}

/// The reader's fast parser takes only lines nlohmann takes, with the same values (else a
/// line could decode differently, or an error lose its wording).
void check_fast_parser(std::string_view text) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string problem = ranklab::fuzz::fast_parser_disagreement(text.substr(0, end));
    if (!problem.empty()) bug("the fast JSON parser disagrees with nlohmann", problem);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

/// The reader's direct decoding (EventParser::parse_written) takes only lines that the
/// general path decodes, to the same event; checked where the first line is a header.
void check_written_lines(std::string_view text) {
  const std::size_t first_end = std::min(text.find('\n'), text.size());
  std::istringstream header_only{std::string(text.substr(0, first_end))};
  ranklab::TraceHeader header;
  try {
    header = ranklab::read_trace(header_only, kName).header;
  } catch (const ranklab::TraceError&) {
    return;
  }
  const ranklab::detail::EventParser direct(header);
  const ranklab::detail::EventParser general(header);
  text.remove_prefix(std::min(first_end + 1, text.size()));
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string problem =
        ranklab::fuzz::written_line_disagreement(direct, general, text.substr(0, end));
    if (!problem.empty()) bug("parse_written disagrees with parse()", problem);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_fast_parser(std::string_view(reinterpret_cast<const char*>(data), size));
  check_written_lines(std::string_view(reinterpret_cast<const char*>(data), size));
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  ranklab::Trace trace;
  try {
    trace = ranklab::read_trace(in, kName);
  } catch (const ranklab::TraceError& error) {
    const std::string_view message = error.what();
    if (!message.starts_with(std::string(kName) + ":")) bug("message without NAME:LINE", message);
    return 0;
  }
  exercise_tools(trace);
  return 0;
}

// Structure-aware mutations (libfuzzer_hooks.cpp calls this).
std::string ranklab::fuzz::mutate_input(std::string_view text, std::uint32_t seed,
                                        const ByteMutator& bytes) {
  return mutate_jsonl(text, seed, bytes);
}
