// Trace format v1: what the writer produces and that the reader gives it back unchanged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/expect_throw_msg.hpp"
#include "tests/traces/sample_trace.hpp"
#include "traces/call_site_table.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using trace_samples::from_text;
using trace_samples::large_trace;
using trace_samples::sample_trace;
using trace_samples::to_text;

//! Write then read gives an equal Trace: every op kind, pending events, groups, config.
TEST(RoundTripTest, SampleTraceReadsBackEqual) {
  const Trace trace = sample_trace();
  EXPECT_EQ(from_text(to_text(trace)), trace);
}

//! The sample really covers every op kind and both statuses (so the round trip means it).
TEST(RoundTripTest, SampleCoversEveryOpKindAndStatus) {
  std::set<OpKind> kinds;
  std::set<OpStatus> statuses;
  for (const auto& events : sample_trace().ranks) {
    for (const TraceEvent& event : events) {
      kinds.insert(event.op);
      statuses.insert(event.status);
    }
  }
  EXPECT_EQ(kinds.size(), 11U);
  EXPECT_EQ(statuses.size(), 2U);
}

//! Writing is deterministic, and a read trace writes back to the same bytes.
TEST(RoundTripTest, WriteReadWriteIsByteIdentical) {
  const std::string text = to_text(sample_trace());
  EXPECT_EQ(to_text(sample_trace()), text);
  EXPECT_EQ(to_text(from_text(text)), text);
}

//! A call site with the program's label (format 1.2) reads back equal, keys sorted.
TEST(RoundTripTest, SiteWithLabelReadsBackEqual) {
  Trace trace = sample_trace();
  trace.ranks[0][0].site =
      CallSite{"model/pipeline_step.cpp", 42, "exchange", "PP send of micro-batch 1"};
  const std::string text = to_text(trace);
  EXPECT_NE(text.find(R"("site":{"file":"model/pipeline_step.cpp","function":"exchange","label":"PP send of micro-batch 1","line":42})"),
            std::string::npos)
      << text;
  EXPECT_EQ(from_text(text), trace);
}

//! The reader keeps one copy of each distinct site (traces/call_site_table.hpp): events
//! that name the same site share it, events of another site do not.
TEST(RoundTripTest, ReadEventsShareTheirSites) {
  Trace trace = sample_trace();
  const CallSite site{"model/pipeline_step.cpp", 42, "exchange", "PP send"};
  auto& events = trace.ranks[0];
  ASSERT_GE(events.size(), 3U);
  events[0].site = site;  // two copies of one site, then another
  events[1].site = site;
  events[2].site = CallSite{"model/pipeline_step.cpp", 43, "exchange", "PP send"};
  const Trace read = from_text(to_text(trace));
  EXPECT_EQ(read, trace);
  const auto& back = read.ranks[0];
  EXPECT_EQ(&*back[0].site, &*back[1].site);
  EXPECT_NE(&*back[0].site, &*back[2].site);
}

//! The reader reuses the site of the line before when its text is the same: a site that
//! comes back after another one is still the one copy, and each event keeps its own.
TEST(RoundTripTest, SitesThatComeBackShareTheirFirstCopy) {
  Trace trace = sample_trace();
  auto& events = trace.ranks[0];
  ASSERT_GE(events.size(), 3U);
  const CallSite a{"a.cpp", 1, "f", ""};
  const CallSite b{"a.cpp", 2, "f", ""};
  events[0].site = a;
  events[1].site = b;
  events[2].site = a;
  const Trace read = from_text(to_text(trace));
  EXPECT_EQ(read, trace);
  const auto& back = read.ranks[0];
  EXPECT_EQ(*back[1].site, b);
  EXPECT_EQ(&*back[0].site, &*back[2].site);
  EXPECT_NE(&*back[0].site, &*back[1].site);
}

