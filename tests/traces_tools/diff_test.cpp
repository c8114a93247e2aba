// `ranklab diff` as a library: what is compared, what is ignored, and how it reads.
#include "traces/diff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/traces/sample_trace.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using trace_samples::sample_trace;

std::vector<std::string> field_names(const RankDivergence& d) {
  return {d.fields.begin(), d.fields.end()};
}

//! A trace compared with itself has no divergence and a summary starting "identical:".
TEST(DiffTest, IdenticalTracesHaveNoDivergence) {
  const Trace a = sample_trace();
  const Trace b = sample_trace();
  const TraceDiff diff = diff_traces(a, b);
  EXPECT_TRUE(diff.identical());
  EXPECT_EQ(diff.ranks_compared, 4);
  const std::string text = format_diff(diff, "a.jsonl", "b.jsonl");
  EXPECT_NE(text.find("\nidentical: 4 ranks"), std::string::npos) << text;
}

//! Lamport clocks, the header's config and the order of header groups never count.
TEST(DiffTest, IgnoresLamportConfigAndGroupOrder) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.header.config = {{"policy", "pct:3"}, {"threads", 4}};
  for (auto& events : b.ranks) {
    for (TraceEvent& event : events) event.lamport += 100 + event.rank_seq * 7;
  }
  // Swap groups 1 and 2 and renumber the events: same names, other indices.
  std::swap(b.header.groups[1], b.header.groups[2]);
  for (auto& events : b.ranks) {
    for (TraceEvent& event : events) {
      if (event.group == 1 || event.group == 2) event.group = 3 - event.group;
    }
  }
  EXPECT_TRUE(diff_traces(a, b).identical()) << format_diff(diff_traces(a, b), "a", "b");
}

//! Each rank reports only its first divergence, naming every differing field of it.
TEST(DiffTest, ReportsFirstDivergencePerRank) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ranks[1][0].peer = 2;  // rank 1 op #0: peer and hash differ
  b.ranks[1][0].hash ^= 1;
  b.ranks[1][2].count = 6;  // a later difference on the same rank: not reported
  b.ranks[1][2].bytes = 24;
  b.ranks[2][1].reduce_op = ReduceOp::max;
  const TraceDiff diff = diff_traces(a, b);
  ASSERT_EQ(diff.divergences.size(), 2u);
  EXPECT_EQ(diff.divergences[0].rank, 1);
  EXPECT_EQ(diff.divergences[0].op_index, 0u);
  EXPECT_EQ(field_names(diff.divergences[0]), (std::vector<std::string>{"peer", "hash"}));
  EXPECT_EQ(diff.divergences[1].rank, 2);
  EXPECT_EQ(diff.divergences[1].op_index, 1u);
  EXPECT_EQ(field_names(diff.divergences[1]), (std::vector<std::string>{"reduce_op"}));
  const std::string text = format_diff(diff, "a.jsonl", "b.jsonl");
  EXPECT_NE(text.find("rank 1: first divergence at op #0: peer, hash\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  B: #0 recv world peer 2 tag 7 4 x f32 hash"), std::string::npos) << text;
  EXPECT_NE(text.find("\ndifferent: 2 of 4 ranks diverge"), std::string::npos) << text;
}

//! A rank whose sequence ends early diverges where it ends, with no fields.
TEST(DiffTest, ShorterSequenceDivergesWhereItEnds) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ranks[0].pop_back();
  const TraceDiff diff = diff_traces(a, b);
  ASSERT_EQ(diff.divergences.size(), 1u);
  const RankDivergence& d = diff.divergences[0];
  EXPECT_EQ(d.op_index, a.ranks[0].size() - 1);
  EXPECT_TRUE(d.a.has_value());
  EXPECT_FALSE(d.b.has_value());
  const std::string text = format_diff(diff, "a", "b");
  EXPECT_NE(text.find("B ends after 10 operations"), std::string::npos) << text;
  EXPECT_NE(text.find("  B: (end of trace)"), std::string::npos) << text;
}

