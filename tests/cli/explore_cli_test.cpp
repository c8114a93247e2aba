// End to end through the `ranklab` binary: `ranklab explore` finds every catalogue bug and
// prints a command that, run by the shell as printed, reproduces that exact run (the same
// report, the same trace file byte for byte), and so does its shrunk command; faults and
// --wait-graph work from the command line; bad usage is one line and exit 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"
#include "tests/traces_tools/run_command.hpp"

namespace ranklab::testing {
namespace {

using tools_testing::CommandResult;
using tools_testing::read_text;
using tools_testing::run_command;
using tools_testing::shell_quoted;

std::string binary() { return shell_quoted(RANKLAB_BINARY); }

CommandResult ranklab(const std::string& args) { return run_command(binary() + " " + args); }

std::string show(const CommandResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

// The text after `prefix` on the first line of `out` that starts with it.
std::string line_after(const std::string& out, const std::string& prefix) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) return line.substr(prefix.size());
  }
  return {};
}

// The failing run's report as explore prints it (indented by two spaces), unindented.
std::string embedded_report(const std::string& out) {
  std::istringstream lines(out);
  std::string report;
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("schedule ")) {
      inside = true;
      std::getline(lines, line);  // the blank line after it
      continue;
    }
    if (!inside) continue;
    if (line.starts_with("reproduce: ")) break;
    report += (line.starts_with("  ") ? line.substr(2) : line) + "\n";
  }
  while (report.ends_with("\n\n")) report.pop_back();
  return report;
}

// A printed `ranklab run ...` command, run by the shell with the built binary.
CommandResult run_printed(const std::string& command, const std::string& extra) {
  EXPECT_TRUE(command.starts_with("ranklab run ")) << command;
  return run_command(binary() + command.substr(std::string("ranklab").size()) + " " + extra);
}

struct Bug {
  std::string name;
  int code;  ///< explore's exit code
  friend void PrintTo(const Bug& bug, std::ostream* os) { *os << bug.name; }
};

class ExploreCliTest : public ::testing::TestWithParam<std::tuple<Bug, std::string>> {};

//! explore finds the bug, exits with the failing run's code, and its printed `reproduce:`
//! command prints the same report and writes the same trace, byte for byte, as the run
//! explore found; the `shrunk:` command, when there is one, writes the shrunk run's trace.
TEST_P(ExploreCliTest, PrintedCommandsReproduceTheRunExactly) {
  const auto& [bug, strategy] = GetParam();
  TempDir dir("ranklab_explore");
  const std::string found = (dir / "found.jsonl").string();
  const CommandResult r = ranklab("explore --scenario " + bug.name + " --runs 100 --jobs 2 " +
                                  "--strategy " + strategy + " --trace " + shell_quoted(found));
  ASSERT_EQ(r.exit_code, bug.code) << show(r);
  EXPECT_EQ(r.err, "");
  const std::string reproduce = line_after(r.out, "reproduce: ");
  std::string shrunk = line_after(r.out, "shrunk: ");
  if (!shrunk.empty()) shrunk = shrunk.substr(shrunk.find("ranklab run"));
  ASSERT_FALSE(reproduce.empty()) << show(r);

  const std::string again = (dir / "again.jsonl").string();
  const CommandResult rerun = run_printed(reproduce, "--trace " + shell_quoted(again));
  EXPECT_EQ(rerun.err, "");
  EXPECT_EQ(rerun.exit_code, bug.code) << show(rerun);
  if (bug.code != 2) {
    const std::string printed = rerun.out.substr(0, rerun.out.rfind("trace: "));
    EXPECT_EQ(printed, embedded_report(r.out)) << show(r) << show(rerun);
  } else {
    // Nondeterminism: the printed command compares itself with rank order and says so.
    EXPECT_NE(rerun.out.find("compared with rank-order: nondeterminism: "), std::string::npos)
        << show(rerun);
    EXPECT_NE(rerun.out.find("result: nondeterminism: "), std::string::npos) << show(rerun);
  }
  // The trace explore keeps is the shrunk run's if it shrank, else the failing run's.
  if (shrunk.empty()) {
    EXPECT_EQ(read_text(again), read_text(found));
  } else {
    const std::string small = (dir / "shrunk.jsonl").string();
    const CommandResult s = run_printed(shrunk, "--trace " + shell_quoted(small));
    EXPECT_EQ(s.exit_code, bug.code) << show(s);
    EXPECT_EQ(read_text(small), read_text(found)) << shrunk;
    // A race: both the found and the shrunk schedule differ from rank order.
    const std::string plain = (dir / "plain.jsonl").string();
    ranklab("run --scenario " + bug.name + " --trace " + shell_quoted(plain));
    EXPECT_EQ(ranklab("diff " + shell_quoted(plain) + " " + shell_quoted(small)).exit_code, 2);
    EXPECT_EQ(ranklab("diff " + shell_quoted(plain) + " " + shell_quoted(again)).exit_code, 2);
  }
}