//! CallSiteTable: equal sites intern to one copy; the empty site is none.
TEST(CallSiteTableTest, EqualSitesShareOneCopy) {
  CallSiteTable table;
  const SiteRef a = table.intern({"a.cpp", 1, "f", ""});
  const SiteRef b = table.intern({"a.cpp", 1, "f", ""});
  const SiteRef c = table.intern({"a.cpp", 1, "f", "label"});
  EXPECT_EQ(&*a, &*b);
  EXPECT_NE(&*a, &*c);
  EXPECT_EQ(a, (CallSite{"a.cpp", 1, "f", ""}));
  EXPECT_TRUE(table.intern({}).empty());
  EXPECT_EQ(table.size(), 2U);
}

//! The header line has its keys in the documented order, compact.
TEST(RoundTripTest, HeaderLineIsExact) {
  Trace trace;
  trace.header.world_size = 2;
  trace.header.groups = {{"world", {0, 1}}, {"pp[1,0]", {1, 0}}};
  trace.header.config = {{"seed", 3}, {"policy", "rank-order"}};
  trace.ranks.resize(2);
  EXPECT_EQ(to_text(trace), R"({"format":"ranklab-trace","version":"1.4","world_size":2,"groups":[)"
                            R"({"name":"world","ranks":[0,1]},{"name":"pp[1,0]","ranks":[1,0]}],)"
                            R"("config":{"policy":"rank-order","seed":3}})"
                            "\n");
}

//! Event lines: fixed key order, group by name, fields that do not apply left out.
TEST(RoundTripTest, EventLinesAreExact) {
  const Trace trace = sample_trace();
  const TraceHeader& header = trace.header;
  EXPECT_EQ(format_event(trace.ranks[0][0], header),
            R"({"rank":0,"rank_seq":0,"op":"send","group":"world","peer":1,"tag":7,)"
            R"("dtype":"f32","count":4,"bytes":16,"hash":"0123456789abcdef","msg":"0:0",)"
            R"("lamport":1})");
  EXPECT_EQ(format_event(trace.ranks[0][3], header),
            R"({"rank":0,"rank_seq":3,"op":"reduce","group":"tp[0,1]","dtype":"i32","count":5,)"
            R"("bytes":20,"hash":"fedcba9876543110","coll_seq":0,"root":1,"reduce_op":"max",)"
            R"("lamport":5})");
  EXPECT_EQ(format_event(trace.ranks[0][10], header),
            R"({"rank":0,"rank_seq":10,"op":"recv","status":"pending","group":"world","tag":9,)"
            R"("dtype":"f32","count":4,"bytes":16,"lamport":11,"in_flight":[2,8],"blocked":true})");
  EXPECT_EQ(format_event(trace.ranks[0][9], header),
            R"({"rank":0,"rank_seq":9,"op":"barrier","group":"world","dtype":"u8","count":0,)"
            R"("bytes":0,"coll_seq":6,"lamport":11})");
}

//! Compute events (1.2) are written in order with only the members that are set, read back
//! equal, and sum into the work's totals; an unlabelled amount keeps the 1.1 object form.
TEST(RoundTripTest, ComputeEventsRoundTrip) {
  Trace trace = sample_trace();
  TraceEvent& e = trace.ranks[0][0];
  e.compute.add({.label = "forward", .layer = 2, .microbatch = 1, .chunk = 0, .flops = 4096});
  e.compute.add({.label = "backward \"x\"", .layer = 2, .microbatch = 1, .seconds = 0.5,
                 .vt_start_ns = 10, .vt_end_ns = 20});
  trace.ranks[1].back().compute_after = {.flops = 3};
  EXPECT_DOUBLE_EQ(e.compute.flops, 4096);
  EXPECT_DOUBLE_EQ(e.compute.seconds, 0.5);
  const std::string line = format_event(e, trace.header);
  EXPECT_NE(line.find(R"("compute":[{"label":"forward","layer":2,"mb":1,"chunk":0,"flops":4096},)"
                      R"({"label":"backward \"x\"","layer":2,"mb":1,"s":0.5,"vt_start_ns":10,)"
                      R"("vt_end_ns":20}])"),
            std::string::npos)
      << line;
  EXPECT_NE(format_event(trace.ranks[1].back(), trace.header).find(R"("compute_after":{"flops":3})"),
            std::string::npos);
  const Trace back = from_text(to_text(trace));
  EXPECT_EQ(back, trace);
  EXPECT_DOUBLE_EQ(back.ranks[0][0].compute.flops, 4096);
}