//! A hash is compared only when both events carry one ("when known" in FORMAT.md).
TEST(DiffTest, HashComparedOnlyWhenBothKnowIt) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ranks[0][0].has_hash = false;
  EXPECT_TRUE(diff_traces(a, b).identical());
  b.ranks[0][0].has_hash = true;
  b.ranks[0][0].hash = 42;
  EXPECT_FALSE(diff_traces(a, b).identical());
}

//! Status, group (by name), msg and root are compared too.
TEST(DiffTest, ComparesStatusGroupMsgAndRoot) {
  const Trace a = sample_trace();
  const auto first_fields = [&a](auto mutate) {
    Trace b = sample_trace();
    mutate(b);
    const TraceDiff diff = diff_traces(a, b);
    return diff.divergences.empty() ? std::vector<std::string>{}
                                    : field_names(diff.divergences.front());
  };
  EXPECT_EQ(first_fields([](Trace& t) { t.ranks[0][0].status = OpStatus::pending; }),
            std::vector<std::string>{"status"});
  EXPECT_EQ(first_fields([](Trace& t) { t.ranks[0][3].group = 2; }),
            std::vector<std::string>{"group"});
  EXPECT_EQ(first_fields([](Trace& t) { t.ranks[0][0].msg.sender_seq = 9; }),
            std::vector<std::string>{"msg"});
  EXPECT_EQ(first_fields([](Trace& t) { t.ranks[0][2].root = 1; }),
            std::vector<std::string>{"root"});
}

//! World size and group membership differences are reported as header differences.
TEST(DiffTest, ReportsHeaderDifferences) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.header.groups[3].ranks = {0, 2};
  b.header.groups.push_back({"pp[1,3]", {1, 3}});
  const TraceDiff diff = diff_traces(a, b);
  EXPECT_FALSE(diff.identical());
  EXPECT_TRUE(diff.divergences.empty());
  EXPECT_EQ(diff.header_differences,
            (std::vector<std::string>{"group 'dp[2,0]' has ranks [2,0] in A, [0,2] in B",
                                      "group 'pp[1,3]' only in B"}));
}

//! The JSON report carries the verdict, the compared fields and both events as trace lines.
TEST(DiffTest, JsonReport) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ranks[3][0].tag = 5;
  const nlohmann::json json = diff_to_json(diff_traces(a, b), "a.jsonl", "b.jsonl");
  EXPECT_FALSE(json["identical"].get<bool>());
  EXPECT_EQ(json["ignored"], nlohmann::json({"lamport", "config"}));
  ASSERT_EQ(json["ranks"].size(), 1u);
  EXPECT_EQ(json["ranks"][0]["rank"], 3);
  EXPECT_EQ(json["ranks"][0]["fields"], nlohmann::json({"tag"}));
  EXPECT_EQ(json["ranks"][0]["a"]["tag"], 0);
  EXPECT_EQ(json["ranks"][0]["b"]["tag"], 5);
  EXPECT_EQ(json["a"]["events"], 18);
}

//! Two recordings of one deterministic program under different policies: no divergence,
//! although the files differ (Lamport clocks, config).
TEST(DiffTest, ExamplesFromTwoPoliciesAreIdentical) {
  const Trace a = tools_testing::read_example("allreduce_ring_w4.jsonl");
  const Trace b = tools_testing::read_example("allreduce_ring_w4_random7.jsonl");
  EXPECT_NE(a, b);
  EXPECT_TRUE(diff_traces(a, b).identical()) << format_diff(diff_traces(a, b), "a", "b");
}

//! Receives from any source legitimately differ between policies: diff says where.
TEST(DiffTest, WildcardExamplesDiverge) {
  const Trace a = tools_testing::read_example("wildcard_race.jsonl");
  const Trace b = tools_testing::read_example("wildcard_race_random3.jsonl");
  const TraceDiff diff = diff_traces(a, b);
  ASSERT_FALSE(diff.divergences.empty());
  const RankDivergence& d = diff.divergences.front();
  ASSERT_TRUE(d.a.has_value());
  EXPECT_EQ(d.a->op, OpKind::recv);
  EXPECT_NE(std::find(d.fields.begin(), d.fields.end(), "peer"), d.fields.end());
}

}  // namespace
}  // namespace ranklab
