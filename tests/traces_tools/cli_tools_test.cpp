// `ranklab diff | stats | export` end to end: fresh recordings from `ranklab run`, exit
// codes (0 ok / identical, 1 bad usage or input, 2 different), and error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/chrome_trace_check.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;

CommandResult ranklab(const std::string& args) { return tools_testing::run_ranklab(args); }

std::string example(const std::string& name) {
  return shell_quoted(tools_testing::examples_dir() / name);
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class CliToolsTest : public ::testing::Test {
 protected:
  /// Records `ranklab run ARGS --trace DIR/NAME`; returns the trace's path.
  std::string record(const std::string& name, const std::string& args) {
    const std::string path = shell_quoted(dir_ / name);
    const CommandResult run = ranklab("run " + args + " --trace " + path);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return path;
  }
  testing::TempDir dir_{"ranklab_cli_tools"};
};

//! The seed's training step recorded under three policies and two thread counts: the
//! traces differ as files but diff finds no divergence and exits 0.
TEST_F(CliToolsTest, DiffOfOneProgramUnderManyPoliciesIsIdentical) {
  const std::string base = record("a.jsonl", "");
  for (const char* args : {"--policy random:5", "--policy pct:9:3", "--threads 4"}) {
    const std::string other = record("b.jsonl", args);
    const CommandResult diff = ranklab("diff " + base + " " + other);
    EXPECT_EQ(diff.exit_code, 0) << args << "\n" << diff.out << diff.err;
    EXPECT_NE(diff.out.find("\nidentical: 8 ranks"), std::string::npos) << diff.out;
  }
}

//! A ring all_reduce (point-to-point traffic) recorded under two policies: identical.
TEST_F(CliToolsTest, DiffOfRingAllReduceUnderTwoPolicies) {
  const std::string a = record("a.jsonl", "--scenario allreduce --algo ring");
  const std::string b = record("b.jsonl", "--scenario allreduce --algo ring --policy random:11");
  EXPECT_EQ(ranklab("diff " + a + " " + b).exit_code, 0);
}

//! Receives from any source differ between policies: exit 2, the divergence and a summary.
TEST_F(CliToolsTest, DiffOfDifferentTracesExits2) {
  const CommandResult diff = ranklab("diff " + example("wildcard_race.jsonl") + " " +
                                     example("wildcard_race_random3.jsonl"));
  EXPECT_EQ(diff.exit_code, 2) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("rank 0: first divergence at op #0: peer, hash, msg"), std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("\ndifferent: 1 of 4 ranks diverge"), std::string::npos) << diff.out;
  const CommandResult json = ranklab("diff --json " + example("wildcard_race.jsonl") + " " +
                                     example("wildcard_race_random3.jsonl"));
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_FALSE(nlohmann::json::parse(json.out)["identical"].get<bool>());
}

//! stats on a fresh recording of the seed's step: tp, pp, dp and world kinds; --json parses.
TEST_F(CliToolsTest, StatsOfTheSeedStep) {
  const std::string trace = record("seed.jsonl", "");
  const CommandResult text = ranklab("stats " + trace);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  for (const char* kind : {"\n  dp ", "\n  pp ", "\n  tp ", "\n  world "}) {
    EXPECT_NE(text.out.find(kind), std::string::npos) << kind << "\n" << text.out;
  }
  const CommandResult json = ranklab("stats --json " + trace);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto stats = nlohmann::json::parse(json.out);
  EXPECT_EQ(stats["world_size"], 8);
  EXPECT_EQ(stats["group_kinds"].size(), 4u);
}

//! export writes both files; the Perfetto one follows the format's rules.
TEST_F(CliToolsTest, ExportWritesPerfettoAndHtml) {
  const std::string trace = record("seed.jsonl", "");
  const auto json_path = dir_ / "out.json";
  const auto html_path = dir_ / "out.html";
  const CommandResult run = ranklab("export " + trace + " --perfetto " + shell_quoted(json_path) +
                                    " --html " + shell_quoted(html_path));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto doc = nlohmann::json::parse(tools_testing::read_text(json_path));
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  EXPECT_NE(tools_testing::read_text(html_path).find("<!DOCTYPE html>"), std::string::npos);
}

