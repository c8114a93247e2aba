// Every file ranklab writes for its user goes through one writer (traces/output_file.hpp), so
// a write it cannot make reads the same whatever the file: one line "PATH: cannot write WHAT
// (reason)" and exit 1. Each writer here is sent under a regular file (no folder can be made
// there) or onto a folder.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"
#include "tests/support/temp_dir.hpp"

namespace ranklab::testing {
namespace {

struct Unwritable {
  std::string label;
  std::vector<std::string> args;  ///< run in a folder holding the regular file `file`
  std::string message;

  friend void PrintTo(const Unwritable& u, std::ostream* os) { *os << u.label; }
};

class OutputErrorTest : public ::testing::TestWithParam<Unwritable> {};

//! Under a regular file: the output's own name, what it is and the system's reason.
TEST_P(OutputErrorTest, UnderARegularFileReadsTheSame) {
  const Unwritable& u = GetParam();
  TempDir cwd("ranklab_output_error");
  std::ofstream(cwd / "file") << "a regular file\n";
  if (u.args[0] == "export") {
    ASSERT_EQ(ranklab({"run", "--scenario", "ring", "--trace", "t.jsonl"}, cwd.path()).code, 0);
  }
  expect_usage_error(ranklab(u.args, cwd.path()), u.message);
}

INSTANTIATE_TEST_SUITE_P(
    Writers, OutputErrorTest,
    ::testing::Values(
        Unwritable{"trace",
                   {"run", "--scenario", "ring", "--trace", "file/t.jsonl"},
                   "file/t.jsonl: cannot write the trace (Not a directory)"},
        Unwritable{"wait_graph",
                   {"run", "--scenario", "send-send", "--wait-graph", "file/w.dot"},
                   "file/w.dot: cannot write the wait-for graph (Not a directory)"},
        Unwritable{"html",
                   {"export", "t.jsonl", "--html", "file/r.html"},
                   "file/r.html: cannot write HTML report (Not a directory)"},
        Unwritable{"perfetto",
                   {"export", "t.jsonl", "--perfetto", "file/p.json"},
                   "file/p.json: cannot write Perfetto JSON (Not a directory)"},
        Unwritable{"schedule",
                   {"schedule", "--save", "file/s.txt"},
                   "file/s.txt: cannot write the schedule (Not a directory)"},
        // Was "file/golden: cannot create directory: Not a directory".
        Unwritable{"golden_set",
                   {"run", "--no-trace", "--save", "file/golden"},
                   "file/golden: cannot write the golden set (Not a directory)"}),
    [](const auto& p) { return p.param.label; });

//! A golden set's .npy array that cannot be written (a folder stands in its place) names
//! the array and why; was "PATH: cannot open for writing", without a reason.
TEST(OutputErrorTest, GoldenArrayOntoAFolderReadsTheSame) {
  TempDir cwd("ranklab_output_error");
  std::filesystem::create_directories(cwd / "golden" / "layer0.w1.f32.npy");
  expect_usage_error(ranklab({"run", "--no-trace", "--save", "golden"}, cwd.path()),
                     "golden/layer0.w1.f32.npy: cannot write the array (Is a directory)");
}

struct FullDevice {
  std::string label;
  std::vector<std::string> args;  ///< run in a folder where `out` links to /dev/full
  std::string message;

