// `ranklab replay` end to end: fresh recordings replayed under other policies, threads and
// send modes; the shipped deadlock example; a receive deleted from the file by hand; exit
// codes and one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using tools_testing::CommandResult;
using tools_testing::shell_quoted;

CommandResult ranklab(const std::string& args) { return tools_testing::run_ranklab(args); }

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliReplayTest : public ::testing::Test {
 protected:
  std::string record(const std::string& name, const std::string& args, int expected_exit = 0) {
    const std::string path = shell_quoted(dir_ / name);
    const CommandResult run = ranklab("run " + args + " --trace " + path);
    EXPECT_EQ(run.exit_code, expected_exit) << run.out << run.err;
    return path;
  }
  testing::TempDir dir_{"ranklab_cli_replay"};
};

//! A fresh recording of the seed's step and of a ring all_reduce replay, reproduced, under
//! other policies, thread counts and send modes (exit 0).
TEST_F(CliReplayTest, FreshRecordingsReproduceUnderAnyPolicy) {
  const std::vector<std::string> traces = {
      record("seed.jsonl", ""), record("ring.jsonl", "--scenario allreduce --algo ring --world 5"),
      record("wild.jsonl", "--scenario wildcard-race --policy random:4")};
  for (const std::string& trace : traces) {
    for (const char* flags : {"", "--policy random:3", "--policy pct:7:2 --threads 2",
                              "--send-mode eager", "--send-mode 'eager<=4' --threads 3"}) {
      const CommandResult run = ranklab("replay " + trace + " " + flags);
      EXPECT_EQ(run.exit_code, 0) << trace << " " << flags << "\n" << run.out << run.err;
      EXPECT_TRUE(has(run.out, "result: reproduced: all ")) << run.out;
    }
  }
}

//! The shipped deadlock examples replay into the deadlock `ranklab run` reported (exit 3).
TEST_F(CliReplayTest, DeadlockExampleReplaysIntoTheSameReport) {
  const CommandResult original = ranklab("run --scenario send-send");
  ASSERT_EQ(original.exit_code, 3);
  const std::string report = original.out.substr(original.out.find("DEADLOCK:"));
  const std::string blocked = report.substr(0, report.find("\nlast events:"));
  const CommandResult replay =
      ranklab("replay " + shell_quoted(tools_testing::examples_dir() / "send_send_deadlock.jsonl"));
  EXPECT_EQ(replay.exit_code, 3) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, blocked)) << "expected\n" << blocked << "\nin\n" << replay.out;
  EXPECT_TRUE(has(replay.out, "result: reproduced: all 2 operations")) << replay.out;
  const std::string culprit = original.out.substr(original.out.find("culprit ("));
  EXPECT_TRUE(has(replay.out, culprit.substr(0, culprit.find('\n'))))
      << "the run's culprit line in\n" << replay.out;
  const CommandResult json = ranklab(
      "replay --json " + shell_quoted(tools_testing::examples_dir() / "send_send_deadlock.jsonl"));
  EXPECT_EQ(json.exit_code, 3);
  const auto culprit_doc = nlohmann::json::parse(json.out).at("culprit");
  EXPECT_EQ(culprit_doc.at("kind"), "send-cycle") << json.out;
  EXPECT_EQ(culprit_doc.at("ranks"), nlohmann::json::array({0, 1})) << json.out;
  const CommandResult barrier = ranklab(
      "replay " + shell_quoted(tools_testing::examples_dir() / "missing_barrier_deadlock.jsonl"));
  EXPECT_EQ(barrier.exit_code, 3);
  EXPECT_TRUE(has(barrier.out, "rank 3 never joined barrier #0 of world (it finished)"))
      << barrier.out;
}

//! One receive line deleted from a recorded file: the replay deadlocks and names the
//! orphaned send; the verdict says the recording did not reproduce.
TEST_F(CliReplayTest, DeletedReceiveLineNamesTheOrphanedSend) {
  const std::string trace = record("ring.jsonl", "--scenario ring --world 4");
  std::ifstream in(dir_ / "ring.jsonl");
  std::ostringstream kept;
  std::string line;
  bool deleted = false;
  while (std::getline(in, line)) {
    if (!deleted && has(line, R"("rank":2,)") && has(line, R"("op":"recv")")) {
      deleted = true;
      continue;
    }
    kept << line << "\n";
  }
  ASSERT_TRUE(deleted);
  const auto edited = dir_ / "edited.jsonl";
  std::ofstream(edited) << kept.str();
  const CommandResult replay = ranklab("replay " + shell_quoted(edited));
  EXPECT_EQ(replay.exit_code, 3) << replay.out << replay.err;
  EXPECT_TRUE(has(replay.out, "rank 1: send to rank 2 tag")) << replay.out;
  EXPECT_TRUE(has(replay.out, "rank 2 finished (returned) while rank 1 waits for it"))
      << replay.out;
  // The culprit names the send that has no receive in the recording, and its line (the
  // wait it leads to, rank 2 having returned, is in the analysis above).
  EXPECT_TRUE(has(replay.out, "culprit (lost-message): rank 1 waits in op #0, its send of 1 x "
                              "i64 to rank 2 tag 0 at "))
      << replay.out;
  EXPECT_TRUE(has(replay.out, "edited.jsonl:4, which no receive of the recording takes"))
      << replay.out;
  EXPECT_TRUE(has(replay.out, "result: not reproduced")) << replay.out;
}

