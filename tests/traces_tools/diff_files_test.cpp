// diff_trace_files (two files compared as they are read) against diff_traces on the files read
// whole: the same report for every kind of pair, and read_trace's errors for malformed ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/traces/sample_trace.hpp"
#include "tests/traces_tools/tools_support.hpp"
#include "traces/diff.hpp"
#include "traces/error.hpp"
#include "traces/jsonl.hpp"

namespace ranklab {
namespace {

using trace_samples::sample_trace;

class DiffFilesTest : public ::testing::Test {
 protected:
  std::filesystem::path dir_ = std::filesystem::path(::testing::TempDir()) /
                               ("diff_files_" + std::to_string(::getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path write(const std::string& name, const Trace& trace) {
    std::ostringstream out;
    write_trace(out, trace);
    return write(name, out.str());
  }

  /// Both ways give the same report, text and JSON.
  void expect_same_report(const std::filesystem::path& a, const std::filesystem::path& b) {
    const TraceDiff streamed = diff_trace_files(a, b);
    const Trace trace_a = read_trace_file(a);
    const Trace trace_b = read_trace_file(b);
    const TraceDiff whole = diff_traces(trace_a, trace_b);
    EXPECT_EQ(format_diff(streamed, "a", "b"), format_diff(whole, "a", "b"));
    EXPECT_EQ(diff_to_json(streamed, "a", "b"), diff_to_json(whole, "a", "b"));
  }

  /// `text` with its event lines in another order (the header stays first).
  static std::string reordered(const std::string& text, bool reverse) {
    std::istringstream in(text);
    std::string header, line;
    std::getline(in, header);
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    if (reverse) {
      std::reverse(lines.begin(), lines.end());
    } else {  // round robin over ranks: rank_seq order kept within each rank
      std::stable_sort(lines.begin(), lines.end(), [](const std::string& x, const std::string& y) {
        const auto seq = [](const std::string& l) {
          return std::stoull(l.substr(l.find("\"rank_seq\":") + 11));
        };
        return seq(x) < seq(y);
      });
    }
    std::string out = header + "\n";
    for (const std::string& l : lines) out += l + "\n";
    return out;
  }
};

//! Identical, diverging, shorter and longer ranks, header differences: one report.
TEST_F(DiffFilesTest, MatchesDiffOfWholeTraces) {
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ranks[1][0].peer = 2;
  b.ranks[1][0].hash ^= 1;
  b.ranks[2][1].reduce_op = ReduceOp::max;
  Trace shorter = sample_trace();
  shorter.ranks[0].pop_back();
  shorter.ranks[3].clear();
  Trace renamed = sample_trace();
  renamed.header.groups[1].name = "other";
  const auto pa = write("a.jsonl", a);
  expect_same_report(pa, pa);
  expect_same_report(pa, write("b.jsonl", b));
  expect_same_report(pa, write("short.jsonl", shorter));
  expect_same_report(write("short2.jsonl", shorter), pa);
  expect_same_report(pa, write("renamed.jsonl", renamed));
  EXPECT_TRUE(diff_trace_files(pa, pa).identical());
  EXPECT_FALSE(diff_trace_files(pa, dir_ / "b.jsonl").identical());
}

//! Events of all ranks interleaved, or each rank's out of rank_seq order (read whole then).
TEST_F(DiffFilesTest, ReadsAnyLineOrder) {
  std::ostringstream a_text, b_text;
  write_trace(a_text, sample_trace());
  Trace b = sample_trace();
  b.ranks[2][1].count = 99;
  b.ranks[2][1].bytes = 99 * size_of(b.ranks[2][1].dtype);
  write_trace(b_text, b);
  const auto pa = write("a.jsonl", a_text.str());
  const auto interleaved = write("i.jsonl", reordered(b_text.str(), false));
  const auto reversed = write("r.jsonl", reordered(b_text.str(), true));
  expect_same_report(pa, interleaved);
  expect_same_report(interleaved, pa);
  expect_same_report(reversed, pa);
  expect_same_report(pa, write("ra.jsonl", reordered(a_text.str(), true)));
  EXPECT_TRUE(diff_trace_files(pa, write("ia.jsonl", reordered(a_text.str(), false))).identical());
}

//! Malformed files fail as read_trace_file fails, A's problem before B's.
TEST_F(DiffFilesTest, ErrorsAreReadTracesErrors) {
  std::ostringstream text;
  write_trace(text, sample_trace());
  const std::string good = text.str();
  const auto pa = write("a.jsonl", good);
  const auto bad_line = write("bad.jsonl", good + "{\"rank\":0,\n");
  const std::size_t last = good.rfind('\n', good.size() - 2);
  const auto repeated = write("rep.jsonl", good + good.substr(last + 1));
  const auto error_of = [](const std::filesystem::path& a, const std::filesystem::path& b,
                           bool streamed) -> std::string {
    try {
      if (streamed) {
        diff_trace_files(a, b);
      } else {  // as `ranklab diff` read them: A, then B
        const Trace trace_a = read_trace_file(a);
        const Trace trace_b = read_trace_file(b);
        diff_traces(trace_a, trace_b);
      }
    } catch (const TraceError& error) {
      return error.what();
    }
    return "";
  };
  for (const auto& [a, b] : std::vector<std::pair<std::filesystem::path, std::filesystem::path>>{
           {pa, bad_line}, {bad_line, pa}, {repeated, bad_line}, {pa, repeated},
           {pa, dir_ / "missing.jsonl"}, {dir_ / "missing.jsonl", bad_line}}) {
    const std::string expected = error_of(a, b, false);
    ASSERT_FALSE(expected.empty()) << a << " " << b;
    EXPECT_EQ(error_of(a, b, true), expected);
  }
}

}  // namespace
}  // namespace ranklab