  friend void PrintTo(const FullDevice& f, std::ostream* os) { *os << f.label; }
};

class FullDeviceTest : public ::testing::TestWithParam<FullDevice> {};

//! An output path that is not a file ranklab created is never removed when the write fails:
//! as root, `--trace /dev/full` deleted /dev/full, and a symbolic link given as the output
//! was deleted in place of the file it names (issue 28 §4). Here `out` links to /dev/full,
//! where every write fails (ENOSPC): one line, exit 1, and the link is still there.
TEST_P(FullDeviceTest, WriteErrorKeepsWhatWasThere) {
  const FullDevice& f = GetParam();
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir cwd("ranklab_output_error");
  if (f.args[0] == "export" || f.args[0] == "replay") {
    ASSERT_EQ(ranklab({"run", "--scenario", "send-send", "--trace", "t.jsonl"}, cwd.path()).code,
              3);
  }
  std::filesystem::create_symlink("/dev/full", cwd / "out");
  const Result r = ranklab(f.args, cwd.path());
  if (f.args[0] == "explore") {  // its first line, what it explores, is out already
    EXPECT_EQ(r.code, 1) << show(r);
    EXPECT_EQ(r.err, "ranklab: error: " + f.message + "\n");
  } else {
    expect_usage_error(r, f.message);
  }
  EXPECT_TRUE(std::filesystem::is_symlink(cwd / "out")) << "the link was removed";
  EXPECT_TRUE(std::filesystem::exists("/dev/full"));
}

INSTANTIATE_TEST_SUITE_P(
    Writers, FullDeviceTest,
    ::testing::Values(
        FullDevice{"trace",
                   {"run", "--scenario", "ring", "--trace", "out"},
                   "out: cannot write the trace (No space left on device)"},
        FullDevice{"wait_graph",
                   {"run", "--scenario", "send-send", "--wait-graph", "out"},
                   "out: cannot write the wait-for graph (No space left on device)"},
        FullDevice{"replay_trace",
                   {"replay", "t.jsonl", "--trace", "out"},
                   "out: cannot write the trace (No space left on device)"},
        FullDevice{"html",
                   {"export", "t.jsonl", "--html", "out"},
                   "out: cannot write HTML report (No space left on device)"},
        FullDevice{"perfetto",
                   {"export", "t.jsonl", "--perfetto", "out"},
                   "out: cannot write Perfetto JSON (No space left on device)"},
        FullDevice{"schedule",
                   {"schedule", "--save", "out"},
                   "out: cannot write the schedule (No space left on device)"},
        FullDevice{"explore_trace",
                   {"explore", "--scenario", "send-send", "--trace", "out"},
                   "out: cannot write the trace (No space left on device)"}),
    [](const auto& p) { return p.param.label; });

//! A partly written file that ranklab created is still removed: no truncated trace is left
//! behind. The write fails past `ulimit -f` (SIGXFSZ ignored: the write returns EFBIG).
TEST(OutputErrorTest, PartlyWrittenNewFileIsRemoved) {
  TempDir cwd("ranklab_output_error");
  const std::string command = "cd " + quoted(cwd.path().string()) +
                              " && trap '' XFSZ && ulimit -f 2 && " + quoted(RANKLAB_BINARY) +
                              " run --scenario allreduce --count 4096 --trace t.jsonl "
                              ">/dev/null 2>/dev/null";
  const int status = std::system(("sh -c " + quoted(command)).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_FALSE(std::filesystem::exists(cwd / "t.jsonl")) << "a truncated trace was left";
}

/// Runs `ranklab ARGS > /dev/full` in a folder holding `t.jsonl`, a recorded deadlock (for
/// the commands that read a trace): the exit code and stderr.
Result ranklab_to_full_stdout(const std::vector<std::string>& args) {
  TempDir cwd("ranklab_output_error");
  const std::string example =
      std::string(RANKLAB_SOURCE_DIR) + "/traces/examples/send_send_deadlock.jsonl";
  std::filesystem::copy_file(example, cwd / "t.jsonl");
  std::string command = "cd " + quoted(cwd.path().string()) + " && " + quoted(RANKLAB_BINARY);
  for (const std::string& a : args) command += " " + quoted(a);
  command += " >/dev/full 2>" + quoted((cwd / "stderr.txt").string());
  const int status = std::system(command.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = read_file(cwd / "stderr.txt");
  return r;
}

struct Printer {
  std::string label;
  std::vector<std::string> args;

  friend void PrintTo(const Printer& p, std::ostream* os) { *os << p.label; }
};

class StandardOutputErrorTest : public ::testing::TestWithParam<Printer> {};

//! A report that cannot be written to standard output (a full disk) is one line on stderr
//! and exit 1, whatever the command and whatever its own exit code would have been (replay
//! of a deadlock: 3): `stats --json ... > /dev/full` exited 0 with nothing said.
TEST_P(StandardOutputErrorTest, WriteErrorIsOneLineAndExit1) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Result r = ranklab_to_full_stdout(GetParam().args);
  EXPECT_EQ(r.code, 1) << r.err;
  // The reason is there when the last flush fails; stdio may have dropped its buffer at an
  // earlier failure, and errno with it.
  EXPECT_TRUE(r.err.starts_with("ranklab: error: cannot write the report to standard output"))
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Commands, StandardOutputErrorTest,
    ::testing::Values(Printer{"run_scenario", {"run", "--scenario", "ring"}},
                      Printer{"run_deadlock_json", {"run", "--scenario", "send-send", "--json"}},
                      Printer{"run_main_job", {"run", "--no-trace"}},
                      Printer{"replay", {"replay", "t.jsonl"}},
                      Printer{"replay_json", {"replay", "t.jsonl", "--json"}},
                      Printer{"stats", {"stats", "t.jsonl"}},
                      Printer{"stats_json", {"stats", "--json", "t.jsonl"}},
                      Printer{"diff", {"diff", "t.jsonl", "t.jsonl"}},
                      Printer{"diff_json", {"diff", "--json", "t.jsonl", "t.jsonl"}},
                      Printer{"export", {"export", "t.jsonl", "--perfetto", "p.json"}},
                      Printer{"explore", {"explore", "--scenario", "ring", "--runs", "4"}},
                      Printer{"explore_json", {"explore", "--scenario", "ring", "--json"}},
                      Printer{"schedule", {"schedule"}},
                      Printer{"schedule_json", {"schedule", "--json"}},
                      Printer{"scenarios", {"scenarios"}},
                      Printer{"help", {"--help"}},
                      Printer{"run_help", {"run", "--help"}}),
    [](const auto& p) { return p.param.label; });

}  // namespace
}  // namespace ranklab::testing