//! --json is one JSON document; --trace writes the replayed trace, which diff finds
//! identical to the recording.
TEST_F(CliReplayTest, JsonAndReplayedTrace) {
  const std::string trace = record("seed.jsonl", "");
  const auto replayed = dir_ / "replayed.jsonl";
  const CommandResult run =
      ranklab("replay --json " + trace + " --threads 2 --trace " + shell_quoted(replayed));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto doc = nlohmann::json::parse(run.out);
  EXPECT_TRUE(doc["reproduced"].get<bool>());
  EXPECT_EQ(doc["recorded_operations"], doc["replayed_operations"]);
  EXPECT_EQ(doc["run_status"], "ok");
  EXPECT_EQ(doc["status"], "reproduced");
  const CommandResult diff = ranklab("diff " + trace + " " + shell_quoted(replayed));
  EXPECT_EQ(diff.exit_code, 0) << diff.out;
}

//! --cost and --topology on run and replay: the virtual-time section, a timed trace that
//! export draws on the virtual axis, and the same prediction from the run and its replay.
TEST_F(CliReplayTest, CostModelTimesRunAndReplay) {
  const std::string cost = "--cost alpha=1e-6,beta=1e9";
  const std::string trace = record("timed.jsonl", "--scenario allreduce --algo ring " + cost);
  const CommandResult run = ranklab("run --scenario allreduce --algo ring " + cost);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string step = run.out.substr(run.out.find("virtual time ("));
  EXPECT_TRUE(has(step, "step 17.2 us")) << step;
  const CommandResult replay = ranklab("replay " + trace + " --policy random:2 " + cost);
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_TRUE(has(replay.out, step.substr(0, step.find('\n')))) << replay.out;
  const auto perfetto = dir_ / "timed.json";
  ASSERT_EQ(ranklab("export " + trace + " --perfetto " + shell_quoted(perfetto)).exit_code, 0);
  const auto doc = nlohmann::json::parse(tools_testing::read_text(perfetto));
  EXPECT_EQ(doc["otherData"]["time_base"], "virtual");

  const auto topology = dir_ / "topo.txt";
  std::ofstream(topology) << "ranks_per_node = 2\nintra.latency = 1e-6\nintra.bandwidth = 1e11\n"
                             "inter.latency = 1e-5\ninter.bandwidth = 1e10\n";
  const CommandResult main_job = ranklab("run --json --topology " + shell_quoted(topology) +
                                         " --trace " + shell_quoted(dir_ / "main.jsonl"));
  ASSERT_EQ(main_job.exit_code, 0) << main_job.err;
  const auto json = nlohmann::json::parse(main_job.out);
  EXPECT_GT(json["virtual_time"]["step_s"].get<double>(), 0.0);
  EXPECT_EQ(json["virtual_time"]["ranks"].size(), 8u);
}

//! A trace ranklab writes is one it reads: with α = 1e10 s the ring's virtual times pass
//! 2^63 ns, the trace saturates them (it wrapped to -2^63 before, which `stats` rejected),
//! and `stats`, `export` (Perfetto and HTML) and a timed `replay` take the file.
TEST_F(CliReplayTest, VirtualTimePastInt64ReadsBack) {
  const std::string cost = "--cost alpha=1e10,beta=1e9";
  const auto path = dir_ / "late.jsonl";
  const CommandResult run =
      ranklab("run --scenario ring " + cost + " --trace " + shell_quoted(path));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(has(run.out, "saturate at 9223372036854775807")) << run.out;
  const std::string text = tools_testing::read_text(path);
  EXPECT_TRUE(has(text, R"("vt_end_ns":9223372036854775807)")) << text.substr(0, 2000);
  EXPECT_FALSE(has(text, "\"vt_end_ns\":-")) << text.substr(0, 2000);
  const CommandResult stats = ranklab("stats " + shell_quoted(path));
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  const auto perfetto = dir_ / "late.json";
  EXPECT_EQ(ranklab("export " + shell_quoted(path) + " --perfetto " + shell_quoted(perfetto))
                .exit_code,
            0);
  // The HTML report's axis spans the 292 years in seconds.
  const auto html = dir_ / "late.html";
  EXPECT_EQ(ranklab("export " + shell_quoted(path) + " --html " + shell_quoted(html)).exit_code, 0);
  EXPECT_TRUE(has(tools_testing::read_text(html), R"("unit":"s")"));
  const CommandResult replay = ranklab("replay " + shell_quoted(path) + " " + cost);
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
}

