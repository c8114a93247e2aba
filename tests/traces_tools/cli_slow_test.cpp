// Stuck or slow, end to end through the `ranklab` command: `--slow R=xF` on run and replay
// (a rank's compute slowed in the cost model), over example traces and factors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/any_source_race.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;
using tools_testing::without_timing;

CommandResult ranklab(const std::string& args) { return tools_testing::run_ranklab(args); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kCost = "--cost alpha=1e-6,beta=1e9,layer=1e-6";

std::string seed_step() {
  return shell_quoted(tools_testing::examples_dir() / "seed_step_w8.jsonl");
}

/// The virtual_time object of a --json report.
nlohmann::json virtual_time(const CommandResult& r) {
  return nlohmann::json::parse(r.out).at("virtual_time");
}

class CliSlowFactorTest : public ::testing::TestWithParam<int> {};

//! The seed step (layer passes recorded) replayed with rank 3 F times slower: rank 3's
//! compute is F times the others', the step grows with F, and `run` of the same job with
//! the same flags times its own trace the same.
TEST_P(CliSlowFactorTest, ReplayAndRunAgree) {
  const int factor = GetParam();
  const std::string slow = " --slow 3=x" + std::to_string(factor);
  const CommandResult replay = ranklab("replay " + seed_step() + " --json " + kCost + slow);
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  const nlohmann::json t = virtual_time(replay);
  const double compute0 = t["ranks"][0]["compute_s"], compute3 = t["ranks"][3]["compute_s"];
  EXPECT_NEAR(compute3, factor * compute0, 1e-12);
  const CommandResult base = ranklab("replay " + seed_step() + " --json " + kCost);
  const double base_step = virtual_time(base)["step_s"];
  if (factor > 1) {
    EXPECT_GT(t["step_s"].get<double>(), base_step);
  }
  // x1 is the others' pace: nothing to name.
  EXPECT_EQ(has(t["cost_model"].get<std::string>(), "rank 3 compute x" + std::to_string(factor)),
            factor != 1)
      << t["cost_model"];
  const CommandResult run = ranklab("run --no-trace --json " + kCost + slow);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_DOUBLE_EQ(virtual_time(run)["step_s"].get<double>(), t["step_s"].get<double>());
}

INSTANTIATE_TEST_SUITE_P(Factors, CliSlowFactorTest, ::testing::Values(1, 2, 3, 8));

//! A pipeline of two stages (`run --pp 2`, GPipe over 4 micro-batches): the slowed last
//! stage does three times the compute, and the text report says so in the cost model.
TEST(CliSlowTest, PipelineRunShowsTheSlowStage) {
  const CommandResult run =
      ranklab("run --pp 2 --tp 1 --dp 1 --schedule gpipe --microbatches 4 --no-trace " + kCost +
              " --slow 1=x3 --json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json t = virtual_time(run);
  EXPECT_NEAR(t["ranks"][1]["compute_s"].get<double>(),
              3 * t["ranks"][0]["compute_s"].get<double>(), 1e-12);
}

//! A scenario records no compute: --slow is said to change nothing, not silently ignored.
TEST(CliSlowTest, NoComputeIsANote) {
  const CommandResult run =
      ranklab("run --scenario allreduce --cost alpha=1e-6,beta=1e9 --slow 3=x3");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(has(run.out,
                  "note: the trace records no compute, so slowing a rank's compute "
                  "(--slow) changes nothing"))
      << run.out;
}

//! Bad --slow: one line naming the flag, exit 1, before anything runs.
TEST(CliSlowTest, BadInputExits1WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"replay " + seed_step() + " --slow 3=x3", "--slow needs a cost model"},
      {"replay " + seed_step() + " " + kCost + " --slow 8=x3",
       "--slow 8=x3: rank 8 is not in a world of 8 ranks"},
      {"replay " + seed_step() + " " + kCost + " --slow 3=x0", "the factor is not a number > 0"},
      {"replay " + seed_step() + " " + kCost + " --slow 3", "--slow '3': no '='"},
      {"run " + kCost + " --slow -1=x2", "the rank is not a whole number >= 0"},
      {"run --scenario ring " + kCost + " --slow 4=x2", "rank 4 is not in a world of 4 ranks"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = ranklab(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

std::filesystem::path fr_example(const std::string& name) {
  return tools_testing::examples_dir() / "fr" / name;
}

//! A timed pipeline run (two stages, GPipe, stage 1 slowed): stats reads the trace's own
//! times and replay its cost model alike; the idle time of stages is a pipeline bubble, and
//! the slow stage is the slowest rank.
TEST(CliWaitsTest, PipelineRunStatsAndReplay) {
  testing::TempDir dir("ranklab_cli_waits");
  const std::string trace = shell_quoted(dir / "pp.jsonl");
  const std::string flags = kCost + " --slow 1=x3";
  const CommandResult run = ranklab("run --pp 2 --tp 1 --dp 1 --schedule gpipe --microbatches 4 " +
                                    flags + " --trace " + trace);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const CommandResult stats = ranklab("stats " + trace);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_TRUE(has(stats.out, "timing (the trace's own times): step ")) << stats.out;
  EXPECT_TRUE(has(stats.out, "idle by cause: pipeline bubble")) << stats.out;
  EXPECT_TRUE(has(stats.out, "slowest rank: 1 ")) << stats.out;
  EXPECT_FALSE(has(stats.out, "straggler")) << stats.out;
  const CommandResult replay = ranklab("replay " + trace + " " + flags);
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  // The run's report and the replay's give the same analysis.
  const auto analysis = [](const std::string& out) {
    return out.substr(out.find("idle by cause:"));
  };
  const std::string from_run = run.out.substr(run.out.find("idle by cause:"));
  EXPECT_EQ(from_run.substr(0, from_run.find("result:")), analysis(replay.out)) << run.out;
  const nlohmann::json json = nlohmann::json::parse(ranklab("stats --json " + trace).out);
  EXPECT_EQ(json["timing"]["slowest_rank"], 1) << json["timing"].dump(2);
  EXPECT_GT(json["timing"]["pipeline_bubble"].get<double>(), 0.0);
}

//! The seed step (TP, PP and DP) with rank 3 slowed: its tensor-parallel partner waits
//! for it as a straggler, not a pipeline bubble, and the report names rank 3.
TEST(CliWaitsTest, SeedStepNamesTheStraggler) {
  const CommandResult replay = ranklab("replay " + seed_step() + " " + kCost + " --slow 3=x3");
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "waiting for straggler rank 3")) << replay.out;
  EXPECT_TRUE(has(replay.out, "slowest rank: 3 ")) << replay.out;
  EXPECT_TRUE(has(replay.out, "critical path (what the step's end waited on, in time order): "))
      << replay.out;
  const nlohmann::json t =
      virtual_time(ranklab("replay --json " + seed_step() + " " + kCost + " --slow 3=x3"));
  EXPECT_EQ(t["slowest_rank"], 3);
  EXPECT_FALSE(t["waits"].empty());
  EXPECT_FALSE(t["critical_path"].empty());
}

//! Flight Recorder dumps with timestamps (late_rank): stats and replay, without a cost
//! model, say that ranks 0-2 waited 4.2 s for rank 3, from the hosts' clocks.
TEST(CliWaitsTest, FlightRecorderLateRank) {
  const std::string dir = shell_quoted(fr_example("late_rank"));
  for (const std::string command : {"stats", "replay"}) {
    const CommandResult r = ranklab(command + " --format pytorch-fr " + dir);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(has(r.out, "timing (the dumps' host clocks, which may disagree")) << r.out;
    EXPECT_TRUE(has(r.out,
                    "rank 0 waited 4.203 s for rank 3: 4 waits, the longest 4.201 s in "
                    "all_reduce #2 of world (op #2)"))
        << r.out;
    EXPECT_TRUE(has(r.out, "slowest rank: 3 (the others waited 12.61 s for it in all)")) << r.out;
    const nlohmann::json json =
        nlohmann::json::parse(ranklab(command + " --json --format pytorch-fr " + dir).out);
    EXPECT_EQ(json["timing"]["slowest_rank"], 3);
  }
}

//! An untimed trace has no timing section: stats of the seed step prints what it printed.
TEST(CliWaitsTest, UntimedTraceHasNoTiming) {
  const CommandResult stats = ranklab("stats " + seed_step());
  EXPECT_FALSE(has(stats.out, "timing")) << stats.out;
  EXPECT_FALSE(
      nlohmann::json::parse(ranklab("stats --json " + seed_step()).out).contains("timing"));
}

class CliWaitsThreadsTest : public ::testing::TestWithParam<std::string> {};

//! The same input gives the same report, byte for byte, under 1 and 2 threads.
TEST_P(CliWaitsThreadsTest, SameReportAnyThreads) {
  const std::string args = "replay " + GetParam();
  const auto analysis = [](const CommandResult& r) {
    EXPECT_NE(r.out.find("result:"), std::string::npos) << r.out << r.err;
    return without_timing(r.out.substr(r.out.find("result:")));
  };
  const std::string one = analysis(ranklab(args + " --threads 1"));
  EXPECT_EQ(one, analysis(ranklab(args + " --threads 2")));
  EXPECT_EQ(one, analysis(ranklab(args + " --threads 1")));
}

INSTANTIATE_TEST_SUITE_P(Traces, CliWaitsThreadsTest,
                         ::testing::Values(seed_step() + " " + kCost + " --slow 3=x3",
                                           seed_step() + " " + kCost + " --slow 0=x2 --slow 5=x4",
                                           "--format pytorch-fr " +
                                               shell_quoted(fr_example("late_rank"))));

/// The any-source race (tests/traces_tools/any_source_race.hpp), written as a trace.
std::string write_race(const testing::TempDir& dir) {
  const std::filesystem::path path = dir / "race.jsonl";
  write_trace_file(path, testing_race::any_source_race());
  return shell_quoted(path);
}

struct WhatIfCase {
  std::string slow;
  std::string send_mode;
  int exit_code;
  std::string outcome;
};

class CliWhatIfSlowTest : public ::testing::TestWithParam<WhatIfCase> {};

//! `--what-if slow:1=xF` on the race: rank 1 a little slower still completes (a straggler);
//! three times slower, its message arrives after rank 2's and the job hangs (exit 3),
//! under rendezvous and eager sends; the report says which receive waits forever.
TEST_P(CliWhatIfSlowTest, StragglerOrLatentBug) {
  const WhatIfCase c = GetParam();
  testing::TempDir dir("ranklab_what_if");
  const std::string args = "replay " + write_race(dir) + " --cost alpha=0,beta=1e12 --what-if " +
                           c.slow + " --send-mode " + c.send_mode;
  const CommandResult r = ranklab(args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "result: reproduced: ")) << r.out;  // the recording itself replays
  EXPECT_TRUE(has(r.out, "\noutcome: " + c.outcome)) << r.out;
  const nlohmann::json json = nlohmann::json::parse(ranklab(args + " --json").out);
  EXPECT_EQ(json["what_if"]["completes"], c.exit_code == 0) << json["what_if"].dump(2);
  EXPECT_EQ(json["exit_code"], 0);  // the replay's; the what-if's is the process's
  // Deterministic: byte for byte the same under another thread count.
  const std::string two = ranklab(args + " --threads 2").out;
  EXPECT_EQ(without_timing(r.out.substr(r.out.find("result:"))),
            without_timing(two.substr(two.find("result:"))));
}

std::string what_if_name(const ::testing::TestParamInfo<WhatIfCase>& info) {
  std::string name = info.param.slow + "_" + info.param.send_mode;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliWhatIfSlowTest,
    ::testing::Values(
        WhatIfCase{"slow:1=x1.5", "rendezvous", 0,
                   "still completes: rank 1 is a straggler (1 receives from any source matched in "
                   "virtual arrival order, 0 of them from another sender than recorded)"},
        WhatIfCase{"slow:1=x3", "rendezvous", 3,
                   "now hangs: a latent bug that rank 1's timing exposes (1 receives from any "
                   "source matched in virtual arrival order, 1 of them from another sender than "
                   "recorded): rank 0 waits forever in recv from rank 2 in world (op #1); rank 1 "
                   "waits forever in send to rank 0 in world (op #0)"},
        WhatIfCase{"slow:1=x3", "eager", 3,
                   "now hangs: a latent bug that rank 1's timing exposes (1 receives from any "
                   "source matched in virtual arrival order, 1 of them from another sender than "
                   "recorded): rank 0 waits forever in recv from rank 2 in world (op #1)"},
        WhatIfCase{"slow:2=x3", "rendezvous", 0, "still completes: rank 2 is a straggler"}),
    what_if_name);

//! The seed step with rank 3 three times slower: the predicted step against the recorded
//! one, and it still completes (no receive from any source).
TEST(CliWhatIfTest, SeedStepStraggler) {
  const CommandResult r = ranklab("replay " + seed_step() + " " + kCost + " --what-if slow:3=x3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "what if rank 3 computed x3 (slow:3=x3):\npredicted step: ")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "outcome: still completes: rank 3 is a straggler (no receive from any "
                  "source: timing cannot change which messages match)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "slowest rank: 3 ")) << r.out;
}

//! `--what-if skip:R@OP` replays without the operation: the late_rank job with rank 3
//! missing all_reduce #2 is a collective mismatch blamed on rank 3 (exit 4); the seed step
//! with rank 0 missing its first receive deadlocks (exit 3) with rank 0's partner named.
TEST(CliWhatIfTest, SkipBlamesTheRank) {
  const CommandResult fr = ranklab("replay --format pytorch-fr " +
                                   shell_quoted(fr_example("late_rank")) + " --what-if skip:3@2");
  EXPECT_EQ(fr.exit_code, 4) << fr.out << fr.err;
  EXPECT_TRUE(has(fr.out, "what if rank 3 skips all_reduce #2 of world (op #2) (skip:3@2):\n"))
      << fr.out;
  EXPECT_TRUE(has(fr.out, "culprit (collective-mismatch): rank 3 called")) << fr.out;
  EXPECT_FALSE(has(fr.out, "timing (")) << fr.out;  // the recording's times are another run's
  const CommandResult seed = ranklab("replay " + seed_step() + " --what-if skip:2@0");
  EXPECT_EQ(seed.exit_code, 3) << seed.out << seed.err;
  EXPECT_TRUE(has(seed.out, "what if rank 2 skips recv from rank 0 in pp[0,2] (op #0)"))
      << seed.out;
}

//! Bad --what-if: one line, exit 1.
TEST(CliWhatIfTest, BadInputExits1WithOneLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--what-if slow:3=x3", "--what-if 'slow:3=x3' needs a cost model"},
      {kCost + " --what-if slow:9=x3", "rank 9 is not in the trace's world of 8 ranks"},
      {kCost + " --what-if slow:3=x-1", "the factor is not a number > 0"},
      {"--what-if skip:3@999", "rank 3 has no op #999"},
      {"--what-if skip:3", "expected skip:RANK@OP"},
      {"--what-if fast:3=x2", "expected slow:RANK=xFACTOR or skip:RANK@OP"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = ranklab("replay " + seed_step() + " " + args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ranklab
