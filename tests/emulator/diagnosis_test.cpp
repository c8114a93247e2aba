// The one-line diagnosis of a deadlock (RunReport::culprit) names the kind of bug and the
// ranks, groups and calls; the wait-for graph is recorded and drawn as Graphviz DOT.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "comm/errors.hpp"
#include "emulator/wait_graph_dot.hpp"
#include "tests/emulator/emulator_test_support.hpp"

namespace ranklab::testing {
namespace {

struct Case {
  const char* name;
  std::function<void(Communicator&)> program;
  CulpritKind kind;
  std::vector<int> ranks;
  std::string text;  ///< a part of the culprit's text
};

// kSend1Line, kRecv1Line: the lines of the calls that reports name, each kept so by its
// static_assert (editing the file above them moves them along).
constexpr int kSend1Line = __LINE__ + 4;
void send1(Communicator& w, int dst, int tag) {
  const std::int32_t v = w.rank();
  static_assert(kSend1Line == __LINE__ + 1);
  w.send(std::span<const std::int32_t>(&v, 1), dst, tag);
}
constexpr int kRecv1Line = __LINE__ + 4;
void recv1(Communicator& w, int src, int tag) {
  std::int32_t v = 0;
  static_assert(kRecv1Line == __LINE__ + 1);
  w.recv(std::span(&v, 1), src, tag);
}

std::vector<Case> cases() {
  return {
      {"send_cycle",
       [](Communicator& w) {
         if (w.rank() < 2) send1(w, 1 - w.rank(), 0);
       },
       CulpritKind::send_cycle,
       {0, 1},
       "ranks 0 and 1 each block in a send to the next before receiving"},
      {"recv_cycle",
       [](Communicator& w) {
         if (w.rank() < 2) recv1(w, 1 - w.rank(), 0);
       },
       CulpritKind::recv_cycle,
       {0, 1},
       "rank 0 in recv from rank 1 tag 0 in world (1 x i32), op #0"},
      {"tag_mismatch",
       [](Communicator& w) {
         if (w.rank() == 0) send1(w, 1, 1);
         if (w.rank() == 1) recv1(w, 0, 2);
       },
       CulpritKind::tag_mismatch,
       {0, 1},
       fmt::format("rank 1 waits in recv from rank 0 tag 2 in world (1 x i32), op #0 at "
                   "tests/emulator/diagnosis_test.cpp:{} (recv1), but rank 0 sent it ",
                   kRecv1Line) +
       "tag 1 instead (op #0: send to rank 1 tag 1 in world)"},
      {"source_mismatch",
       [](Communicator& w) {
         if (w.rank() == 0) send1(w, 1, 0);
         if (w.rank() == 1) recv1(w, 2, 0);
         if (w.rank() == 2) recv1(w, 1, 0);
       },
       CulpritKind::source_mismatch,
       {0, 1},
       "the message with that tag came from rank 0, not rank 2"},
      {"group_mismatch",
       [](Communicator& w) {
         Communicator pair = w.new_group(std::vector<int>{0, 1}, "pair");
         if (w.rank() == 0) send1(pair, 1, 0);
         if (w.rank() == 1) recv1(w, 0, 0);
       },
       CulpritKind::group_mismatch,
       {0, 1},
       "rank 0 sent it in pair[0,1] instead"},
      {"p2p_cycle",
       [](Communicator& w) {
         if (w.rank() == 0) send1(w, 1, 5);
         if (w.rank() == 1) recv1(w, 2, 6);
         if (w.rank() == 2) recv1(w, 0, 7);
       },
       CulpritKind::p2p_cycle,
       {0, 1, 2},
       "ranks 0-2 wait for each other in sends and receives (cycle 0 -> 1 -> 2 -> 0)"},
      {"collective_vs_p2p",
       [](Communicator& w) {
         if (w.rank() == 0) {
           std::vector<float> x(2);
           w.all_reduce(std::span(x));
         } else {
           recv1(w, 0, 0);
         }
       },
       CulpritKind::collective_vs_p2p,
       {0, 1},
       "rank 0 in all_reduce #0 in world"},
      {"missing_participant",
       [](Communicator& w) {
         if (w.rank() != 1) w.barrier();
       },
       CulpritKind::missing_participant,
       {1},
       "rank 1 returned while rank"},
  };
}

class DiagnosisTest
    : public ::testing::TestWithParam<std::tuple<ClusterParam, std::size_t>> {};

//! Each kind of deadlock gets its culprit kind, the ranks to blame (most to blame first)
//! and a text naming ranks, groups and calls, under every policy and thread count.
TEST_P(DiagnosisTest, NamesTheKindRanksAndCalls) {
  const auto& [param, index] = GetParam();
  const Case c = cases()[index];
  const RunReport report = run_ranks(param.options(), c.program);
  ASSERT_EQ(report.status, RunStatus::deadlock) << report.summary << "\n" << report.details;
  EXPECT_EQ(report.culprit.kind, c.kind) << report.culprit.text;
  EXPECT_EQ(report.culprit.ranks, c.ranks) << report.culprit.text;
  EXPECT_TRUE(contains(report.culprit.text, c.text));
  EXPECT_FALSE(report.wait_graph.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, DiagnosisTest,
    ::testing::Combine(::testing::ValuesIn(cluster_params({3, 8})),
                       ::testing::Range<std::size_t>(0, cases().size())),
    [](const auto& p) {
      return std::get<0>(p.param).name() + "_" + cases()[std::get<1>(p.param)].name;
    });

//! The wait-for graph of a send cycle, in DOT: both ranks as boxes with their call, the
//! edges labelled and red (a cycle); ranks that returned are ovals.
TEST(WaitGraphTest, DotDrawsRanksCallsAndCycles) {
  ClusterOptions o;
  o.world_size = 3;
  const RunReport report = run_ranks(o, [](Communicator& w) {
    if (w.rank() < 2) send1(w, 1 - w.rank(), 4);
  });
  ASSERT_EQ(report.status, RunStatus::deadlock);
  const std::string dot = to_dot(report.wait_graph, report.summary);
  EXPECT_TRUE(contains(dot, "digraph wait_for {"));
  EXPECT_TRUE(contains(dot, "label=\"deadlock: 2 ranks blocked, none can proceed; cycle 0 -> 1 -> 0\""));
  EXPECT_TRUE(contains(dot, "r0 [shape=box, style=rounded, label=\"rank 0\\nsend to rank 1 tag 4 in world (1 x i32), op #0 at tests/emulator/diagnosis_test.cpp:" + std::to_string(kSend1Line) + " (send1)\"];"));
  EXPECT_TRUE(contains(dot, "r0 -> r1 [label=\"send tag 4\", color=red"));
  EXPECT_TRUE(contains(dot, "r1 -> r0 [label=\"send tag 4\", color=red"));
  EXPECT_EQ(dot.find("r2"), std::string::npos) << "rank 2 is not involved";

  const RunReport missing = run_ranks(o, [](Communicator& w) {
    if (w.rank() != 2) w.barrier();
  });
  const std::string drawn = to_dot(missing.wait_graph, missing.summary);
  EXPECT_TRUE(contains(drawn, "r2 [shape=ellipse, style=filled, fillcolor=\"#dddddd\", label=\"rank 2\\nfinished\"];"));
  EXPECT_TRUE(contains(drawn, "r0 -> r2 [label=\"barrier #0 world\"];"));
}

}  // namespace
}  // namespace ranklab::testing
