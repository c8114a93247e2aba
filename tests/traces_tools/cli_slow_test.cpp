// Stuck or slow, end to end through the `ranklab` command: `--slow R=xF` on run and replay
// (a rank's compute slowed in the cost model), over example traces and factors.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

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

std::string seed_step() { return shell_quoted(tools_testing::examples_dir() / "seed_step_w8.jsonl"); }

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
  const CommandResult run = ranklab(
      "run --pp 2 --tp 1 --dp 1 --schedule gpipe --microbatches 4 --no-trace " + kCost +
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
  EXPECT_TRUE(has(run.out, "note: the trace records no compute, so slowing a rank's compute "
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

}  // namespace
}  // namespace ranklab
