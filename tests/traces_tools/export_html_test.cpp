// The HTML report: self-contained, carries the data the page draws, and cannot be broken
// out of by names in the trace. (chromium_report_test.cpp renders it.)
#include "traces/export_html.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tests/traces/sample_trace.hpp"
#include "traces/stats.hpp"

namespace ranklab {
namespace {

using nlohmann::json;
using trace_samples::sample_trace;

std::string page_of(const Trace& trace, const HtmlReportOptions& options = {}) {
  std::ostringstream out;
  write_html_report(out, trace, options);
  return out.str();
}

/// The JSON between the data script's tags.
json embedded_data(const std::string& page) {
  const std::string open = R"(<script id="ranklab-data" type="application/json">)";
  const std::size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const std::size_t start = begin + open.size();
  return json::parse(page.substr(start, page.find("</script>", start) - start));
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

//! Nothing is loaded from elsewhere: no src/href attributes, no stylesheet links, no URLs
//! except the SVG namespace name (which is never fetched).
TEST(ExportHtmlTest, IsSelfContained) {
  const std::string page = page_of(sample_trace());
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  const std::regex url(R"((https?:)?//[a-zA-Z0-9.-]+\.[a-z]{2,})");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), url); it != std::sregex_iterator();
       ++it) {
    EXPECT_EQ(it->str(), "http://www.w3.org") << "external reference in the page";
  }
  EXPECT_EQ(page.find("@RANKLAB_DATA@"), std::string::npos);
}

//! The embedded data is html_report_data: a row per rank, flows, stats.
TEST(ExportHtmlTest, EmbedsTheReportData) {
  const Trace trace = sample_trace();
  const json data = embedded_data(page_of(trace));
  EXPECT_EQ(data, html_report_data(trace, {}));
  EXPECT_EQ(data["ranks"].size(), 4u);
  EXPECT_EQ(data["events_total"], 18);
  EXPECT_EQ(data["events_shown"], 18);
  EXPECT_EQ(data["flows"], json::parse("[[0,0,1,0]]"));
  EXPECT_EQ(data["stats"], stats_to_json(compute_stats(trace)));
  EXPECT_EQ(data["time_base"], "lamport");
  const json first = data["ranks"][0][0];  // [start, duration, op, pending, label, detail]
  EXPECT_EQ(first[2], "send");
  EXPECT_EQ(first[4], "send to 1");
  EXPECT_EQ(data["ranks"][3][0][3], 1);  // rank 3's only operation is pending
}

//! A group name cannot end the script element or inject markup.
TEST(ExportHtmlTest, NamesCannotBreakOutOfTheScript) {
  Trace trace = sample_trace();
  trace.header.groups[1].name = "tp</script><script>alert(1)</script>";
  const std::string clean = page_of(sample_trace());
  const std::string page = page_of(trace);
  EXPECT_EQ(count(page, "</script>"), count(clean, "</script>"));
  EXPECT_EQ(embedded_data(page)["ranks"][0][3][4], "reduce tp</script><script>alert(1)</script>");
}

//! Over max_events the earliest operations are kept; flows only between kept ones.
TEST(ExportHtmlTest, LimitKeepsTheEarliest) {
  const Trace trace = trace_samples::large_trace(4, 100);
  const json data = html_report_data(trace, {.max_events = 50});
  EXPECT_EQ(data["events_total"], 400);
  EXPECT_EQ(data["events_shown"], 50);
  EXPECT_EQ(data["ranks"].size(), 4u);
  double latest = 0;
  for (const json& row : data["ranks"]) {
    for (const json& slice : row) latest = std::max(latest, slice[0].get<double>());
  }
  EXPECT_LE(latest, 13.0);  // lamport seq+1: 50 events over 4 ranks reach clock 13
  for (const json& flow : data["flows"]) {
    EXPECT_LT(flow[1].get<std::size_t>(), data["ranks"][flow[0].get<int>()].size());
    EXPECT_LT(flow[3].get<std::size_t>(), data["ranks"][flow[2].get<int>()].size());
  }
  EXPECT_EQ(html_report_data(trace, {.max_events = 0})["events_shown"], 400);
}

//! An empty trace (header only) still makes a page.
TEST(ExportHtmlTest, EmptyTrace) {
  Trace trace;
  trace.header.world_size = 2;
  trace.header.groups = {{"world", {0, 1}}};
  trace.ranks.resize(2);
  const json data = embedded_data(page_of(trace));
  EXPECT_EQ(data["events_shown"], 0);
  EXPECT_EQ(data["ranks"], json::parse("[[],[]]"));
  EXPECT_EQ(data["start"], 0.0);
}

}  // namespace
}  // namespace ranklab
