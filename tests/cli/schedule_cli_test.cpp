// `ranklab schedule` end to end: the table, the messages per stage and the verdict, and
// one-line errors for bad combinations.
#include <gtest/gtest.h>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

//! A 1F1B schedule prints its compute order per stage, its steps side by side, its
//! messages per stage and the validator's verdict, and exits 0.
TEST(ScheduleCliTest, PrintsTableAndVerdict) {
  const Result r = ranklab({"schedule", "--schedule", "1f1b", "--pp", "4", "--microbatches", "6"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(has(r, "schedule 1f1b: PP 4, 6 micro-batches, 1 chunk per stage"));
  EXPECT_TRUE(has(r, "  stage 0: F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5\n"));
  EXPECT_TRUE(has(r, "step  stage 0"));
  EXPECT_TRUE(has(r, "   0  F m0"));
  EXPECT_TRUE(has(r, "send act m4 -> 1, recv grad m1 <- 1"));
  EXPECT_TRUE(has(r,
                  "messages per stage: stage 0: 12 (6 sent, 6 received); stage 1: 24 (12 "
                  "sent, 12 received)"));
  EXPECT_TRUE(has(r, "validation: ok"));
  EXPECT_TRUE(has(r, "36 messages, no deadlock"));
}

//! Interleaved with two chunks names the chunk of every pass and transfer.
TEST(ScheduleCliTest, InterleavedNamesChunks) {
  const Result r = ranklab({"schedule", "--schedule", "interleaved", "--pp", "2", "--microbatches",
                            "4", "--virtual-stages", "2"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(has(r, "2 chunks per stage"));
  EXPECT_TRUE(has(r, "  stage 1: F0.0 F1.0 F0.1 B0.1"));
  EXPECT_TRUE(has(r, "send act m1 c0 -> 1, recv act m0 c1 <- 1"));
}

struct BadSchedule {
  std::string label;
  std::vector<std::string> args;
  std::string message;
  friend void PrintTo(const BadSchedule& b, std::ostream* os) { *os << b.label; }
};

class ScheduleCliBadInputTest : public ::testing::TestWithParam<BadSchedule> {};

//! Impossible combinations exit 1 with one line naming the flag.
TEST_P(ScheduleCliBadInputTest, ExitsOneWithOneLine) {
  const BadSchedule& b = GetParam();
  expect_usage_error(ranklab(b.args), b.message);
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, ScheduleCliBadInputTest,
    ::testing::Values(
        BadSchedule{"unknown", {"schedule", "--schedule", "zigzag"}, "unknown schedule 'zigzag'"},
        BadSchedule{"chunks_without_interleaved",
                    {"schedule", "--schedule", "gpipe", "--virtual-stages", "2"},
                    "--virtual-stages 2 needs --schedule interleaved"},
        BadSchedule{"seed_microbatches",
                    {"schedule", "--microbatches", "2"},
                    "--schedule seed runs the whole batch at once"},
        BadSchedule{"zero_stages", {"schedule", "--pp", "0"}, "PP must be positive, got 0"},
        BadSchedule{"interleaved_groups",
                    {"schedule", "--schedule", "interleaved", "--pp", "4", "--microbatches", "6"},
                    "must be a multiple of PP"}),
    [](const auto& p) { return p.param.label; });

}  // namespace
}  // namespace ranklab::testing
