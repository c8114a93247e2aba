// Rank lists as every report writes them (traces/rank_list.hpp): runs of three or more as
// ranges, the rest one by one, cut after a number of entries so that a line stays a line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/rank_list.hpp"

namespace ranklab::testing {
namespace {

std::vector<int> iota(int first, int last) {
  std::vector<int> out;
  for (int r = first; r <= last; ++r) out.push_back(r);
  return out;
}

struct ListCase {
  std::vector<int> ranks;
  std::string text;  // join_ranks with the default style
};

class JoinRanksTest : public ::testing::TestWithParam<ListCase> {};

TEST_P(JoinRanksTest, WritesRunsOfThreeOrMoreAsRanges) {
  EXPECT_EQ(detail::join_ranks(GetParam().ranks), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(
    Lists, JoinRanksTest,
    ::testing::Values(ListCase{{}, ""}, ListCase{{3}, "3"}, ListCase{{0, 1}, "0, 1"},
                      ListCase{{0, 1, 2}, "0-2"}, ListCase{iota(0, 510), "0-510"},
                      ListCase{{0, 1, 2, 3, 5, 7, 8, 9}, "0-3, 5, 7-9"},
                      ListCase{{0, 1, 3, 4}, "0, 1, 3, 4"},
                      // In the caller's order: only ascending runs become ranges.
                      ListCase{{3, 2, 1}, "3, 2, 1"}, ListCase{{5, 0, 1, 2}, "5, 0-2"}));

//! The last entry gets its own separator: "0-3, 5 and 7-9".
TEST(JoinRanksTest, LastSeparatorGoesBeforeTheLastEntry) {
  EXPECT_EQ(detail::join_ranks({0, 1, 2, 3, 5, 7, 8, 9}, {.last = " and "}), "0-3, 5 and 7-9");
  EXPECT_EQ(detail::join_ranks({0, 1}, {.last = " and "}), "0 and 1");
}

//! Past 32 entries the rest are counted in ranks: every other rank of 512 is one line.
TEST(JoinRanksTest, CutAfterTheMostEntriesCountsTheRanksLeft) {
  std::vector<int> even;
  for (int r = 0; r < 512; r += 2) even.push_back(r);
  const std::string text = detail::join_ranks(even);
  EXPECT_TRUE(text.starts_with("0, 2, 4, ")) << text;
  EXPECT_TRUE(text.ends_with(", 62 and 224 more")) << text;
  // A range counts as one entry and all its ranks.
  std::vector<int> mixed = iota(0, 99);
  mixed.push_back(200);
  mixed.push_back(300);
  EXPECT_EQ(detail::join_ranks(mixed, {.max_listed = 2}), "0-99, 200 and 1 more");
}

//! The noun agrees with the list: "rank 3", "ranks 0-510".
TEST(RanksTextTest, NounAgreesWithTheList) {
  EXPECT_EQ(detail::ranks_text({3}), "rank 3");
  EXPECT_EQ(detail::ranks_text({0, 1}), "ranks 0, 1");
  EXPECT_EQ(detail::ranks_text(iota(0, 510)), "ranks 0-510");
}

//! A cycle keeps every step, never a range: "0 -> 1 -> 2 -> 0".
TEST(FormatCycleTest, ListsEveryStep) {
  EXPECT_EQ(detail::format_cycle({0, 1, 2, 0}), "0 -> 1 -> 2 -> 0");
  EXPECT_EQ(detail::format_cycle({0, 0}), "0 -> 0");
}

}  // namespace
}  // namespace ranklab::testing