//! Staging copies (1.3) are compute events with `copy`, `bytes` and `device`, written after
//! the pass members, read back equal; a 1.2 trace has none and reads as before.
TEST(RoundTripTest, StagingCopiesRoundTrip) {
  Trace trace = sample_trace();
  TraceEvent& e = trace.ranks[0][0];
  e.compute.add({.label = "forward", .layer = 0, .flops = 8});
  e.compute.add({.label = "staging",
                 .copy = StagingCopy::to_host,
                 .bytes = 4096,
                 .device = "cpu-staged:0"});
  trace.ranks[1].back().compute_after.add(
      {.label = "staging", .copy = StagingCopy::to_device, .bytes = 16, .device = "cuda:1"});
  const std::string line = format_event(e, trace.header);
  EXPECT_NE(line.find(R"({"label":"staging","copy":"d2h","bytes":4096,"device":"cpu-staged:0"}])"),
            std::string::npos)
      << line;
  const Trace back = from_text(to_text(trace));
  EXPECT_EQ(back, trace);
  EXPECT_TRUE(back.ranks[0][0].compute.items[1].staging());
  EXPECT_DOUBLE_EQ(back.ranks[0][0].compute.flops, 8);  // a copy adds no FLOPs

  Trace old = sample_trace();
  old.header.version = "1.2";
  old.ranks[0][0].compute.add({.label = "forward", .layer = 0, .flops = 8});
  EXPECT_EQ(from_text(to_text(old)), old);
}

//! A 1.1 trace (compute as one amount) still reads, as an unlabelled amount.
TEST(RoundTripTest, VersionOneOneComputeStillReads) {
  Trace trace = sample_trace();
  trace.header.version = "1.1";
  trace.ranks[0][0].compute = {.flops = 2e9, .seconds = 0.25};
  const std::string text = to_text(trace);
  EXPECT_NE(text.find(R"("compute":{"flops":2000000000,"s":0.25})"), std::string::npos) << text;
  const Trace back = from_text(text);
  EXPECT_EQ(back, trace);
  EXPECT_TRUE(back.ranks[0][0].compute.items.empty());
}

//! A 1.0 trace (no wait points) reads, keeps its version, and writes back byte for byte.
TEST(RoundTripTest, VersionOneZeroStillReads) {
  Trace trace = sample_trace();
  trace.header.version = "1.0";
  for (auto& events : trace.ranks) {
    for (TraceEvent& event : events) {
      event.in_flight.clear();
      event.blocked = false;
    }
  }
  const std::string text = to_text(trace);
  EXPECT_NE(text.find(R"("version":"1.0")"), std::string::npos);
  EXPECT_EQ(text.find("in_flight"), std::string::npos);
  EXPECT_EQ(from_text(text), trace);
  EXPECT_EQ(to_text(from_text(text)), text);
}

