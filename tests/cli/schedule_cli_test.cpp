// `ranklab schedule` and `ranklab run --schedule` end to end: the table, the messages per
// stage and the verdict, the seed trace unchanged, sequence-parallel traffic, and
// one-line errors for bad combinations.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

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
  EXPECT_TRUE(has(r,
                  "most forwards awaiting their backward (activations kept): stage 0: 4, "
                  "stage 1: 3, stage 2: 2, stage 3: 1"));
  EXPECT_TRUE(has(r, "validation: ok"));
  EXPECT_TRUE(has(r, "36 messages, no deadlock"));
}

//! The schedules compared side by side at the same PP and M: predicted bubble, its closed
//! form, and the peak activations a stage holds (GPipe M, 1F1B PP, interleaved between).
TEST(ScheduleCliTest, ComparesSchedulesSideBySide) {
  const Result r = ranklab({"schedule", "--schedule", "1f1b", "--pp", "4", "--microbatches", "8"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(has(r, "compared at PP 4, M 8"));
  EXPECT_TRUE(has(r, "  gpipe                   27.3%      27.3%             27.3%            8\n"))
      << show(r);
  EXPECT_TRUE(has(r, "  1f1b                    27.3%      27.3%             27.3%            4  "
                     "(this one)\n"));
  // Megatron's interleaved order meets the closed form with a backward twice a forward too,
  // and holds more activations than 1F1B: p(1 + (p-1)/(p v)) = 5.5.
  EXPECT_TRUE(has(r, "  interleaved V2          15.8%      15.8%             15.8%          5.5\n"))
      << show(r);
}

//! With fewer micro-batches than stages, interleaving runs one group of M, and the table
//! names the closed form that applies.
TEST(ScheduleCliTest, FewerMicrobatchesThanStagesNameTheirFormula) {
  const Result r = ranklab({"schedule", "--schedule", "interleaved", "--pp", "8", "--microbatches",
                            "4", "--virtual-stages", "2"});
  EXPECT_EQ(r.code, 0) << show(r);
  // ((8-4)2 + 3)/(16 + 3) = 57.9%, against (p-1)/(vm+p-1) = 46.7% that no schedule reaches.
  EXPECT_TRUE(has(r, "  interleaved V2          57.9%      57.9%             57.9%"))
      << show(r);
  EXPECT_TRUE(has(r, "((p-m)v+m-1)/(pv+m-1)")) << show(r);
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

//! A schedule saved with --save, edited so that both neighbours send before they receive,
//! is rejected by --file with the first step that cannot progress and the dry run's
//! deadlock report (exit 3); the unedited file passes.
TEST(ScheduleCliTest, EditedFileIsRejected) {
  TempDir dir("ranklab_schedule_file");
  const Result saved = ranklab(
      {"schedule", "--schedule", "1f1b", "--pp", "2", "--microbatches", "3", "--save", "s.txt"},
      dir.path());
  ASSERT_EQ(saved.code, 0) << show(saved);
  EXPECT_TRUE(has(saved, "saved: s.txt"));
  const Result same = ranklab({"schedule", "--file", "s.txt"}, dir.path());
  EXPECT_EQ(same.code, 0) << show(same);

  std::string text = read_file(dir / "s.txt");
  const auto split = [&](const std::string& line, const std::string& into) {
    const std::size_t at = text.find(line);
    ASSERT_NE(at, std::string::npos) << line << " in\n" << text;
    text.replace(at, line.size(), into);
  };
  split("stage 0: send act m2 -> 1, recv grad m1 <- 1\n",
        "stage 0: send act m2 -> 1\nstage 0: recv grad m1 <- 1\n");
  split("stage 1: send grad m1 -> 0, recv act m2 <- 0\n",
        "stage 1: send grad m1 -> 0\nstage 1: recv act m2 <- 0\n");
  std::ofstream(dir / "broken.txt") << text;
  const Result broken = ranklab({"schedule", "--file", "broken.txt"}, dir.path());
  EXPECT_EQ(broken.code, 3) << show(broken);
  EXPECT_TRUE(has(broken,
                  "validation: REJECTED: schedule 1f1b PP2 M3: stage 0, step 7 (send act "
                  "m2 -> 1): cannot progress: the dry run under rendezvous sends "
                  "deadlocks, while stage 1, step 7 (send grad m1 -> 0) waits too"));
  EXPECT_TRUE(has(broken, "wait-for cycles:\n  0 -> 1 -> 0"));
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
        BadSchedule{
            "file_and_flags", {"schedule", "--file", "s.txt", "--pp", "3"}, "--file excludes --pp"},
        BadSchedule{"missing_file",
                    {"schedule", "--file", "/nonexistent/s.txt"},
                    "/nonexistent/s.txt: cannot read the schedule file"},
        BadSchedule{"interleaved_groups",
                    {"schedule", "--schedule", "interleaved", "--pp", "4", "--microbatches", "6"},
                    "must be a multiple of PP"}),
    [](const auto& p) { return p.param.label; });

//! `ranklab run` (the seed schedule, the default) writes the same trace, byte for byte, as
//! the example (traces/examples/seed_step_w8.jsonl: the operations recorded before schedules
//! existed, with format 1.2's compute events), and GPipe with one micro-batch the same
//! operations (ranklab diff: identical). Both on the baseline kernels, as the example was
//! recorded (traces/examples/regenerate.sh): the payload hashes follow the kernels' ISA.
TEST(RunScheduleCliTest, SeedTraceIsUnchanged) {
  ::setenv("RANKLAB_ISA", "baseline", 1);
  struct Unset {
    ~Unset() { ::unsetenv("RANKLAB_ISA"); }
  } unset;
  TempDir cwd("ranklab_cli_seed");
  const std::filesystem::path example =
      std::filesystem::path(RANKLAB_SOURCE_DIR) / "traces/examples/seed_step_w8.jsonl";
  const Result seed = ranklab({"run"}, cwd.path());
  ASSERT_EQ(seed.code, 0) << show(seed);
  EXPECT_EQ(read_file(cwd / "traces/main.jsonl"), read_file(example));
  EXPECT_TRUE(has(seed,
                  "pipeline: schedule seed, 1 micro-batch, 1 chunk per stage, TP comm "
                  "allreduce"));
  EXPECT_TRUE(
      has(seed, "    0  0-1     F0 B0                  1  2 (1 sent, 1 received)  8 on 4 ranks"));

  const Result gpipe = ranklab(
      {"run", "--schedule", "gpipe", "--microbatches", "1", "--trace", "gpipe.jsonl"}, cwd.path());
  ASSERT_EQ(gpipe.code, 0) << show(gpipe);
  const Result diff = ranklab({"diff", "gpipe.jsonl", example.string()}, cwd.path());
  EXPECT_EQ(diff.code, 0) << show(diff);
}

//! Each schedule runs from `ranklab run`, passes every check under rendezvous sends, and
//! reports its compute order and messages per stage, counted in the schedule and the trace.
TEST(RunScheduleCliTest, SchedulesRunAndReportMessagesPerStage) {
  const Result one = ranklab({"run", "--schedule", "1f1b", "--microbatches", "4"});
  EXPECT_EQ(one.code, 0) << show(one);
  EXPECT_TRUE(has(one, "pipeline: schedule 1f1b, 4 micro-batches, 1 chunk per stage"));
  EXPECT_TRUE(has(one,
                  "    0  0-1     F0 F1 B0 F2 B1 F3 B2 B3          2  8 (4 sent, 4 received)  32 "
                  "on 4 ranks"));
  EXPECT_TRUE(has(one,
                  "expected traffic (schedule 1f1b PP2 M4, TP comm allreduce, rank by "
                  "rank): matches"));
  EXPECT_TRUE(has(one, "result: ok: 8 ranks finished; every check passed"));

  const Result inter = ranklab({"run", "--schedule", "interleaved", "--microbatches", "4",
                                "--virtual-stages", "2", "--json"});
  EXPECT_EQ(inter.code, 0) << show(inter);
  const nlohmann::json j = nlohmann::json::parse(inter.out);
  EXPECT_EQ(j["pipeline"]["schedule"], "interleaved");
  EXPECT_EQ(j["pipeline"]["stages"][0]["layers"], nlohmann::json::array({0, 2}));
  EXPECT_EQ(j["pipeline"]["stages"][1]["traced_messages"], 96);
  EXPECT_EQ(j["ranks"][2]["layers"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(j["checks_ok"], true);
}

//! `--tp-comm sp` passes, and its traffic table shows all_gather and reduce_scatter on the
//! TP groups instead of all_reduce, with PP messages half the size.
TEST(RunScheduleCliTest, SequenceParallelTraffic) {
  const Result r = ranklab({"run", "--tp-comm", "sp", "--schedule", "1f1b", "--microbatches", "2"});
  EXPECT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(has(r, "kind  groups          all_reduce          all_gather      reduce_scatter"));
  EXPECT_TRUE(has(r, "TP         4               0 / 0         56 / 229376         56 / 229376"));
  EXPECT_TRUE(has(r,
                  "PP         4               0 / 0               0 / 0               0 / 0"
                  "        16 / 65536        16 / 65536"));
  EXPECT_TRUE(has(r, "TP comm sp, rank by rank): matches"));
}

// The same for `ranklab run`, where the model adds its own rules (B, L, S).
INSTANTIATE_TEST_SUITE_P(
    RunInputs, ScheduleCliBadInputTest,
    ::testing::Values(
        BadSchedule{"microbatches_not_dividing_batch",
                    {"run", "--schedule", "gpipe", "--microbatches", "3"},
                    "--microbatches 3 does not divide the batch B=8"},
        BadSchedule{"layers_not_divisible_by_chunks",
                    {"run", "--schedule", "interleaved", "--virtual-stages", "4"},
                    "the number of layers L=4 is not divisible by PP*V=2*4"},
        BadSchedule{"chunks_without_interleaved",
                    {"run", "--virtual-stages", "2", "--schedule", "1f1b"},
                    "--virtual-stages 2 needs --schedule interleaved"},
        BadSchedule{"seed_with_microbatches",
                    {"run", "--microbatches", "2"},
                    "--schedule seed runs the whole batch at once"},
        BadSchedule{"sp_sequence_not_divisible",
                    {"run", "--tp-comm", "sp", "--tp", "2", "--seq", "5"},
                    "S=5 is not divisible by TP=2"},
        BadSchedule{"unknown_tp_comm", {"run", "--tp-comm", "ring"}, "unknown --tp-comm 'ring'"},
        BadSchedule{
            "unknown_schedule", {"run", "--schedule", "pipedream"}, "unknown schedule 'pipedream'"},
        BadSchedule{"schedule_with_scenario",
                    {"run", "--scenario", "ring", "--schedule", "1f1b"},
                    "--schedule belongs to the main job, not to --scenario"},
        // A one-dimension mode ignored the other degrees: --mode tp --pp 2 ran TP2 on 2 ranks.
        BadSchedule{"mode_tp_with_pp",
                    {"run", "--mode", "tp", "--pp", "2"},
                    "--mode tp runs with --pp 1, got --pp 2 (use --mode hybrid)"},
        BadSchedule{"mode_dp_with_tp",
                    {"run", "--mode", "dp", "--tp", "4"},
                    "--mode dp runs with --tp 1, got --tp 4"},
        BadSchedule{"mode_tp_with_layers",
                    {"run", "--mode", "tp", "--layers", "3"},
                    "--mode tp runs with --layers 1, got --layers 3"}),
    [](const auto& p) { return p.param.label; });

}  // namespace
}  // namespace ranklab::testing
