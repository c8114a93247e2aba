// Fault injection (emulator/faults.hpp): each fault ends in a precise report. A killed rank
// is the root cause and its peers are cancelled; a dropped message is named in the deadlock
// report; a delayed rank changes the schedule but not the results; a corrupted message
// changes the receiver's payload and hash only. Plans parse and print back, and bad ones
// are UsageErrors naming the text.
#include <gtest/gtest.h>

#include <vector>

#include "comm/errors.hpp"
#include "emulator/faults.hpp"
#include "emulator/wait_graph_dot.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/expect_throw_msg.hpp"
#include "traces/diff.hpp"

namespace ranklab::testing {
namespace {

ClusterOptions with_faults(const ClusterParam& p, std::vector<std::string> faults) {
  ClusterOptions o = p.options();
  for (const auto& f : faults) o.faults.faults.push_back(FaultSpec::parse(f));
  return o;
}

// Rank r sends its rank to r + 1 (tag 0) and receives from r - 1, in a chain from rank 0.
// kChainRecvLine: the line of its recv, which reports name (its static_assert keeps it so).
constexpr int kChainRecvLine = __LINE__ + 5;
void chain(Communicator& world) {
  const int me = world.rank(), n = world.size();
  std::int32_t value = me;
  static_assert(kChainRecvLine == __LINE__ + 1);
  if (me > 0) world.recv(std::span(&value, 1), me - 1, /*tag=*/0);
  if (me + 1 < n) world.send(std::span<const std::int32_t>(&value, 1), me + 1, /*tag=*/0);
}

class FaultTest : public ::testing::TestWithParam<ClusterParam> {};

//! kill:R@K ends rank R as it posts its op #K, the second all_reduce: the run is a
//! rank failure (exit 5) with rank R as root cause, every other rank is cancelled with
//! PeerAbortedError rather than left hanging, and the fault's note names the operation.
TEST_P(FaultTest, KillNamesTheKilledRankAsRootCause) {
  const int n = GetParam().world;
  const int victim = n / 2;
  RankErrors errors(n);
  const RunReport report =
      run_ranks(with_faults(GetParam(), {fmt::format("kill:{}@1", victim)}), [&](Communicator& w) {
        errors.run(w.rank(), [&] {
          for (int bucket = 0; bucket < 2; ++bucket) {
            std::vector<float> x(8, 1.0f);
            w.all_reduce(std::span(x));
          }
        });
      });
  ASSERT_EQ(report.status, RunStatus::rank_failed) << report.summary << "\n" << report.details;
  EXPECT_EQ(report.root_cause_rank, victim);
  EXPECT_EQ(report.culprit.kind, CulpritKind::rank_failure);
  ASSERT_FALSE(report.culprit.ranks.empty());
  EXPECT_EQ(report.culprit.ranks.front(), victim);
  EXPECT_TRUE(contains(report.summary, fmt::format("rank {} failed: killed by fault injection "
                                                   "(kill:{}@1) before its op #1",
                                                   victim, victim)));
  EXPECT_TRUE(contains(report.summary, "before its op #1: all_reduce #1 in world"));
  EXPECT_THROW_MSG(report.rethrow_if_failed(), RankKilledError, "kill:");
  for (int r = 0; r < n; ++r) {
    if (r == victim) continue;
    const std::string& kind = errors.kind(r);
    // A rank that finished both all_reduces before the kill (none can: the second needs
    // the victim) or was cancelled.
    EXPECT_EQ(kind, "PeerAbortedError") << r << ": " << errors.message(r);
  }
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_TRUE(contains(report.faults[0], fmt::format("kill:{}@1 fired: rank {} died instead of "
                                                     "posting its op #1 (all_reduce #1 in world",
                                                     victim, victim)));
}

//! drop:S->D#N loses the N-th message from S to D: the sender completes, the receiver
//! waits, and the deadlock report's culprit (lost-message) names the dropped message, its
//! sender's op # and the fault; the wait-for graph draws it as a dashed edge.
TEST_P(FaultTest, DropIsNamedInTheDeadlockReport) {
  const RunReport report = run_ranks(with_faults(GetParam(), {"drop:0->1#0"}), chain);
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary << "\n" << report.details;
  EXPECT_EQ(report.culprit.kind, CulpritKind::lost_message) << report.culprit.text;
  EXPECT_EQ(report.culprit.ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(contains(report.culprit.text,
                       fmt::format("rank 1 waits in recv from rank 0 tag 0 in world (1 x i32), "
                                   "op #0 at tests/emulator/fault_test.cpp:{} (chain), one "
                                   "message short: fault drop:0->1#0 dropped rank 0's send op "
                                   "#0 to it",
                                   kChainRecvLine)));
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_TRUE(contains(report.faults[0], "drop:0->1#0 fired: rank 0's send op #0 to rank 1 tag 0 "
                                         "in world (1 x i32) was lost"));
  EXPECT_EQ(report.ranks[0].state, RankOutcome::State::finished) << "the sender believes it sent";
  EXPECT_TRUE(contains(to_dot(report.wait_graph, report.summary),
                       "r0 -> r1 [label=\"lost: op #0 tag 0 (drop:0->1#0)\", style=dashed"));
}

//! delay:R@K:S makes rank R yield S times before its op #K: another interleaving, the same
//! results and per-rank events as without the fault.
TEST_P(FaultTest, DelayChangesNothingButTheSchedule) {
  const int n = GetParam().world;
  const auto program = [](std::vector<std::int64_t>& out) {
    return [&out](Communicator& w) {
      std::vector<std::int64_t> x = fill<std::int64_t>(w.rank(), 4);
      w.all_reduce(std::span(x));
      chain(w);
      if (w.rank() == 0) out = x;
    };
  };
  std::vector<std::int64_t> clean, delayed;
  auto clean_sink = std::make_shared<MemorySink>();
  auto delayed_sink = std::make_shared<MemorySink>();
  ClusterOptions a = GetParam().options();
  a.trace_sink = clean_sink;
  ClusterOptions b = with_faults(GetParam(), {fmt::format("delay:{}@0:5", n - 1)});
  b.trace_sink = delayed_sink;
  ASSERT_TRUE(run_ok(run_ranks(a, program(clean))));
  const RunReport report = run_ranks(b, program(delayed));
  ASSERT_TRUE(run_ok(report));
  EXPECT_EQ(clean, delayed);
  EXPECT_TRUE(diff_traces(clean_sink->trace(), delayed_sink->trace()).identical());
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_TRUE(contains(report.faults[0], fmt::format("rank {} yielded 5 times before its op #0",
                                                     n - 1)));
}

//! corrupt:S->D#N flips one bit of what D receives: D's value and recorded hash differ
//! from a clean run's, S's send and every other event do not.
TEST_P(FaultTest, CorruptChangesTheReceiverOnly) {
  const auto program = [](std::vector<float>& got) {
    return [&got](Communicator& w) {
      std::vector<float> x(6, static_cast<float>(w.rank() + 1));
      if (w.rank() == 0) w.send(std::span<const float>(x), 1, /*tag=*/3);
      if (w.rank() == 1) {
        w.recv(std::span(x), 0, /*tag=*/3);
        got = x;
      }
    };
  };
  std::vector<float> clean, corrupted;
  auto clean_sink = std::make_shared<MemorySink>();
  auto corrupt_sink = std::make_shared<MemorySink>();
  ClusterOptions a = GetParam().options();
  a.trace_sink = clean_sink;
  ClusterOptions b = with_faults(GetParam(), {"corrupt:0->1#0"});
  b.trace_sink = corrupt_sink;
  ASSERT_TRUE(run_ok(run_ranks(a, program(clean))));
  const RunReport report = run_ranks(b, program(corrupted));
  ASSERT_TRUE(run_ok(report));
  ASSERT_EQ(clean.size(), 6u);
  for (std::size_t i = 0; i < clean.size(); ++i) {
    if (i == 3) {
      EXPECT_NE(corrupted[i], clean[i]) << "the middle element is corrupted";
      EXPECT_GT(std::abs(corrupted[i]), 1e30f) << "its exponent's top bit flipped";
    } else {
      EXPECT_EQ(corrupted[i], clean[i]) << i;
    }
  }
  const TraceDiff diff = diff_traces(clean_sink->trace(), corrupt_sink->trace());
  ASSERT_EQ(diff.divergences.size(), 1u) << format_diff(diff, "clean", "corrupt");
  EXPECT_EQ(diff.divergences[0].rank, 1);
  EXPECT_EQ(diff.divergences[0].fields, (std::vector<std::string_view>{"hash"}));
  ASSERT_EQ(report.faults.size(), 1u);
  EXPECT_TRUE(contains(report.faults[0], "corrupt:0->1#0 fired: rank 0's send op #0 to rank 1 "
                                         "tag 3 in world (6 x f32) arrived at rank 1's op #0 "
                                         "with element 3 corrupted"));
}

//! A fault that never fires says so, with how far its rank or pair got.
TEST_P(FaultTest, UnfiredFaultsSaySo) {
  const RunReport report =
      run_ranks(with_faults(GetParam(), {"kill:1@99", "drop:1->0#0"}), chain);
  ASSERT_TRUE(run_ok(report));
  ASSERT_EQ(report.faults.size(), 2u);
  EXPECT_TRUE(contains(report.faults[0], "kill:1@99 never fired: rank 1 posted 2 operations"));
  EXPECT_TRUE(contains(report.faults[1], "drop:1->0#0 never fired: rank 1 sent 0 messages to rank 0"));
}

INSTANTIATE_TEST_SUITE_P(Worlds, FaultTest, ::testing::ValuesIn(cluster_params({3, 8})),
                         ParamName());

//! Fault texts parse and print back; bad ones are UsageErrors naming the text and the
//! forms, and a plan naming a rank outside the world is refused before any rank starts.
TEST(FaultPlanTest, ParsingAndValidation) {
  for (const char* text : {"kill:3@0", "drop:0->1#2", "delay:2@5:10", "corrupt:7->0#0"}) {
    EXPECT_EQ(FaultSpec::parse(text).to_string(), text);
  }
  for (const char* bad : {"kill", "kill:3", "kill:x@1", "drop:0-1#0", "drop:0->1", "delay:1@2",
                          "corrupt:0->1#-1", "explode:1@2"}) {
    EXPECT_THROW_MSG(FaultSpec::parse(bad), UsageError, bad);
  }
  EXPECT_THROW_MSG(FaultSpec::parse("melt:1@2"), UsageError,
                   "expected kill:RANK@OPNUM, drop:SRC->DST#N, delay:RANK@OPNUM:STEPS or "
                   "corrupt:SRC->DST#N");
  // A delay is bounded when parsed, not by the watchdog a minute later.
  EXPECT_EQ(FaultSpec::parse("delay:1@0:1000000").steps, 1'000'000u);
  EXPECT_THROW_MSG(FaultSpec::parse("delay:1@0:99999999999"), UsageError,
                   "invalid steps in fault 'delay:1@0:99999999999': at most 1000000 yields");
  ClusterOptions o;
  o.world_size = 4;
  o.faults.faults = {FaultSpec::parse("drop:1->4#0")};
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "fault drop:1->4#0: rank 4 is outside the world of 4");
  o.faults.faults = {FaultSpec::parse("corrupt:2->2#0")};
  EXPECT_THROW_MSG(Cluster{o}, UsageError, "needs two different ranks");
}

}  // namespace
}  // namespace ranklab::testing
