// Inputs found by, or in the spirit of, the libFuzzer target (traces/fuzz/): bad input is a
// TraceError naming file and line, and any trace that reads goes through every tool.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/traces/sample_trace.hpp"
#include "tests/traces_tools/chrome_trace_check.hpp"
#include "traces/diff.hpp"
#include "traces/error.hpp"
#include "traces/export_html.hpp"
#include "traces/export_perfetto.hpp"
#include "traces/jsonl.hpp"
#include "traces/stats.hpp"

namespace ranklab {
namespace {

using trace_samples::from_text;
using trace_samples::sample_trace;

const std::string kHeader =
    R"({"format":"ranklab-trace","version":"1.0","world_size":2,"groups":[{"name":"world","ranks":[0,1]}],"config":{}})";

//! Fuzzer find: a number no double holds threw nlohmann's out_of_range, not a TraceError.
TEST(RobustnessTest, NumberOverflowIsATraceError) {
  EXPECT_THROW_MSG(from_text(kHeader + "\n{\"rank\":" + std::string(60, '8') + "e3888}\n", "f.jsonl"),
                   TraceError, "f.jsonl:2: invalid JSON (number overflow parsing");
  EXPECT_THROW_MSG(from_text(kHeader + "\n{\"rank\":1e400}\n", "g.jsonl"), TraceError,
                   "g.jsonl:2: invalid JSON (number overflow");
}

//! Valid but strange: names that need escaping, clocks near 2^64, a receive whose send is
//! missing. Every tool still produces well-formed output.
TEST(RobustnessTest, StrangeButValidTracesExport) {
  Trace trace = sample_trace();
  trace.header.groups[1].name = "tp\"\\\n\u00e9[0,1]";
  trace.ranks[2][0].lamport = std::numeric_limits<std::uint64_t>::max();
  trace.ranks[1][0].msg = {0, 77};  // names no send
  std::ostringstream perfetto;
  write_perfetto(perfetto, trace);
  const auto doc = nlohmann::json::parse(perfetto.str());
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  EXPECT_TRUE(diff_traces(trace, trace).identical());
  EXPECT_EQ(compute_stats(trace).dangling_receives, 1u);
  EXPECT_EQ(compute_stats(trace).group_kinds.count("tp\"\\\n\u00e9"), 1u);
  std::ostringstream html;
  write_html_report(html, trace, {});
  EXPECT_EQ(html_report_data(trace, {})["flows"].size(), 0u);
}

//! A header-only trace of many ranks is fine for every tool.
TEST(RobustnessTest, ManyRanksNoEvents) {
  const Trace trace = from_text(
      R"({"format":"ranklab-trace","version":"1.0","world_size":5000,"groups":[{"name":"world","ranks":[)" +
      [] {
        std::string ranks;
        for (int r = 0; r < 5000; ++r) ranks += (r ? "," : "") + std::to_string(r);
        return ranks;
      }() +
      R"(]}],"config":{}})" + "\n");
  EXPECT_TRUE(diff_traces(trace, trace).identical());
  EXPECT_EQ(compute_stats(trace).events, 0u);
  EXPECT_NE(format_stats(compute_stats(trace), "t").find("no point-to-point messages"),
            std::string::npos);
  EXPECT_EQ(html_report_data(trace, {})["ranks"].size(), 5000u);
}

}  // namespace
}  // namespace ranklab
