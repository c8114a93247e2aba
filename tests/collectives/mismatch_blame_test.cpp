// Issue 28 §1: a collective mismatch blames the rank whose call differs from the plurality's,
// under every scheduling policy, with one or two worker threads and whatever the algorithm:
// the verdict waits until every member has posted (or the run can go no further, and those
// that never came are listed as missing), never judging at the first two arrivals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/communicator.hpp"
#include "comm/errors.hpp"
#include "comm/mismatch_table.hpp"
#include "tests/emulator/emulator_test_support.hpp"
#include "tests/support/skip_all_reduce.hpp"

namespace ranklab::testing {
namespace {

constexpr int kWorld = 4;

/// Policies whose first arrivals differ (judged at the first disagreement, the issue saw
/// ranks 2, 1, 0 and 2 blamed under the first four).
const std::vector<std::string> kBlamePolicies = {"rank-order", "random:1", "random:2",
                                                 "random:3",   "pct:11:3", "preempt:1=3,2=2"};

using BlameParam = std::tuple<std::string, int, Algorithm>;  // policy, threads, algorithm

class MismatchBlameTest : public ::testing::TestWithParam<BlameParam> {
 protected:
  ClusterOptions options() const {
    ClusterParam p{kWorld, std::get<0>(GetParam()), std::get<1>(GetParam())};
    return p.options();
  }
  Algorithm algorithm() const { return std::get<2>(GetParam()); }