//! SimGrid TI recordings replay from the CLI: the ring reproduces (exit 0) and is timed with
//! its compute; SMPI's recording of a deadlock replays into ranklab's deadlock report.
TEST_F(CliReplayTest, SimgridTiRecordingsReplay) {
  const auto ti = tools_testing::examples_dir() / "ti";
  const CommandResult ring = ranklab("replay --format simgrid-ti " + shell_quoted(ti / "ring8") +
                                     " --threads 2 --cost alpha=1e-6,beta=1e10,flops=1e9");
  EXPECT_EQ(ring.exit_code, 0) << ring.out << ring.err;
  EXPECT_TRUE(has(ring.out, "result: reproduced: all 120 operations and 24 messages")) << ring.out;
  EXPECT_TRUE(has(ring.out, "virtual time (alpha=1e-06 s, beta=1e+10 B/s, 1e+09 FLOP/s)"))
      << ring.out;
  const CommandResult mix = ranklab("replay --format simgrid-ti " +
                                    shell_quoted(ti / "mix4" / "trace.txt") + " --policy pct:3:2");
  EXPECT_EQ(mix.exit_code, 0) << mix.out << mix.err;
  const CommandResult deadlock =
      ranklab("replay --format simgrid-ti " + shell_quoted(ti / "deadlock3"));
  EXPECT_EQ(deadlock.exit_code, 3) << deadlock.out << deadlock.err;
  EXPECT_TRUE(has(deadlock.out, "  0 -> 1 -> 0\n")) << deadlock.out;
  EXPECT_TRUE(has(deadlock.out, "rank 2: barrier #0 in world")) << deadlock.out;
  const auto bad = dir_ / "bad.txt";
  std::ofstream(bad) << "0 init\n0 send 1 0\n";
  const CommandResult error = ranklab("replay --format simgrid-ti " + shell_quoted(bad));
  EXPECT_EQ(error.exit_code, 1);
  EXPECT_TRUE(has(error.err, "bad.txt:2: send needs DST TAG COUNT [DTYPE] (got 2 arguments)"))
      << error.err;
}

//! Bad input and usage: exit 1 with one line naming what and where.
TEST_F(CliReplayTest, BadInputExits1WithOneLine) {
  const auto bad = dir_ / "bad.jsonl";
  std::ifstream in(tools_testing::examples_dir() / "send_send_deadlock.jsonl");
  std::string header;
  std::getline(in, header);
  std::ofstream(bad) << header << "\n{\"rank\":0,\"rank_seq\":0,\"op\":\"send\"\n";
  const std::string example = shell_quoted(tools_testing::examples_dir() / "allreduce_w8.jsonl");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"replay " + shell_quoted(bad), "bad.jsonl:2: invalid JSON"},
      {"replay " + shell_quoted(dir_ / "nope.jsonl"), "nope.jsonl: cannot open trace file"},
      {"replay " + example + " --format nope",
       "unknown --format 'nope': expected ranklab, simgrid-ti, pytorch-fr, nccl-log or nccl-ras"},
      {"replay " + example + " --world 4", "--world"},
      {"replay " + example + " --threads 0", "--threads must be at least 1"},
      {"replay", "TRACE is required"},
      {"replay " + example + " --cost alpha=1", "--cost: missing beta"},
      {"replay " + example + " --cost alpha=1,beta=1 --topology x", "give one or the other"},
      {"replay " + example + " --topology " + shell_quoted(bad),
       "bad.jsonl:1: expected KEY = VALUE"},
      {"run --scenario ring --cost beta=x,alpha=1", "--cost: beta must be a number > 0, got 'x'"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult run = ranklab(args);
    EXPECT_EQ(run.exit_code, 1) << args << "\n" << run.out;
    EXPECT_TRUE(has(run.err, message)) << args << "\n" << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

}  // namespace
}  // namespace ranklab