std::vector<Bug> bugs() {
  return {{"pp-both-send", 3},        {"1f1b-warmup", 3},    {"backward-wrong-stage", 3},
          {"tag-mismatch", 3},        {"lost-message", 3},   {"opposite-group-order", 4},
          {"tp-skip-barrier", 4},     {"wrong-group", 3},    {"dp-param-order", 4},
          {"nan-skip", 3},            {"wildcard-sum", 2},   {"allreduce-death", 5}};
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ExploreCliTest,
                         ::testing::Combine(::testing::ValuesIn(bugs()),
                                            ::testing::Values("random", "pct")),
                         [](const auto& p) {
                           std::string name = std::get<0>(p.param).name + "_" + std::get<1>(p.param);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

//! A fixed twin explores clean: exit 0 and a result line with the schedule count.
TEST(ExploreCli, FixedTwinPasses) {
  const CommandResult r = ranklab("explore --scenario pp-both-send-fixed --runs 50 --jobs 2");
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_NE(r.out.find("result: ok: 50 schedules passed with the same results and per-rank "
                       "traces as rank-order"),
            std::string::npos)
      << show(r);
}

//! The main job explores too (`--run` plus its own flags), and a corrupted message makes
//! every schedule fail the gradient check (exit 2) at the first one.
TEST(ExploreCli, MainJob) {
  const CommandResult ok = ranklab("explore --runs 4 --jobs 2 --run --dtype f64");
  EXPECT_EQ(ok.exit_code, 0) << show(ok);
  EXPECT_NE(ok.out.find("explore: the main job (mode hybrid, TP2 PP2 DP2"), std::string::npos);
  const CommandResult bad = ranklab("explore --runs 4 --run --fault 'corrupt:0->2#0'");
  EXPECT_EQ(bad.exit_code, 2) << show(bad);
  EXPECT_NE(bad.out.find("failed: check failed: 8 ranks finished, but 8 of 8 ranks differ from "
                         "the dense reference"),
            std::string::npos)
      << show(bad);
  EXPECT_NE(bad.out.find("reproduce: ranklab run --fault 'corrupt:0->2#0' --policy rank-order"),
            std::string::npos)
      << show(bad);
}

//! A corrupted message is found by `ranklab diff` against a clean trace (the receiver's
//! hash) and by the main job's gradient check (exit 2), and the fault line says what it did.
TEST(FaultCli, CorruptFoundByDiffAndGradientCheck) {
  TempDir dir("ranklab_fault");
  const std::string clean = (dir / "clean.jsonl").string();
  const std::string bad = (dir / "bad.jsonl").string();
  ASSERT_EQ(ranklab("run --trace " + shell_quoted(clean)).exit_code, 0);
  const CommandResult r = ranklab("run --fault 'corrupt:0->2#0' --trace " + shell_quoted(bad));
  EXPECT_EQ(r.exit_code, 2) << show(r);
  EXPECT_NE(r.out.find("fault: corrupt:0->2#0 fired: rank 0's send op #2 to rank 2 tag 0 in "
                       "pp[0,2] (4096 x f32) arrived at rank 2's op #0 with element 2048 corrupted"),
            std::string::npos)
      << show(r);
  EXPECT_NE(r.out.find("result: check failed: 8 ranks finished, but "), std::string::npos)
      << show(r);
  const CommandResult d = ranklab("diff " + shell_quoted(clean) + " " + shell_quoted(bad));
  EXPECT_EQ(d.exit_code, 2) << show(d);
  EXPECT_NE(d.out.find("rank 2: first divergence at op #0: hash"), std::string::npos) << show(d);
}

//! --fault kill, drop and delay from the command line end in their reports (exit 5, 3, 0).
TEST(FaultCli, KillDropDelayFromTheCommandLine) {
  const CommandResult kill = ranklab("run --scenario allreduce --fault kill:5@0");
  EXPECT_EQ(kill.exit_code, 5) << show(kill);
  EXPECT_NE(kill.out.find("culprit (rank-failure): rank 5 failed first: killed by fault "
                          "injection (kill:5@0) before its op #0"),
            std::string::npos)
      << show(kill);
  const CommandResult drop = ranklab("run --scenario ring --fault 'drop:1->2#0'");
  EXPECT_EQ(drop.exit_code, 3) << show(drop);
  EXPECT_NE(drop.out.find("culprit (lost-message): rank 2 waits in recv from rank 1 tag 0 in "
                          "world (1 x i64), op #1 at cli/scenarios/basic.cpp:20 (ring), one message short: "
                          "fault drop:1->2#0"),
            std::string::npos)
      << show(drop);
  const CommandResult delay =
      ranklab("run --scenario allreduce --fault delay:0@0:3 --fault delay:7@0:1");
  EXPECT_EQ(delay.exit_code, 0) << show(delay);
  EXPECT_NE(delay.out.find("fault: delay:0@0:3 fired: rank 0 yielded 3 times before its op #0"),
            std::string::npos);
}

//! --wait-graph writes the wait-for graph of a deadlock as Graphviz DOT, and only warns
//! when the run did not deadlock.
TEST(WaitGraphCli, WritesDotOnDeadlock) {
  TempDir dir("ranklab_dot");
  const std::string dot = (dir / "sub" / "wait.dot").string();
  const CommandResult r = ranklab("run --scenario pp-both-send --wait-graph " + shell_quoted(dot));
  EXPECT_EQ(r.exit_code, 3) << show(r);
  const std::string text = read_text(dot);
  EXPECT_TRUE(text.starts_with("digraph wait_for {")) << text;
  EXPECT_NE(text.find("r0 -> r2 [label=\"send tag 0\", color=red"), std::string::npos) << text;
  const std::string none = (dir / "none.dot").string();
  const CommandResult ok = ranklab("run --scenario ring --wait-graph " + shell_quoted(none));
  EXPECT_EQ(ok.exit_code, 0) << show(ok);
  EXPECT_FALSE(std::filesystem::exists(none));
  EXPECT_NE(ok.err.find("no rank ended blocked"), std::string::npos) << show(ok);
}

//! A recorded trace explores through the replay engine: a pattern recorded with eager sends
//! is a potential deadlock replayed under eager ones (exit 6) and deadlocks under rendezvous
//! ones, and the printed `ranklab replay` command reproduces that run's report exactly.
TEST(ExploreCli, RecordedTraceThroughReplay) {
  TempDir dir("ranklab_explore_trace");
  const std::string trace = (dir / "send-send.jsonl").string();
  ASSERT_EQ(ranklab("run --scenario send-send --send-mode eager --trace " + shell_quoted(trace))
                .exit_code,
            6);
  const CommandResult eager = ranklab("explore " + shell_quoted(trace) +
                                      " --send-mode eager --runs 30 --jobs 2 --keep-send-mode");
  EXPECT_EQ(eager.exit_code, 6) << show(eager);
  EXPECT_NE(eager.out.find("culprit (potential-deadlock): "), std::string::npos) << show(eager);
  const CommandResult r = ranklab("explore " + shell_quoted(trace) + " --runs 30 --jobs 2");
  ASSERT_EQ(r.exit_code, 3) << show(r);
  EXPECT_NE(r.out.find("explore: replay of " + trace), std::string::npos) << show(r);
  const std::string reproduce = line_after(r.out, "reproduce: ");
  ASSERT_TRUE(reproduce.starts_with("ranklab replay ")) << show(r);
  const CommandResult again =
      run_command(binary() + reproduce.substr(std::string("ranklab").size()));
  EXPECT_EQ(again.exit_code, 3) << show(again);
  // The same report, but for the replay's own timing line.
  const auto untimed = [](const std::string& text) {
    std::istringstream lines(text);
    std::string out;
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("time: ")) out += line + "\n";
    }
    return out;
  };
  EXPECT_EQ(untimed(again.out), untimed(embedded_report(r.out))) << show(again);
}

