// The bad inputs of issue 16's sweep, through the `ranklab` command: every trace tool ends
// with exit 1 and one short line naming FILE:LINE (or FILE) and the reason, never a crash,
// a hang or a megabyte on stderr.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;

const std::string kHeader =
    R"({"format":"ranklab-trace","version":"1.1","world_size":2,"groups":[)"
    R"({"name":"world","ranks":[0,1]}],"config":{}})";

/// A send from 0 to 1 of `count` bytes with `tag`, and its receive.
std::string message(std::uint64_t count, int tag) {
  const std::string size = std::to_string(count);
  const std::string fields = R"("group":"world","tag":)" + std::to_string(tag) +
                             R"(,"dtype":"u8","count":)" + size + R"(,"bytes":)" + size +
                             R"(,"msg":"0:0")";
  return R"({"rank":0,"rank_seq":0,"op":"send","peer":1,)" + fields + R"(,"lamport":1})" + "\n" +
         R"({"rank":1,"rank_seq":0,"op":"recv","peer":0,)" + fields + R"(,"lamport":2})" + "\n";
}

class CliBadInputTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return shell_quoted(dir_ / name);
  }
  /// Runs `args`; expects exit 1 and one line on stderr holding `part`, at most `max` bytes.
  void expect_refused(const std::string& args, const std::string& part, std::size_t max = 400) {
    const CommandResult run = tools_testing::run_ranklab(args);
    EXPECT_EQ(run.exit_code, 1) << args << "\n" << run.err.substr(0, 500);
    EXPECT_NE(run.err.find(part), std::string::npos) << args << "\n" << run.err.substr(0, 500);
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err.substr(0, 500);
    EXPECT_LE(run.err.size(), max) << args << "\n" << run.err.substr(0, 500);
  }
  /// The four commands that read a trace, on `trace`.
  std::vector<std::string> every_tool(const std::string& trace) {
    return {"stats " + trace, "replay " + trace, "diff " + trace + " " + trace,
            "export " + trace + " --html " + shell_quoted(dir_ / "x.html")};
  }
  testing::TempDir dir_{"ranklab_cli_bad_input"};
};

//! ~150,000 nested arrays in the header's config (a 300 KB line) crashed every tool with
//! exit 139: now FILE:1 and the depth limit.
TEST_F(CliBadInputTest, DeepNestingIsRefusedByEveryTool) {
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  std::string header = kHeader;
  header.replace(header.find(R"("config":{})"), 11, R"("config":{"x":)" + deep + "}");
  const std::string trace = write("deep.jsonl", header + "\n");
  for (const std::string& args : every_tool(trace)) {
    expect_refused(args, "deep.jsonl:1: nesting deeper than 128 arrays and objects");
  }
}

//! A 5 MB group name is quoted as 80 bytes and its size, by every tool.
TEST_F(CliBadInputTest, LongTokensAreCut) {
  const std::string name(5'000'000, 'g');
  std::string send = message(4, 0);
  send.replace(send.find(R"("world")"), 7, '"' + name + '"');
  const std::string trace = write("long.jsonl", kHeader + "\n" + send);
  for (const std::string& args : every_tool(trace)) {
    expect_refused(args, "long.jsonl:2: unknown group 'ggg");
    expect_refused(args, "'... (5000000 bytes)");
  }
}

//! /dev/zero never ends: refused as a trace, as a TI trace, and listed in a TI index.
TEST_F(CliBadInputTest, DevicesAreRefused) {
  for (const std::string& args : every_tool("/dev/zero")) {
    expect_refused(args, "/dev/zero: not a regular file (a character device)");
  }
  expect_refused("replay --format simgrid-ti /dev/zero", "/dev/zero: not a regular file");
  const std::string index = write("trace.txt", "/dev/zero\n");
  expect_refused("replay --format simgrid-ti " + index,
                 "trace.txt:1: /dev/zero: not a regular file (a character device)");
}

//! What the reader accepts and replay cannot re-issue names FILE:LINE with the rank and op.
TEST_F(CliBadInputTest, ReplayRefusalsNameFileAndLine) {
  expect_refused("replay " + write("tag.jsonl", kHeader + "\n\n" + message(4, -3)),
                 "tag.jsonl:3: rank 0 op #0 (send): cannot replay: a send's tag must be >= 0");
  expect_refused("replay " + write("huge.jsonl", kHeader + "\n" + message(std::uint64_t{1} << 48, 0)),
                 "huge.jsonl:2: rank 0 op #0 (send): cannot replay: its buffers exceed");
  const std::string ti = write("big.txt", "0 send 1 0 281474976710656 3\n1 recv 0 0 1\n");
  expect_refused("replay --format simgrid-ti " + ti,
                 "big.txt:1: count 281474976710656 of SMPI datatype 3 is 562949953421312 x u8");
}

//! --max-memory-mib bounds the replay's buffers; by default half of the machine's memory.
TEST_F(CliBadInputTest, ReplayMemoryIsBounded) {
  const std::string trace = write("two_mib.jsonl", kHeader + "\n" + message(1 << 20, 0));
  expect_refused("replay " + trace + " --max-memory-mib 1",
                 "two_mib.jsonl:2: rank 0 op #0 (send): cannot replay: the replay's buffers would "
                 "take 2097152 bytes (2.0 MiB) in all, over its memory limit of 1048576 bytes "
                 "(1.0 MiB) (--max-memory-mib sets it)");
  const CommandResult fits = tools_testing::run_ranklab("replay " + trace + " --max-memory-mib 2");
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  expect_refused("replay " + trace + " --max-memory-mib 0", "--max-memory-mib");
}

}  // namespace
}  // namespace ranklab