//! Group names are JSON-escaped, and survive the round trip.
TEST(RoundTripTest, GroupNamesAreEscaped) {
  Trace trace;
  trace.header.world_size = 1;
  trace.header.groups = {{"world", {0}}, {"odd \"name\"\\\t", {0}}};
  trace.ranks = {
      {trace_samples::collective_event(OpKind::barrier, 0, 0, 1, 0, DataType::u8, 0, 1)}};
  const std::string text = to_text(trace);
  EXPECT_NE(text.find(R"("group":"odd \"name\"\\\t")"), std::string::npos) << text;
  EXPECT_EQ(from_text(text), trace);
}

//! Ranks with no events, and a world of one, round-trip.
TEST(RoundTripTest, RanksWithoutEvents) {
  Trace trace;
  trace.header.world_size = 3;
  trace.header.groups = {{"world", {0, 1, 2}}};
  trace.ranks.resize(3);
  EXPECT_EQ(from_text(to_text(trace)), trace);
}

//! A minor version (1.x) is accepted and kept; unknown keys of later minors are ignored.
TEST(RoundTripTest, LaterMinorVersionWithExtraKeys) {
  const std::string text =
      R"({"format":"ranklab-trace","version":"1.7","world_size":1,"new_key":[1],)"
      R"("groups":[{"name":"world","ranks":[0],"colour":"red"}],"config":{}})"
      "\n"
      R"({"rank":0,"rank_seq":0,"op":"barrier","group":"world","dtype":"u8","count":0,)"
      R"("bytes":0,"coll_seq":0,"lamport":1,"virtual_time_ns":1200})"
      "\n";
  const Trace trace = from_text(text);
  EXPECT_EQ(trace.header.version, "1.7");
  ASSERT_EQ(trace.ranks.size(), 1U);
  ASSERT_EQ(trace.ranks[0].size(), 1U);
  EXPECT_EQ(trace.ranks[0][0].op, OpKind::barrier);
}

//! Events may come in any order in the file; each rank comes back in rank_seq order.
TEST(RoundTripTest, ReaderSortsEventsByRankSeq) {
  const Trace trace = sample_trace();
  const std::string text = to_text(trace);
  // Reverse the event lines (keep the header first), and add CRLF and blank lines.
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string shuffled = lines[0] + "\r\n";
  for (std::size_t i = lines.size() - 1; i > 0; --i) shuffled += lines[i] + "\r\n\n";
  EXPECT_EQ(from_text(shuffled + "\n  \n"), trace);
}

//! Large traces cross the writer's flush boundary (1 MiB) and still round-trip.
TEST(RoundTripTest, LargeTraceRoundTrips) {
  const Trace trace = large_trace(5, 4000);
  const std::string text = to_text(trace);
  EXPECT_GT(text.size(), std::size_t{2} << 20);
  EXPECT_EQ(from_text(text), trace);
}

//! The file entry points round-trip through a real file.
TEST(RoundTripTest, FileRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ranklab_roundtrip_" + std::to_string(::getpid()) + ".jsonl");
  write_trace_file(path, sample_trace());
  EXPECT_EQ(read_trace_file(path), sample_trace());
  std::filesystem::remove(path);
}

//! A file that cannot be created is a TraceError naming the path and the reason, as every
//! output file's (write_output_file): was "cannot open trace file for writing (...)".
TEST(RoundTripTest, UnwritablePathIsATraceError) {
  EXPECT_THROW_MSG(write_trace_file("/nonexistent-ranklab-dir/t.jsonl", sample_trace()), TraceError,
                   "/nonexistent-ranklab-dir/t.jsonl: cannot write the trace "
                   "(No such file or directory)");
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("ranklab_regular_" + std::to_string(::getpid()));
  std::ofstream(file) << "a regular file\n";
  EXPECT_THROW_MSG(write_trace_file(file / "t.jsonl", sample_trace()), TraceError,
                   (file / "t.jsonl").string() + ": cannot write the trace (Not a directory)");
  std::filesystem::remove(file);
}

//! The example in traces/FORMAT.md is a valid trace, in the writer's exact bytes.
TEST(RoundTripTest, FormatDocumentExampleIsValid) {
  std::ifstream doc(std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces" / "FORMAT.md");
  ASSERT_TRUE(doc) << "cannot open FORMAT.md";
  std::string example;
  for (std::string line; std::getline(doc, line);) {
    if (line.starts_with("{\"")) example += line + "\n";
  }
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(to_text(from_text(example, "FORMAT.md")), example);
}

//! An event naming a group the header lacks is a bug in the recorder: UsageError.
TEST(RoundTripTest, EventWithUnknownGroupIndexIsAUsageError) {
  Trace trace = sample_trace();
  trace.ranks[2][0].group = 9;
  EXPECT_THROW_MSG(to_text(trace), UsageError,
                   "trace event of rank 2 rank_seq 0: group index 9 but the header has 4 groups");
  EXPECT_THROW(format_event(trace.ranks[2][0], trace.header), UsageError);
}

}  // namespace
}  // namespace ranklab