//! explore varies the send mode: every other schedule runs under the other one, is compared
//! with rank order under that mode, and its `reproduce:` line carries the mode. send-send
//! under eager is a potential deadlock at once (the rank-order reference); the printed
//! command, run, shows it.
TEST(ExploreCli, VariesTheSendMode) {
  const CommandResult r = ranklab("explore --scenario pp-both-send-fixed --runs 8 --jobs 2");
  EXPECT_EQ(r.exit_code, 0) << show(r);
  EXPECT_NE(r.out.find("every other one under send mode eager"), std::string::npos) << show(r);
  const CommandResult race = ranklab("explore --scenario wildcard-sum --runs 50 --jobs 2");
  ASSERT_EQ(race.exit_code, 2) << show(race);
  EXPECT_EQ(line_after(race.out, "reproduce: "),
            "ranklab run --scenario wildcard-sum --send-mode eager --policy random:1 "
            "--compare-rank-order")
      << show(race);
  const CommandResult both =
      ranklab("explore --scenario send-send --send-mode eager --runs 8 --jobs 2");
  ASSERT_EQ(both.exit_code, 6) << show(both);
  EXPECT_NE(both.out.find("result: potential deadlock at schedule 1 of 8"), std::string::npos)
      << show(both);
  const std::string reproduce = line_after(both.out, "reproduce: ");
  EXPECT_EQ(reproduce, "ranklab run --scenario send-send --send-mode eager --policy rank-order");
  const CommandResult again = run_printed(reproduce, "");
  EXPECT_EQ(again.exit_code, 6) << show(again);
  EXPECT_NE(again.out.find("culprit (potential-deadlock): rank 0's send to rank 1 tag 0"),
            std::string::npos)
      << show(again);
}