//! --perfetto-max-events: a capped file, and a line on stdout saying so; without a cap none.
TEST_F(CliToolsTest, ExportSaysWhenPerfettoIsCapped) {
  const std::string trace = record("seed.jsonl", "");
  const auto json_path = dir_ / "seed.perfetto.json";
  const CommandResult capped = ranklab("export " + trace + " --perfetto " +
                                       shell_quoted(json_path) + " --perfetto-max-events 10");
  ASSERT_EQ(capped.exit_code, 0) << capped.out << capped.err;
  EXPECT_NE(capped.out.find("perfetto: capped: the earliest 10 of 108 operations are in the file "
                            "(--perfetto-max-events 0 writes all)"),
            std::string::npos)
      << capped.out;
  EXPECT_EQ(nlohmann::json::parse(tools_testing::read_text(json_path))["otherData"]
                ["operations_written"],
            10);
  const CommandResult all = ranklab("export " + trace + " --perfetto " + shell_quoted(json_path));
  EXPECT_EQ(all.out.find("capped:"), std::string::npos) << all.out;
}

//! A 1F1B step timed with --cost: every arrow of its Perfetto export leaves its send and
//! lands on its receive's completion (before the fix 20 of 32 ended before they started),
//! and each rank's compute events are slices on its compute thread.
TEST_F(CliToolsTest, TimedPipelineExportArrowsAndComputeSlices) {
  const std::string trace = record(
      "1f1b.jsonl", "--schedule 1f1b --microbatches 4 --cost alpha=1e-6,beta=1e9,flops=1e12");
  const auto json_path = dir_ / "1f1b.json";
  const CommandResult run =
      ranklab("export " + trace + " --perfetto " + shell_quoted(json_path));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto doc = nlohmann::json::parse(tools_testing::read_text(json_path));
  EXPECT_EQ(tools_testing::chrome_trace_problems(doc), std::vector<std::string>{});
  std::size_t arrows = 0, compute = 0;
  for (const auto& event : doc["traceEvents"]) {
    arrows += event["ph"] == "s" ? 1 : 0;
    compute += event.value("cat", "") == "compute" ? 1 : 0;
  }
  EXPECT_EQ(arrows, 32u);
  // A forward and a backward per layer (2 per stage), micro-batch (4) and rank (8).
  EXPECT_EQ(compute, 2u * 2 * 4 * 8);
}

//! A missing trace: exit 1 and "file: reason" on one line.
TEST_F(CliToolsTest, MissingTraceExits1) {
  const CommandResult run = ranklab("stats " + shell_quoted(dir_ / "nope.jsonl"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("nope.jsonl: cannot open trace file (No such file or directory)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(line_count(run.err), 1u) << run.err;
}

//! A malformed line: exit 1 and "file:line: reason" from every tool.
TEST_F(CliToolsTest, MalformedTraceExits1WithFileAndLine) {
  const auto bad = dir_ / "bad.jsonl";
  std::ifstream in(tools_testing::examples_dir() / "send_send_deadlock.jsonl");
  std::string header;
  std::getline(in, header);
  std::ofstream(bad) << header << "\n{\"rank\":0,\"rank_seq\":0,\"op\":\"send\"\n";
  const std::vector<std::string> commands = {
      "stats " + shell_quoted(bad), "diff " + shell_quoted(bad) + " " + shell_quoted(bad),
      "export " + shell_quoted(bad) + " --html " + shell_quoted(dir_ / "x.html")};
  for (const std::string& args : commands) {
    const CommandResult run = ranklab(args);
    EXPECT_EQ(run.exit_code, 1) << args;
    EXPECT_NE(run.err.find("bad.jsonl:2: invalid JSON"), std::string::npos) << args << run.err;
    EXPECT_EQ(line_count(run.err), 1u) << run.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "x.html"));
}

//! Unknown flags and missing arguments: exit 1 with one line.
TEST_F(CliToolsTest, BadUsageExits1WithOneLine) {
  const std::string trace = example("allreduce_w8.jsonl");
  const std::vector<std::string> commands = {"stats --bogus " + trace, "diff " + trace,
                                             "export " + trace, "stats",
                                             "export " + trace + " --html"};
  for (const std::string& args : commands) {
    const CommandResult run = ranklab(args);
    EXPECT_EQ(run.exit_code, 1) << args << run.out << run.err;
    EXPECT_EQ(line_count(run.err), 1u) << args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

}  // namespace
}  // namespace ranklab
