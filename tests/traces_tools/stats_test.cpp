// `ranklab stats` as a library: the counting rules of traces/stats.hpp, on a trace whose
// totals are worked out by hand.
#include "traces/stats.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/traces/sample_trace.hpp"

namespace ranklab {
namespace {

using trace_samples::sample_trace;

//! The group kind is the name up to its first '['.
TEST(StatsTest, GroupKindIsPrefixBeforeBracket) {
  EXPECT_EQ(group_kind("tp[0,1]"), "tp");
  EXPECT_EQ(group_kind("world"), "world");
  EXPECT_EQ(group_kind("dp[2,0]"), "dp");
  EXPECT_EQ(group_kind("[x]"), "");
}

//! Sample trace (tests/traces/sample_trace.hpp): a message counts once at its send, a
//! collective once per member with its own bytes, pending operations apart.
TEST(StatsTest, CountsByTheRules) {
  const TraceStats stats = compute_stats(sample_trace());
  EXPECT_EQ(stats.world_size, 4);
  EXPECT_EQ(stats.events, 18u);
  EXPECT_EQ(stats.pending, 4u);
  EXPECT_EQ(stats.completed, 14u);
  EXPECT_EQ(stats.dangling_receives, 0u);

  ASSERT_EQ(stats.group_kinds.size(), 3u);
  const GroupKindTraffic& world = stats.group_kinds.at("world");
  EXPECT_EQ(world.groups, 1u);
  EXPECT_EQ(world.p2p, (Traffic{1, 16}));
  // rank 0: all_reduce 32 + broadcast 24 + all_gather 16 + reduce_scatter 16 + scatter 8 +
  // all_to_all 24 + barrier 0; rank 1: all_reduce 32.
  EXPECT_EQ(world.collectives, (Traffic{8, 152}));
  EXPECT_EQ(stats.group_kinds.at("tp"), (GroupKindTraffic{2, {}, {2, 40}}));
  EXPECT_EQ(stats.group_kinds.at("dp"), (GroupKindTraffic{1, {}, {2, 16}}));

  EXPECT_EQ(stats.operations.at("send"), (Traffic{1, 16}));
  EXPECT_EQ(stats.operations.at("recv"), (Traffic{1, 16}));
  EXPECT_EQ(stats.operations.at("all_reduce"), (Traffic{2, 64}));
  EXPECT_EQ(stats.operations.at("gather"), (Traffic{2, 16}));
  EXPECT_EQ(stats.operations.at("barrier"), (Traffic{1, 0}));
  EXPECT_EQ(stats.operations.size(), 11u);

  ASSERT_EQ(stats.matrix.size(), 1u);
  EXPECT_EQ(stats.matrix.at({0, 1}), (Traffic{1, 16}));
}

//! Staging copies (format 1.3) count per direction with their bytes, wherever they sit
//! (before an operation, after a rank's last, on a pending one); the text and JSON say so.
TEST(StatsTest, CountsStagedBytes) {
  Trace trace = sample_trace();
  EXPECT_EQ(compute_stats(trace).staged_to_host, (Traffic{}));
  EXPECT_EQ(format_stats(compute_stats(trace), "t").find("staging"), std::string::npos);
  trace.ranks[0][0].compute.add({.label = "forward", .layer = 0, .flops = 4});
  trace.ranks[0][0].compute.add({.label = "staging", .copy = StagingCopy::to_host, .bytes = 16});
  trace.ranks[0][1].compute.add({.label = "staging", .copy = StagingCopy::to_device, .bytes = 16});
  trace.ranks[1].back().compute_after.add(
      {.label = "staging", .copy = StagingCopy::to_device, .bytes = 32});
  const TraceStats stats = compute_stats(trace);
  EXPECT_EQ(stats.staged_to_host, (Traffic{1, 16}));
  EXPECT_EQ(stats.staged_to_device, (Traffic{2, 48}));
  EXPECT_NE(format_stats(stats, "t").find(
                "staging: 1 copies device->host (16 B), 2 copies host->device (48 B)"),
            std::string::npos)
      << format_stats(stats, "t");
  const nlohmann::json json = stats_to_json(stats);
  EXPECT_EQ(json["staging"]["d2h"]["bytes"], 16);
  EXPECT_EQ(json["staging"]["h2d"]["copies"], 2);
}

//! A receive whose send line is gone is counted as dangling, not guessed at.
TEST(StatsTest, CountsDanglingReceives) {
  Trace trace = sample_trace();
  trace.ranks[0].erase(trace.ranks[0].begin());  // the send 0:0 that rank 1 received
  const TraceStats stats = compute_stats(trace);
  EXPECT_EQ(stats.dangling_receives, 1u);
  EXPECT_TRUE(stats.matrix.empty());
  EXPECT_NE(format_stats(stats, "t").find("warning: 1 receives name a send"), std::string::npos);
}

//! Small worlds print the matrix as a table; large ones list the busiest pairs.
TEST(StatsTest, TextMatrixDenseOrBusiestPairs) {
  const std::string small = format_stats(compute_stats(sample_trace()), "sample.jsonl");
  EXPECT_NE(small.find("trace sample.jsonl: world 4, 18 operations (14 completed, 4 pending)"),
            std::string::npos)
      << small;
  EXPECT_NE(small.find("sender (row) -> receiver (column)"), std::string::npos) << small;

  const std::string large = format_stats(compute_stats(trace_samples::large_trace(40, 6)), "big");
  EXPECT_NE(large.find("busiest sender -> receiver pairs (40 pairs talked)"), std::string::npos)
      << large;
  EXPECT_NE(large.find("... 8 more pairs (all of them: --json)"), std::string::npos) << large;
}

//! The JSON lists every kind, operation and talking pair.
TEST(StatsTest, JsonReport) {
  const nlohmann::json json = stats_to_json(compute_stats(sample_trace()));
  EXPECT_EQ(json["events"], 18);
  EXPECT_EQ(json["group_kinds"].size(), 3u);
  EXPECT_EQ(json["group_kinds"][0]["kind"], "dp");
  EXPECT_EQ(json["group_kinds"][2]["collectives"]["bytes"], 152);
  EXPECT_EQ(json["operations"].size(), 11u);
  EXPECT_EQ(json["matrix"],
            nlohmann::json::parse(R"([{"src":0,"dst":1,"messages":1,"bytes":16}])"));
}

}  // namespace
}  // namespace ranklab