//! traces/examples/wildcard_race.jsonl: three senders race to rank 0's receives from any
//! source. Replay pins every match, so every schedule used to pass; explore lets each
//! receive choose its sender again (--wildcards free), finds the race, and its printed
//! command shows the divergence and exits nonzero.
TEST(ExploreCli, FindsTheRaceARecordingPinned) {
  const std::string trace =
      shell_quoted(std::string(RANKLAB_SOURCE_DIR) + "/traces/examples/wildcard_race.jsonl");
  const CommandResult pinned = ranklab("replay " + trace + " --policy random:1");
  EXPECT_EQ(pinned.exit_code, 0) << show(pinned);
  const CommandResult r = ranklab("explore " + trace + " --runs 100 --jobs 2");
  ASSERT_EQ(r.exit_code, 2) << show(r);
  EXPECT_NE(r.out.find("failed: not reproduced"), std::string::npos) << show(r);
  const std::string reproduce = line_after(r.out, "reproduce: ");
  ASSERT_TRUE(reproduce.starts_with("ranklab replay ")) << show(r);
  EXPECT_NE(reproduce.find(" --wildcards free"), std::string::npos) << reproduce;
  const CommandResult again =
      run_command(binary() + reproduce.substr(std::string("ranklab").size()));
  EXPECT_EQ(again.exit_code, 2) << show(again);
  EXPECT_NE(again.out.find("recv world peer"), std::string::npos) << show(again);
  EXPECT_NE(again.out.find("differs in: peer"), std::string::npos) << show(again);
}

