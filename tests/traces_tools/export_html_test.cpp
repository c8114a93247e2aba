// The HTML report: self-contained, carries the data the page draws, and cannot be broken
// out of by names in the trace. (chromium_report_test.cpp renders it.)
#include "traces/export_html.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "tests/traces/sample_trace.hpp"
#include "traces/cost_model.hpp"
#include "traces/stats.hpp"
#include "traces/virtual_time.hpp"

namespace ranklab {
namespace {

using nlohmann::json;
using trace_samples::large_trace;
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
  ASSERT_EQ(data["flows"].size(), 1u);  // [send rank, slot, recv rank, slot, leaves, lands]
  EXPECT_EQ(data["flows"][0][0], 0);
  EXPECT_EQ(data["flows"][0][2], 1);
  EXPECT_EQ(data["stats"], stats_to_json(compute_stats(trace)));
  EXPECT_EQ(data["time_base"], "lamport");
  // [start, duration, op, state, label, detail, kind, site]
  const json first = data["ranks"][0][0];
  EXPECT_EQ(first[2], "send");
  EXPECT_EQ(first[3], "done");
  EXPECT_EQ(first[4], "send to 1");
  EXPECT_EQ(data["kinds"][first[6].get<std::size_t>()], "world");
  EXPECT_EQ(data["ranks"][3][0][3], "pending");  // rank 3's only operation
  // No verdict given: the page says it was not diagnosed.
  EXPECT_EQ(data["verdict"]["status"], "");
  EXPECT_EQ(data["compute"], json::parse("[[],[],[],[]]"));  // a logical axis: no compute
}

//! A group name cannot end the script element or inject markup.
TEST(ExportHtmlTest, NamesCannotBreakOutOfTheScript) {
  Trace trace = sample_trace();
  trace.header.groups[1].name = "tp</script><script>alert(1)</script>";
  const std::string clean = page_of(sample_trace());
  const std::string page = page_of(trace);
  EXPECT_EQ(count(page, "</script>"), count(clean, "</script>"));
  EXPECT_EQ(embedded_data(page)["ranks"][0][3][4], "reduce tp</script><script>alert(1)</script>");
  // ... nor can a verdict's text.
  HtmlReportOptions options;
  options.verdict = HtmlVerdict{.status = "deadlock", .culprit = "culprit (deadlock): </script>"};
  const std::string with_verdict = page_of(sample_trace(), options);
  EXPECT_EQ(count(with_verdict, "</script>"), count(clean, "</script>"));
  EXPECT_EQ(embedded_data(with_verdict)["verdict"]["culprit"], "culprit (deadlock): </script>");
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

//! The verdict goes into the data as given, its blocked operations as slots of `ranks`
//! whose state is "blocked"; one the trace does not hold is left out, not guessed.
TEST(ExportHtmlTest, VerdictMarksTheBlockedOperations) {
  const Trace trace = sample_trace();
  HtmlReportOptions options;
  options.verdict = HtmlVerdict{.status = "deadlock",
                                .summary = "deadlock: 2 ranks blocked",
                                .headline = "DEADLOCK: every live rank is blocked",
                                .culprit_kind = "recv-cycle",
                                .culprit = "culprit (recv-cycle): ...",
                                .blocked = {{0, 10}, {3, 0}, {3, 99}, {7, 0}},
                                .cycles = {{0, 3, 0}},
                                .note = "replayed"};
  const json data = html_report_data(trace, options);
  const json& verdict = data["verdict"];
  EXPECT_EQ(verdict["status"], "deadlock");
  EXPECT_EQ(verdict["culprit_kind"], "recv-cycle");
  EXPECT_EQ(verdict["culprit"], "culprit (recv-cycle): ...");
  EXPECT_EQ(verdict["headline"], "DEADLOCK: every live rank is blocked");
  EXPECT_EQ(verdict["cycles"], json::parse("[[0,3,0]]"));
  ASSERT_EQ(verdict["blocked"].size(), 2u);  // rank 3 op #99 and rank 7 do not exist
  std::size_t blocked = 0;
  for (const json& ref : verdict["blocked"]) {
    const json& slice = data["ranks"][ref[0].get<std::size_t>()][ref[1].get<std::size_t>()];
    EXPECT_EQ(slice[3], "blocked") << slice;
  }
  for (const json& row : data["ranks"]) {
    for (const json& slice : row) blocked += slice[3] == "blocked" ? 1 : 0;
  }
  EXPECT_EQ(blocked, 2u);
  EXPECT_EQ(data["ranks"][0][10][4], "recv from any");
  // Pending operations the verdict does not name stay "pending".
  EXPECT_EQ(data["ranks"][2][1][3], "pending");
}

//! A send that completed but that no receive of the trace takes (the message was buffered
//! and lost) is marked "lost"; a received one is not.
TEST(ExportHtmlTest, MarksSendsNoReceiveTook) {
  Trace trace = large_trace(2, 2);  // rank 0: send, recv; rank 1: recv, send
  trace.ranks[1].erase(trace.ranks[1].begin());  // rank 1 never receives message 0:0
  const json data = html_report_data(trace, {});
  EXPECT_EQ(data["ranks"][0][0][2], "send");
  EXPECT_EQ(data["ranks"][0][0][3], "lost");
  EXPECT_EQ(data["ranks"][1][0][2], "send");
  EXPECT_EQ(data["ranks"][1][0][3], "done");  // rank 0 received it
  // A replay blocks in that send (rendezvous): both marks (SimGrid TI's missing_recv).
  HtmlReportOptions options;
  options.verdict = HtmlVerdict{.status = "deadlock", .blocked = {{0, 0}}};
  EXPECT_EQ(html_report_data(trace, options)["ranks"][0][0][3], "blocked lost");
}

//! Tooltips carry the call site (file:line, function and label) through a shared table.
TEST(ExportHtmlTest, SlicesNameTheirCallSites) {
  Trace trace = sample_trace();
  trace.ranks[0][0].site = CallSite{.file = "model/pipeline.cpp", .line = 42,
                                    .function = "send_forward", .label = "PP send of m1"};
  trace.ranks[1][0].site = trace.ranks[0][0].site;
  const json data = html_report_data(trace, {});
  ASSERT_EQ(data["sites"].size(), 1u);
  const std::string site = data["sites"][0];
  EXPECT_NE(site.find("model/pipeline.cpp:42"), std::string::npos) << site;
  EXPECT_NE(site.find("PP send of m1"), std::string::npos) << site;
  EXPECT_EQ(data["ranks"][0][0][7], 0);
  EXPECT_EQ(data["ranks"][1][0][7], 0);
  EXPECT_EQ(data["ranks"][0][1][7], -1);  // no site
}

//! On a timed trace every arrow leaves inside its send and lands at its receive's
//! completion, never earlier than it left (issue 28 §2: 20 of 32 arrows of a timed trace
//! pointed back in time), and compute slices are drawn where the cost model put them.
TEST(ExportHtmlTest, TimedArrowsNeverPointBackwards) {
  // Even ranks compute before their first send, odd ranks post its receive at once and
  // wait: a long receive whose send comes late, which centre-to-centre drew backwards.
  Trace trace = large_trace(4, 8);
  for (std::size_t rank = 0; rank < 4; rank += 2) {
    trace.ranks[rank].front().compute.add(ComputeItem{.label = "forward", .layer = 0, .flops = 1e6});
  }
  annotate(trace, simulate(trace, CostModel::alpha_beta(5e-6, 1e9, 1e9)));
  const json data = html_report_data(trace, {});
  ASSERT_EQ(data["time_base"], "virtual");
  ASSERT_EQ(data["flows"].size(), 16u);
  std::size_t backwards_by_centres = 0;
  for (const json& flow : data["flows"]) {
    const json& send = data["ranks"][flow[0].get<std::size_t>()][flow[1].get<std::size_t>()];
    const json& recv = data["ranks"][flow[2].get<std::size_t>()][flow[3].get<std::size_t>()];
    const double leaves = flow[4], lands = flow[5];
    EXPECT_GE(lands, leaves) << flow;
    EXPECT_GE(leaves, send[0].get<double>()) << flow;
    EXPECT_LE(leaves, send[0].get<double>() + send[1].get<double>()) << flow;
    // Lands at the receive's end, 1 ns inside it (message_span binds ends to their slices).
    EXPECT_NEAR(lands, recv[0].get<double>() + recv[1].get<double>(), 2e-3) << flow;
    // What the page drew before: slice centre to slice centre.
    const double from = send[0].get<double>() + send[1].get<double>() / 2;
    const double to = recv[0].get<double>() + recv[1].get<double>() / 2;
    backwards_by_centres += to < from ? 1 : 0;
  }
  EXPECT_GT(backwards_by_centres, 0u) << "the case no longer tells the two placements apart";
  EXPECT_EQ(data["compute"][1].size(), 0u);
  for (std::size_t rank = 0; rank < 4; rank += 2) {
    ASSERT_EQ(data["compute"][rank].size(), 1u) << rank;
    const json& compute = data["compute"][rank][0];  // [start, duration, name]
    EXPECT_EQ(compute[2], "forward L0");
    EXPECT_NEAR(compute[1].get<double>(), 1000.0, 1e-6);  // 1e6 FLOPs at 1e9 FLOP/s: 1 ms
    EXPECT_GE(compute[0].get<double>(), data["start"].get<double>());
  }
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
