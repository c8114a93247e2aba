// What the reader bounds (issue 16): nesting depth, the size of what an error quotes, the
// kind of file it reads; and where each event was read, kept for later errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <thread>

#include "tests/support/temp_dir.hpp"
#include "tests/traces/reader_errors.hpp"
#include "tests/traces/sample_trace.hpp"
#include "traces/error.hpp"
#include "traces/event_text.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using reader_errors::error_of;
using reader_errors::file_error_of;
using reader_errors::with;

const std::string kHeader = R"({"format":"ranklab-trace","version":"1.1","world_size":2,"groups":[)"
                            R"({"name":"world","ranks":[0,1]}],"config":{}})";
const std::string kSend =
    R"({"rank":0,"rank_seq":0,"op":"send","group":"world","peer":1,"tag":7,"dtype":"f32",)"
    R"("count":4,"bytes":16,"lamport":1})";

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

//! 150,000 nested arrays in the header's free-form config (a 300 KB line) overflowed the
//! stack when the config was copied: now `FILE:1: nesting deeper than 128`.
TEST(ReaderLimitsTest, DeepNestingInTheHeaderIsRefused) {
  const std::string header =
      with(kHeader, R"("config":{})", R"("config":{"x":)" + nested(150'000) + "}");
  EXPECT_EQ(error_of(header + "\n"),
            "t.jsonl:1: nesting deeper than 128 arrays and objects (column 240)");
}

//! The same limit holds on event lines, counts objects as well as arrays, and ignores
//! brackets inside strings; 128 levels are fine.
TEST(ReaderLimitsTest, NestingLimitCountsStructureOnly) {
  const std::string deep_event = with(kSend, R"("lamport":1)", R"("lamport":1,"x":)" + nested(200));
  EXPECT_EQ(error_of(kHeader + "\n" + deep_event + "\n").substr(0, 48),
            "t.jsonl:2: nesting deeper than 128 arrays and ob");
  std::string objects;
  for (int i = 0; i < 129; ++i) objects += R"({"a":)";
  objects += "1" + std::string(129, '}');
  EXPECT_NE(error_of(with(kHeader, R"("config":{})", R"("config":)" + objects) + "\n")
                .find("t.jsonl:1: nesting deeper than 128"),
            std::string::npos);
  // config itself is level 2: 126 more levels make 128.
  EXPECT_EQ(
      error_of(with(kHeader, R"("config":{})", R"("config":{"x":)" + nested(126) + "}") + "\n"),
      "");
  const std::string brackets = std::string(1000, '[') + "\\\"" + std::string(1000, '{');
  EXPECT_EQ(
      error_of(with(kHeader, R"("config":{})", R"("config":{"s":")" + brackets + "\"}") + "\n"),
      "");
}

//! Issue 28 §4: a long line that is not an object (a 200 MB array took 15-30 s and 3.6 GB)
//! is refused on its first byte, before any parser reads it: so the rest of it, valid or
//! not, makes no difference to the error, for the header as for an event.
TEST(ReaderLimitsTest, LineThatIsNoObjectIsRefusedOnItsFirstByte) {
  std::string array = "[";
  for (int i = 0; i < 1'000'000; ++i) array += "1,";
  for (const std::string& tail : {std::string("1]"), std::string("1,}x")}) {
    const std::string cut = "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1... (" +
                            std::to_string(array.size() + tail.size()) + " bytes)";
    EXPECT_EQ(error_of(kHeader + "\n" + array + tail + "\n"),
              "t.jsonl:2: event must be a JSON object, got " + cut);
    EXPECT_EQ(error_of(array + tail + "\n"),
              "t.jsonl:1: not a ranklab trace header (expected a JSON object, got " + cut + ")");
  }
  EXPECT_EQ(error_of(kHeader + "\n  42 \n"), "t.jsonl:2: event must be a JSON object, got 42");
}

//! A 1 MB group name is quoted as 80 bytes and its size: the error stays one short line.
TEST(ReaderLimitsTest, LongTokensAreCutInErrors) {
  const std::string name(1'000'000, 'g');
  const std::string message =
      error_of(kHeader + "\n" + with(kSend, R"("world")", '"' + name + '"'));
  EXPECT_EQ(message, "t.jsonl:2: unknown group '" + std::string(80, 'g') + "'... (1000000 bytes)");
  const std::string header_error =
      error_of(with(kHeader, R"({"name":"world","ranks":[0,1]}])",
                    R"({"name":"world","ranks":[0,1]},{"name":")" + name + R"(","ranks":[]}])") +
               "\n");
  EXPECT_EQ(header_error,
            "t.jsonl:1: group '" + std::string(80, 'g') + "'... (1000000 bytes) has no ranks");
  // A line that is no object is shown cut too (refused on its first byte: no parser reads it).
  const std::string garbage = error_of(kHeader + "\n\"" + std::string(1'000'000, 't') + "\n");
  EXPECT_EQ(garbage.substr(0, 42), "t.jsonl:2: event must be a JSON object, go");
  EXPECT_NE(garbage.find("... (1000001 bytes)"), std::string::npos) << garbage.substr(0, 300);
  EXPECT_LT(garbage.size(), 300u) << garbage.substr(0, 300);
  // nlohmann quotes the token it choked on ("last read: '...'"): that is cut too.
  const std::string broken =
      error_of(kHeader + "\n{\"rank\":\"" + std::string(1'000'000, 't') + "\n");
  EXPECT_EQ(broken.substr(0, 27), "t.jsonl:2: invalid JSON (co");
  EXPECT_NE(broken.find(" bytes)"), std::string::npos) << broken.substr(0, 300);
  EXPECT_LT(broken.size(), 300u) << broken.substr(0, 300);
  const std::string op = error_of(kHeader + "\n" + with(kSend, R"("send")", '"' + name + '"'));
  EXPECT_LT(op.size(), 200u) << op.substr(0, 300);
}

//! A device never ends (/dev/zero) and a folder is not a trace: both are refused before a
//! byte is read.
TEST(ReaderLimitsTest, OnlyRegularFilesAndPipesAreRead) {
  EXPECT_EQ(file_error_of("/dev/zero"), "/dev/zero: not a regular file (a character device)");
  EXPECT_EQ(file_error_of("/"), "/: not a regular file (a directory)");
}

//! A pipe ends when its writer does, so `ranklab stats <(zcat t.jsonl.gz)` works.
TEST(ReaderLimitsTest, APipeIsRead) {
  testing::TempDir dir("ranklab_fifo");
  const auto fifo = dir / "trace.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << kHeader << "\n" << kSend << "\n"; });
  const Trace trace = read_trace_file(fifo);
  writer.join();
  EXPECT_EQ(trace.ranks[0].size(), 1u);
}

//! Each event keeps the file and line it was read from (blank lines count), so a later
//! refusal (replay) can say FILE:LINE; equality ignores where a trace was read.
TEST(ReaderLimitsTest, EventsKeepTheirLines) {
  const std::string second =
      with(with(kSend, R"("rank":0)", R"("rank":1)"), R"("peer":1)", R"("peer":0)");
  const Trace trace =
      trace_samples::from_text("\n" + kHeader + "\n\n" + second + "\n" + kSend + "\n", "a.jsonl");
  EXPECT_EQ(header_source(trace), "a.jsonl:2");
  EXPECT_EQ(source_of(trace, trace.ranks[0][0]), "a.jsonl:5");
  EXPECT_EQ(source_of(trace, trace.ranks[1][0]), "a.jsonl:4");
  Trace elsewhere = trace;
  elsewhere.sources = {};
  elsewhere.ranks[0][0].source = {};
  EXPECT_EQ(elsewhere, trace);
  EXPECT_EQ(source_of(elsewhere, elsewhere.ranks[0][0]), "");
}

}  // namespace
}  // namespace ranklab