//! explore takes what replay takes: a SimGrid TI recording (its folder, --format simgrid-ti)
//! explores through the replay engine, and its receives from any source are freed too.
TEST(ExploreCli, ReadsSimgridTiTraces) {
  const std::string ti = std::string(RANKLAB_SOURCE_DIR) + "/traces/examples/ti/";
  const CommandResult ring =
      ranklab("explore --format simgrid-ti " + shell_quoted(ti + "ring8") + " --runs 6 --jobs 2");
  EXPECT_EQ(ring.exit_code, 0) << show(ring);
  EXPECT_NE(ring.out.find("explore: replay of "), std::string::npos) << show(ring);
  const CommandResult any = ranklab("explore --format simgrid-ti " +
                                    shell_quoted(ti + "bugs/anysource_loop") + " --runs 40");
  EXPECT_EQ(any.exit_code, 2) << show(any);
  EXPECT_NE(line_after(any.out, "reproduce: ").find("--format simgrid-ti"), std::string::npos)
      << show(any);
}

// explore's output without what depends on the number of jobs by nature: the header's
// "N jobs" and the result line's "(N runs in S s, R schedules/s)" (parallel jobs may run
// past the first failure, which the report still names by its lowest index).
std::string without_timing(const std::string& out) {
  std::istringstream lines(out);
  std::string kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("explore: ")) line = line.substr(0, line.rfind(", "));
    if (line.starts_with("result: ")) line = line.substr(0, line.rfind(" ("));
    kept += line + "\n";
  }
  return kept;
}

//! --jobs changes how fast, never what: the main job and catalogue bugs (a race found by
//! the nondeterminism check, a deadlock shrunk by PCT) print the same report, byte for
//! byte but for the job count and the timing, and write the same failing trace, with one
//! job and with two.
TEST(ExploreCli, SameOutputForAnyJobs) {
  TempDir dir("ranklab_explore_jobs");
  const std::string trace = (dir / "failing.jsonl").string();
  const std::string cases[] = {"--run --runs 40", "--scenario wildcard-sum --runs 50",
                               "--scenario 1f1b-warmup --runs 100 --strategy pct",
                               "--scenario dp-param-order --runs 100"};
  for (const std::string& args : cases) {
    std::string outs[2], traces[2];
    for (int jobs = 1; jobs <= 2; ++jobs) {
      std::filesystem::remove(trace);
      const CommandResult r = ranklab("explore " + args + " --jobs " + std::to_string(jobs) +
                                      " --trace " + shell_quoted(trace));
      EXPECT_EQ(r.err, "") << args << "\n" << show(r);
      outs[jobs - 1] = without_timing(r.out);
      if (std::filesystem::exists(trace)) traces[jobs - 1] = read_text(trace);
    }
    EXPECT_EQ(outs[0], outs[1]) << args;
    EXPECT_EQ(traces[0], traces[1]) << args;
    EXPECT_NE(outs[0].find("result: "), std::string::npos) << outs[0];
  }
}

//! Bad usage of explore and --fault is one line on stderr and exit 1.
TEST(ExploreCli, BadUsageIsOneLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"explore", "explore needs --scenario NAME, --run [ARGS...] or a TRACE"},
      {"explore missing.jsonl", "missing.jsonl"},
      {"explore missing.jsonl --world 4", "in the arguments for `ranklab replay`: The following"},
      {"explore --scenario ring --policy random:1", "--policy is not allowed"},
      {"explore --scenario ring --threads 2", "--threads is not allowed"},
      {"explore --scenario ring --runs 0", "--runs must be at least 1"},
      {"explore --scenario ring --jobs 0", "--jobs must be at least 1, got 0"},
      {"explore --scenario ring --strategy dfs", "unknown --strategy 'dfs'"},
      {"explore --scenario nope", "unknown scenario 'nope'"},
      {"explore --scenario ring --bogus", "The following argument was not expected: --bogus"},
      {"run --scenario ring --fault kill:1", "invalid fault 'kill:1'"},
      {"run --scenario ring --fault 'drop:0->9#0'", "rank 9 is outside the world of 4 ranks"},
      {"run --scenario pp-both-send --world 8", "scenario pp-both-send runs on exactly 4 ranks"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = ranklab(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << show(r);
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << show(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << show(r);
  }
}

}  // namespace
}  // namespace ranklab::testing
