// `ranklab stats --format nccl-ras` end to end on the shipped RAS snapshots: each example's
// exit code, report lines and --json values as its ras.txt.expected / ras.json.expected say;
// several snapshots; replay and the other tools refuse a snapshot, naming the command that
// reads it; bad input is one line naming the file and line, exit 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/expected_report.hpp"
#include "tests/traces_tools/run_command.hpp"

namespace ranklab {
namespace {

using tools_testing::at_path;
using tools_testing::CommandResult;
using tools_testing::shell_quoted;

const std::string kExamples = "traces/examples/nccl_ras";

/// `ranklab ARGS` run from the source tree, so reports name the examples as the expected files do.
CommandResult ranklab(const std::string& args) {
  return tools_testing::run_command("cd " + shell_quoted(RANKLAB_SOURCE_DIR) + " && '" +
                                    RANKLAB_BINARY + "' " + args);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class NcclRasExampleTest : public ::testing::TestWithParam<const char*> {};

//! Each snapshot, text and JSON form, gives its expected report in text and in --json: the
//! ranks behind and the count where they stopped, the missing rank, a job in step.
TEST_P(NcclRasExampleTest, StatsGiveTheExpectedReport) {
  const std::string file = kExamples + "/" + GetParam();
  const tools_testing::ExpectedReport expected = tools_testing::read_expected_report(
      std::filesystem::path(RANKLAB_SOURCE_DIR) / (file + ".expected"));
  ASSERT_GE(expected.exit_code, 0) << "no exit line in " << file << ".expected";
  ASSERT_FALSE(expected.lines.empty());
  ASSERT_FALSE(expected.values.empty());
  const CommandResult text = ranklab("stats --format nccl-ras " + file);
  EXPECT_EQ(text.exit_code, expected.exit_code) << text.out << text.err;
  for (const std::string& line : expected.lines) {
    EXPECT_TRUE(has(text.out, line + "\n")) << "expected\n" << line << "\nin\n" << text.out;
  }
  const CommandResult json = ranklab("stats --format nccl-ras " + file + " --json");
  EXPECT_EQ(json.exit_code, expected.exit_code) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["command"], "stats");
  EXPECT_EQ(report["trace"], file);
  for (const auto& [path, value] : expected.values) {
    EXPECT_EQ(at_path(report, path), value) << path << " in\n" << json.out.substr(0, 4000);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, NcclRasExampleTest,
                         ::testing::Values("healthy/ras.txt", "healthy/ras.json",
                                           "rank_behind/ras.txt", "rank_behind/ras.json",
                                           "node_behind/ras.txt", "node_behind/ras.json",
                                           "missing_rank/ras.txt", "missing_rank/ras.json",
                                           "async_error/ras.txt", "async_error/ras.json"));

//! A snapshot and a later one whose counts did not move: stuck. The forms may be mixed.
TEST(NcclRasCliTest, ALaterSnapshotTellsStuck) {
  const CommandResult stuck = ranklab("stats --format nccl-ras " + kExamples + "/rank_behind/ras.txt " +
                                      kExamples + "/rank_behind/ras_later.txt");
  EXPECT_EQ(stuck.exit_code, 0) << stuck.err;
  EXPECT_TRUE(has(stuck.out, "NCCL RAS snapshots " + kExamples + "/rank_behind/ras.txt (+1 more)"))
      << stuck.out;
  EXPECT_TRUE(has(stuck.out, "verdict: stuck, behind: on communicator 27a079b828ff1a75, rank 5 "
                             "stopped at all_reduce count 17"))
      << stuck.out;
  EXPECT_TRUE(has(stuck.out, "behind (nothing moved since the first snapshot)")) << stuck.out;

  const CommandResult json = ranklab("stats --format nccl-ras " + kExamples + "/healthy/ras.json " +
                                     kExamples + "/rank_behind/ras.json --json");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["communicators"][0]["moved"], true);
  EXPECT_EQ(report["communicators"][1]["moved"], false);
  EXPECT_EQ(report["snapshots"].size(), 2u);
}

//! replay, diff and export take no snapshot: it has counts, not operations; the message says
//! what reads it.
TEST(NcclRasCliTest, OtherToolsPointAtStats) {
  const std::string file = kExamples + "/rank_behind/ras.json";
  for (const std::string& command : {"replay --format nccl-ras " + file,
                                     "export --format nccl-ras " + file + " --perfetto /dev/null"}) {
    const CommandResult refused = ranklab(command);
    EXPECT_EQ(refused.exit_code, 1) << command << "\n" << refused.out << refused.err;
    EXPECT_TRUE(has(refused.err, "`ranklab stats --format nccl-ras " + file + "` reports who is behind"))
        << refused.err;
  }
}

//! Bad input is one line naming the file and line, exit 1.
TEST(NcclRasCliTest, BadInputIsOneLine) {
  testing::TempDir dir("ranklab_ras_bad");
  std::ofstream(dir / "ras.json") << "{\n  \"nccl_version\": \"2.30.7\",\n  \"communicators\": [\n"
                                     "    {\"hash\": \"0x1\", \"size\": 0}\n  ]\n}\n";
  const CommandResult bad = ranklab("stats --format nccl-ras " + shell_quoted(dir / "ras.json"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(has(bad.err, "ras.json:4: size 0 out of range [1, 16777216]\n")) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  std::ofstream(dir / "ras.txt") << "no RAS here\n";
  const CommandResult none = ranklab("stats --format nccl-ras " + shell_quoted(dir / "ras.txt"));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(has(none.err, "no 'Communicators...' table")) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
}

}  // namespace
}  // namespace ranklab
