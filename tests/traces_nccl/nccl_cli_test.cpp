// `ranklab replay|stats|diff|export|explore --format nccl-log` end to end on the shipped NCCL
// log examples: each case's exit code, report lines and --json values as its expected.txt
// says; the same input for the other tools; one-line errors for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/expected_report.hpp"
#include "tests/traces_tools/run_command.hpp"

namespace ranklab {
namespace {

using tools_testing::at_path;
using tools_testing::CommandResult;
using tools_testing::shell_quoted;

const char* const kExamples = "traces/examples/nccl";

/// `ranklab ARGS` run from the source tree, so reports name the examples as expected.txt does.
CommandResult ranklab(const std::string& args) {
  return tools_testing::run_command("cd " + shell_quoted(RANKLAB_SOURCE_DIR) + " && '" +
                                    RANKLAB_BINARY + "' " + args);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class NcclExampleTest : public ::testing::TestWithParam<const char*> {};

//! Replayed, each example gives its expected report, in text and in --json: the rank that
//! never joined, the count, datatype, reduction and root mismatches, the send/recv cycle,
//! each at its log line; the healthy job replays cleanly.
TEST_P(NcclExampleTest, ReplaysIntoItsExpectedReport) {
  const std::string dir = std::string(kExamples) + "/" + GetParam();
  const tools_testing::ExpectedReport expected =
      tools_testing::read_expected_report(std::filesystem::path(RANKLAB_SOURCE_DIR) / dir / "expected.txt");
  ASSERT_GE(expected.exit_code, 0) << "no exit line in " << dir << "/expected.txt";
  ASSERT_FALSE(expected.lines.empty());
  ASSERT_FALSE(expected.values.empty());
  const CommandResult text = ranklab("replay --format nccl-log " + dir);
  EXPECT_EQ(text.exit_code, expected.exit_code) << text.out << text.err;
  for (const std::string& line : expected.lines) {
    EXPECT_TRUE(has(text.out, line + "\n")) << "expected\n" << line << "\nin\n" << text.out;
  }
  const CommandResult json = ranklab("replay --format nccl-log " + dir + " --json");
  EXPECT_EQ(json.exit_code, expected.exit_code) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  for (const auto& [path, value] : expected.values) {
    EXPECT_EQ(at_path(report, path), value) << path << " in\n" << json.out.substr(0, 4000);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, NcclExampleTest,
                         ::testing::Values("healthy", "missing_rank", "interleaved",
                                           "count_mismatch", "dtype_mismatch", "op_mismatch",
                                           "root_mismatch", "send_recv_cycle"));

//! The logs may be given as files, one per process, as well as by folder; a rank without a
//! log is the one the others wait for, said on stderr too.
TEST(NcclCliTest, LogFilesOneByOneAndARankWithoutLog) {
  const std::string dir = std::string(kExamples) + "/healthy/";
  const CommandResult three = ranklab("replay --format nccl-log " + dir + "nccl.node-a.4100 " + dir +
                                      "nccl.node-a.4117 " + dir + "nccl.node-b.4134");
  EXPECT_EQ(three.exit_code, 3) << three.out << three.err;
  EXPECT_TRUE(has(three.out, "rank 3 never joined broadcast #0 of world")) << three.out;
  EXPECT_TRUE(has(three.out, "(+2 more)")) << three.out;
  EXPECT_TRUE(has(three.err, "rank 3 of the world has no log: it replays")) << three.err;
}

//! stats, diff, export and explore take the same input as replay.
TEST(NcclCliTest, OtherToolsTakeTheSameInput) {
  const std::string healthy = std::string(kExamples) + "/healthy";
  const CommandResult stats = ranklab("stats --format nccl-log " + healthy);
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_TRUE(has(stats.out, "world 4, 72 operations (72 completed, 0 pending)")) << stats.out;
  EXPECT_TRUE(has(stats.out, "world/split0:color1")) << stats.out;

  // One file of every process's lines is the same job as a file per process.
  const CommandResult same = ranklab("diff --format nccl-log " + std::string(kExamples) +
                                     "/missing_rank " + kExamples + "/interleaved");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  const CommandResult differ = ranklab("diff --format nccl-log " + healthy + " " + kExamples +
                                       "/count_mismatch");
  EXPECT_EQ(differ.exit_code, 2) << differ.out << differ.err;

  testing::TempDir dir("ranklab_nccl_cli");
  const CommandResult exported = ranklab("export --format nccl-log " + healthy + " --perfetto " +
                                         shell_quoted(dir / "t.json"));
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_GT(std::filesystem::file_size(dir / "t.json"), 100u);

  const CommandResult explored = ranklab("explore " + std::string(kExamples) +
                                         "/missing_rank --format nccl-log --runs 4 --jobs 1");
  EXPECT_EQ(explored.exit_code, 3) << explored.out << explored.err;
}

//! Bad input is one line naming the file and line, exit 1.
TEST(NcclCliTest, BadInputIsOneLine) {
  testing::TempDir dir("ranklab_nccl_bad");
  std::ofstream(dir / "nccl.h.1")
      << "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x10 rank 0 nranks 1 cudaDev 0 nvmlDev 0 "
         "busId 1b000 commId 0x1 - Init COMPLETE\n"
         "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 "
         "op 0 root 0 comm 0x10 [nranks=1]\n";
  const CommandResult bad = ranklab("replay --format nccl-log " + shell_quoted(dir.path()));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(has(bad.err, "nccl.h.1:2: the line ends before 'stream'\n")) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  std::ofstream(dir / "nccl.h.1") << "no NCCL here\n";
  const CommandResult none = ranklab("stats --format nccl-log " + shell_quoted(dir.path()));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(has(none.err, "no NCCL 'Init COMPLETE' line (log with NCCL_DEBUG=INFO "
                            "NCCL_DEBUG_SUBSYS=INIT,COLL)"))
      << none.err;
}

}  // namespace
}  // namespace ranklab
