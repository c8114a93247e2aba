// The Perfetto / Chrome Trace Event export follows the format's rules and maps ranks,
// operations and messages as export_perfetto.hpp says.
#include "traces/export_perfetto.hpp"
#include "traces/trace_builder.hpp"
#include "traces/virtual_time.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "tests/support/temp_dir.hpp"
#include "tests/traces/sample_trace.hpp"
#include "tests/traces_tools/chrome_trace_check.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using nlohmann::json;
using trace_samples::sample_trace;

json export_json(const Trace& trace) {
  std::ostringstream out;
  write_perfetto(out, trace);
  return json::parse(out.str());
}

std::vector<json> events_with_ph(const json& doc, std::string_view ph) {
  std::vector<json> out;
  for (const json& event : doc["traceEvents"]) {
    if (event["ph"] == ph) out.push_back(event);
  }
  return out;
}

//! The sample trace (every op kind, pending ops) exports to a valid document.
TEST(ExportPerfettoTest, FollowsTheFormatRules) {
  const json doc = export_json(sample_trace());
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  EXPECT_EQ(doc["otherData"]["time_base"], "lamport");
  EXPECT_EQ(doc["otherData"]["world_size"], 4);
}

//! A process per rank (pid rank + 1, named "rank R"); a slice per operation whose args
//! are the operation's trace line.
TEST(ExportPerfettoTest, ProcessPerRankSlicePerOperation) {
  const Trace trace = sample_trace();
  const json doc = export_json(trace);
  std::map<int, std::string> process_names;
  for (const json& m : events_with_ph(doc, "M")) {
    if (m["name"] == "process_name") process_names[m["pid"]] = m["args"]["name"];
  }
  EXPECT_EQ(process_names, (std::map<int, std::string>{
                               {1, "rank 0"}, {2, "rank 1"}, {3, "rank 2"}, {4, "rank 3"}}));
  const std::vector<json> slices = events_with_ph(doc, "X");
  ASSERT_EQ(slices.size(), 18u);
  for (const json& slice : slices) {
    const int rank = slice["args"]["rank"];
    EXPECT_EQ(slice["pid"], rank + 1);
    const TraceEvent& event = trace.ranks[rank][0];
    if (slice["args"]["rank_seq"] == 0) {
      EXPECT_EQ(slice["args"], json::parse(format_event(event, trace.header)));
    }
  }
  EXPECT_EQ(slices[0]["name"], "send to 1");
  EXPECT_EQ(slices[0]["ts"], 1);  // lamport 1, one tick = 1 us
  EXPECT_EQ(slices[0]["dur"], 1);
}

