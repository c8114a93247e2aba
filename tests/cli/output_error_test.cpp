// Every file ranklab writes for its user goes through one writer (traces/output_file.hpp), so
// a write it cannot make reads the same whatever the file: one line "PATH: cannot write WHAT
// (reason)" and exit 1. Each writer here is sent under a regular file (no folder can be made
// there) or onto a folder.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ranklab::testing