  /// Runs `fn` under this test's policy and threads, and under rank order on one thread:
  /// a mismatch both times, with the same report word for word.
  RunReport run_same_everywhere(const std::function<void(Communicator&)>& fn,
                                RankErrors* errors = nullptr) const {
    const RunReport report = run_ranks(options(), [&](Communicator& world) {
      if (errors == nullptr) return fn(world);
      errors->run(world.rank(), [&] { fn(world); });
    }, algorithm());
    EXPECT_EQ(report.status, RunStatus::mismatch) << report.summary << "\n" << report.details;
    ClusterOptions reference = ClusterParam{kWorld, "rank-order", 1}.options();
    const RunReport expected = run_ranks(reference, fn, algorithm());
    EXPECT_EQ(report.summary, expected.summary);
    EXPECT_EQ(report.details, expected.details);
    EXPECT_EQ(report.culprit.ranks, expected.culprit.ranks);
    return report;
  }
};

std::vector<float> values(std::size_t count) { return std::vector<float>(count, 1.0f); }

//! The classic bug: rank 0 all-reduces its loss for a log line the others never make, and
//! every rank then calls its next all_reduce. Rank 0 is blamed, 1 rank against 3, and every
//! member's call is in the table (none "not called yet"); rank 0 ends with the mismatch,
//! the others cancelled.
TEST_P(MismatchBlameTest, TheRankWithTheExtraCallIsBlamed) {
  RankErrors errors(kWorld);
  const RunReport report = run_same_everywhere(skip_all_reduce, &errors);
  EXPECT_EQ(report.root_cause_rank, 0);
  EXPECT_EQ(report.culprit.kind, CulpritKind::collective_mismatch);
  EXPECT_EQ(report.culprit.ranks, std::vector<int>{0});
  EXPECT_EQ(report.summary,
            "collective mismatch in world collective #1: the members' calls differ (rank 0 is "
            "the odd one: 1 rank vs 3)");
  EXPECT_TRUE(contains(report.culprit.text, "rank 0 called all_reduce(sum, f32, count=1)"));
  EXPECT_TRUE(contains(report.culprit.text, "where ranks 1-3 called all_reduce(sum, f32, count=8)"));
  EXPECT_TRUE(report.culprit.text.ends_with("(world collective #1): rank 0 is the odd one: 1 rank vs 3"))
      << report.culprit.text;
  const std::string& d = report.details;
  EXPECT_TRUE(contains(d, "\nrank 0 is the odd one: 1 rank vs 3\n"));
  EXPECT_EQ(d.find("never called"), std::string::npos) << d;
  EXPECT_EQ(d.find("not called yet"), std::string::npos) << d;
  for (int r = 0; r < kWorld; ++r) {
    // Each rank's row holds its own call: rank 0's loss, the others' gradients (the op #
    // depends on the algorithm: ring's messages are operations too).
    const std::size_t at = d.find(fmt::format("\n  {:>10}  {:>11}  ", r, r));
    ASSERT_NE(at, std::string::npos) << "row of rank " << r << "\n" << d;
    const std::string row = d.substr(at + 1, d.find('\n', at + 1) - at - 1);
    EXPECT_TRUE(contains(row, fmt::format("all_reduce(sum, f32, count={})", r == 0 ? 1 : 8)));
  }
  EXPECT_EQ(std::count(d.begin(), d.end(), '<'), 1) << "only rank 0's row differs:\n" << d;
  EXPECT_EQ(errors.kind(0), "MismatchError");
  for (int r = 1; r < kWorld; ++r) EXPECT_EQ(errors.kind(r), "PeerAbortedError") << r;
  EXPECT_EQ(report.ranks[0].state, RankOutcome::State::failed);
}

//! Two calls with two members each: no call has a plurality, so no row is marked and the
//! verdict lists each side; every member is blamed.
TEST_P(MismatchBlameTest, NoPluralitySaysSoAndListsEachSide) {
  const RunReport report = run_same_everywhere([](Communicator& world) {
    std::vector<float> x = values(world.rank() < 2 ? 4 : 8);
    world.all_reduce(std::span(x));
  });
  EXPECT_EQ(report.culprit.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(report.root_cause_rank, 0);
  EXPECT_TRUE(contains(report.details, "\nno call has a plurality: ranks 0, 1 vs ranks 2, 3\n"));
  EXPECT_EQ(report.details.find("<-- differs"), std::string::npos) << report.details;
  EXPECT_TRUE(contains(report.culprit.text,
                       "no call has a plurality in world collective #0: ranks 0, 1 called "
                       "all_reduce(sum, f32, count=4)"));
  EXPECT_TRUE(contains(report.culprit.text, "; ranks 2, 3 called all_reduce(sum, f32, count=8)"));
}

//! A member that never comes (rank 3 returns): the run can go no further, so the call is
//! judged on the members that posted, and rank 3 is listed as a missing participant.
TEST_P(MismatchBlameTest, MembersThatNeverCameAreMissingParticipants) {
  const RunReport report = run_same_everywhere([](Communicator& world) {
    if (world.rank() == 3) return;
    std::vector<float> x = values(world.rank() == 0 ? 1 : 8);
    world.all_reduce(std::span(x));
  });
  EXPECT_EQ(report.root_cause_rank, 0);
  EXPECT_EQ(report.culprit.ranks, std::vector<int>{0});
  const std::string& d = report.details;
  EXPECT_TRUE(contains(d, "\n           3            3  -         (never called: missing participant)\n"));
  EXPECT_TRUE(contains(d, "\nrank 0 is the odd one: 1 rank vs 2\n"
                          "missing participant: rank 3 never called world collective #0"));
  EXPECT_TRUE(report.culprit.text.ends_with("; rank 3 never called world collective #0"))
      << report.culprit.text;
}

//! Two members that disagree and two that never come (blocked in a receive nobody sends):
//! one against one is no plurality, and both absent members are listed.
TEST_P(MismatchBlameTest, OneAgainstOneWithTheRestBlockedElsewhere) {
  const RunReport report = run_same_everywhere([](Communicator& world) {
    if (world.rank() >= 2) {
      std::vector<float> never = values(1);
      world.recv(std::span(never), /*src=*/world.rank() == 2 ? 3 : 2, /*tag=*/7);
      return;
    }
    std::vector<float> x = values(world.rank() == 0 ? 1 : 8);
    world.all_reduce(std::span(x));
  });
  EXPECT_TRUE(contains(report.details, "\nno call has a plurality: rank 0 vs rank 1\n"
                                       "missing participants: ranks 2, 3 never called world "
                                       "collective #0"));
  EXPECT_EQ(report.culprit.ranks, (std::vector<int>{0, 1}));
}

/// A member's call of all_reduce with `count` elements, as the table reads it.
std::optional<detail::MemberCall> all_reduce_of(std::uint64_t count) {
  CollectiveFingerprint f;
  f.signature.op = OpKind::all_reduce;
  f.signature.has_reduce_op = true;
  f.signature.dtype = DataType::f32;
  f.signature.count = count;
  f.algorithm = "direct";
  return detail::MemberCall{f, 0, {}};
}

//! The vote itself: two odd members with calls of their own are "1 + 1 ranks vs 2", blamed
//! by their global ranks (a subgroup's), each call named; the others' rows are not marked.
TEST(JudgeMismatchTest, SeveralOddCallsAgainstThePlurality) {
  const Group group(1, "dp", std::vector<int>{4, 6, 8, 10});
  const std::vector<std::optional<detail::MemberCall>> calls = {
      all_reduce_of(8), all_reduce_of(2), all_reduce_of(8), all_reduce_of(3)};
  const detail::MismatchVerdict v = detail::judge_mismatch(group, 5, calls);
  EXPECT_EQ(v.blamed, (std::vector<int>{6, 10}));
  EXPECT_TRUE(v.missing.empty());
  EXPECT_EQ(v.verdict, "ranks 6, 10 are the odd ones: 1 + 1 ranks vs 2");
  EXPECT_EQ(v.summary,
            "collective mismatch in dp collective #5: the members' calls differ (ranks 6, 10 are "
            "the odd ones: 1 + 1 ranks vs 2)");
  EXPECT_EQ(v.sentence,
            "rank 6 called all_reduce(sum, f32, count=2); rank 10 called "
            "all_reduce(sum, f32, count=3) where ranks 4, 8 called all_reduce(sum, "
            "f32, count=8) (dp collective #5): ranks 6, 10 are the odd ones: 1 + 1 "
            "ranks vs 2");
  EXPECT_EQ(std::count(v.table.begin(), v.table.end(), '<'), 2) << v.table;
}

//! A large group: consecutive ranks read as ranges, so the lines stay lines.
TEST(JudgeMismatchTest, LongRankListsAreRanges) {
  std::vector<int> ranks(40);
  for (int i = 0; i < 40; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const Group group(0, "world", ranks);
  std::vector<std::optional<detail::MemberCall>> calls;
  for (int i = 0; i < 40; ++i) calls.push_back(all_reduce_of(i == 7 ? 1 : 8));
  calls[39].reset();  // never came
  const detail::MismatchVerdict v = detail::judge_mismatch(group, 0, calls);
  EXPECT_EQ(v.verdict, "rank 7 is the odd one: 1 rank vs 38");
  EXPECT_TRUE(contains(v.sentence, "where ranks 0-6, 8-38 called")) << v.sentence;
  EXPECT_TRUE(v.table.ends_with("\nmissing participant: rank 39 never called world collective #0"))
      << v.table;
}

//! Ranks that make no ranges (every fourth) are cut after 32 and counted; the blamed ranks
//! (what --json lists) stay whole.
TEST(JudgeMismatchTest, ListsWithoutRangesAreCutButBlameStaysWhole) {
  std::vector<int> ranks(200);
  for (int i = 0; i < 200; ++i) ranks[static_cast<std::size_t>(i)] = 2 * i;
  const Group group(0, "dp", ranks);
  std::vector<std::optional<detail::MemberCall>> calls;
  for (int i = 0; i < 200; ++i) calls.push_back(all_reduce_of(i % 2 == 0 ? 8 : 1));
  const detail::MismatchVerdict v = detail::judge_mismatch(group, 0, calls);
  EXPECT_TRUE(v.verdict.starts_with("no call has a plurality: ranks 0, 4, 8, ")) << v.verdict;
  EXPECT_TRUE(contains(v.verdict, ", 124 and 68 more vs ranks 2, 6, ")) << v.verdict;
  EXPECT_TRUE(v.verdict.ends_with(", 126 and 68 more")) << v.verdict;
  EXPECT_EQ(v.blamed.size(), 200u);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, MismatchBlameTest,
    ::testing::Combine(::testing::ValuesIn(kBlamePolicies), ::testing::Values(1, 2),
                       ::testing::Values(Algorithm::direct, Algorithm::ring)),
    [](const ::testing::TestParamInfo<BlameParam>& p) {
      std::string name = policy_name(std::get<0>(p.param)) + "_t" +
                         std::to_string(std::get<1>(p.param)) + "_" +
                         std::string(to_string(std::get<2>(p.param)));
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

}  // namespace
}  // namespace ranklab::testing