//! A flow goes from the send's process to the receive's, named after the message id.
TEST(ExportPerfettoTest, FlowFromSendToReceive) {
  const json doc = export_json(sample_trace());
  const auto starts = events_with_ph(doc, "s");
  const auto finishes = events_with_ph(doc, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(starts[0]["pid"], 1);
  EXPECT_EQ(finishes[0]["pid"], 2);
  EXPECT_EQ(starts[0]["name"], "msg 0:0");
  EXPECT_EQ(finishes[0]["bp"], "e");
}

//! Pending operations are drawn and say so.
TEST(ExportPerfettoTest, PendingOperationsAreMarked) {
  const json doc = export_json(sample_trace());
  int pending = 0;
  for (const json& slice : events_with_ph(doc, "X")) {
    if (slice["name"].get<std::string>().ends_with(" (pending)")) ++pending;
  }
  EXPECT_EQ(pending, 4);
}

//! A large ring stays valid and has a flow per message.
TEST(ExportPerfettoTest, LargeRing) {
  const json doc = export_json(trace_samples::large_trace(16, 200));
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  EXPECT_EQ(events_with_ph(doc, "s").size(), 16u * 100u);
}

//! An unwritable output path is a TraceError naming it.
TEST(ExportPerfettoTest, UnwritablePathNamesIt) {
  testing::TempDir dir;
  const auto path = dir / "missing_dir" / "out.json";
  try {
    write_perfetto_file(path, sample_trace());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": cannot write Perfetto JSON"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ranklab

namespace ranklab {
namespace {

//! A timed trace's compute events are slices on each rank's compute thread, named by label,
//! layer, micro-batch and chunk, where the cost model put them.
TEST(ExportPerfettoTest, ComputeSlicesOnVirtualTime) {
  TraceBuilder b(2);
  b.compute_event(0, {.label = "forward", .layer = 1, .microbatch = 2, .chunk = 0, .seconds = 1e-3});
  b.send(0, 1, DataType::f32, 4, 0);
  b.recv(1, 0, DataType::f32, 4, 0);
  b.compute_event(1, {.label = "backward", .layer = 1, .microbatch = 2, .seconds = 2e-3});
  Trace trace = b.build().trace;
  annotate(trace, simulate(trace, CostModel::alpha_beta(1e-6, 1e9)));
  std::ostringstream out;
  write_perfetto(out, trace);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  std::vector<nlohmann::json> compute;
  for (const auto& event : doc["traceEvents"]) {
    if (event.value("cat", "") == "compute") compute.push_back(event);
  }
  ASSERT_EQ(compute.size(), 2u);
  EXPECT_EQ(compute[0]["name"], "forward L1 m2 c0");
  EXPECT_EQ(compute[0]["pid"], 1);
  EXPECT_EQ(compute[0]["tid"], 3);  // beside the operations thread (tid 1)
  EXPECT_DOUBLE_EQ(compute[0]["ts"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(compute[0]["dur"].get<double>(), 1000);
  EXPECT_EQ(compute[1]["name"], "backward L1 m2");
  EXPECT_DOUBLE_EQ(compute[1]["dur"].get<double>(), 2000);
  // Untimed, there is no axis for compute: no slices.
  Trace plain = b.build().trace;
  std::ostringstream untimed;
  write_perfetto(untimed, plain);
  EXPECT_EQ(untimed.str().find("\"compute\""), std::string::npos);
}

//! --perfetto-max-events: only the earliest N operations get slices, arrows only between
//! drawn ones, and the file and the summary say how many of how many.
TEST(ExportPerfettoTest, CapKeepsTheEarliestOperations) {
  const Trace trace = sample_trace();
  const json full = export_json(trace);
  std::ostringstream out;
  const PerfettoSummary summary = write_perfetto(out, trace, {.max_events = 7});
  const json doc = json::parse(out.str());
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  EXPECT_TRUE(summary.capped());
  EXPECT_EQ(summary.operations, 18u);
  EXPECT_EQ(summary.written, 7u);
  EXPECT_EQ(doc["otherData"]["operations"], 18);
  EXPECT_EQ(doc["otherData"]["operations_written"], 7);
  const std::vector<json> slices = events_with_ph(doc, "X");
  ASSERT_EQ(slices.size(), 7u);
  // The earliest: no drawn slice starts after one left out.
  double latest_drawn = 0;
  for (const json& slice : slices) latest_drawn = std::max(latest_drawn, slice["ts"].get<double>());
  std::size_t not_later = 0;
  for (const json& slice : events_with_ph(full, "X")) {
    if (slice["ts"].get<double>() <= latest_drawn) ++not_later;
  }
  EXPECT_GE(not_later, 7u);
  // One operation drawn: no arrow has both ends.
  std::ostringstream one;
  write_perfetto(one, trace, {.max_events = 1});
  EXPECT_EQ(events_with_ph(json::parse(one.str()), "s").size(), 0u);
  EXPECT_EQ(events_with_ph(full, "s").size(), 1u);
  // No cap, or a cap above the count: everything, and otherData says nothing of a cap.
  std::ostringstream all;
  EXPECT_FALSE(write_perfetto(all, trace, {.max_events = 18}).capped());
  EXPECT_EQ(json::parse(all.str()), full);
  EXPECT_FALSE(full["otherData"].contains("operations_written"));
}

}  // namespace
}  // namespace ranklab
