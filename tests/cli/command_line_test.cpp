// A conventional command line (issue 15 §5), tried as a user does: choice options list their
// values and refuse others while parsing, defaults are shown one way, explore's usage names
// its TRACE, and the reports' wording (counts, rank prefixes, a crash's survivors, the order
// of the last events).
#include <gtest/gtest.h>

#include <regex>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

// The help line of `option` (its first line: name, type, values, default).
std::string help_line(const Result& help, const std::string& option) {
  const std::size_t at = help.out.find("  " + option + " ");
  if (at == std::string::npos) return {};
  return help.out.substr(at, help.out.find('\n', at) - at);
}

//! Every choice option lists its values as {a,b,...} and shows its default as =VALUE.
TEST(CommandLineTest, ChoiceOptionsListTheirValues) {
  const Result run = ranklab({"run", "--help"});
  ASSERT_EQ(run.code, 0) << show(run);
  const std::pair<std::string, std::string> expected[] = {
      {"--mode", "{tp,pp,dp,hybrid}=hybrid"},
      {"--dtype", "{f32,f64}=f32"},
      {"--order", "{tp-pp-dp,tp-dp-pp}=tp-pp-dp"},
      {"--schedule", "{seed,gpipe,1f1b,interleaved}=seed"},
      {"--tp-comm", "{allreduce,sp}=allreduce"},
      {"--send-mode", "{rendezvous,eager,eager<=BYTES}=rendezvous"},
      {"--algo", "{direct,ring,tree,"},
      {"--policy", "preempt:STEP=RANK"},
      {"--backend", "{emulator,mpi}=emulator"},
      {"--tp", "INT=2"},
      {"--layers", "INT=4"}};
  for (const auto& [option, values] : expected) {
    EXPECT_NE(help_line(run, option).find(values), std::string::npos)
        << option << ": " << help_line(run, option);
  }
  // Defaults one way: none in brackets at the end of a description.
  EXPECT_FALSE(std::regex_search(run.out, std::regex(R"(\[[a-z0-9-]+\]\n)"))) << run.out;

  const Result explore = ranklab({"explore", "--help"});
  EXPECT_NE(help_line(explore, "--strategy").find("{random,pct}=random"), std::string::npos)
      << explore.out;
  const Result stats = ranklab({"stats", "--help"});
  EXPECT_NE(help_line(stats, "--format").find("{ranklab,simgrid-ti,pytorch-fr,nccl-log,nccl-ras}=ranklab"),
            std::string::npos)
      << stats.out;
  const Result top = ranklab({"--help"});
  EXPECT_NE(help_line(top, "--log-level").find("{trace,debug,info,warn,error,critical,off}=warn"),
            std::string::npos)
      << top.out;
}

//! A bad choice is refused while parsing, before anything else looks at the flags: with a
//! scenario, `--mode xx` is a bad mode (not "--mode belongs to the main job").
TEST(CommandLineTest, BadChoicesAreRefusedWhileParsing) {
  expect_usage_error(ranklab({"run", "--scenario", "ring", "--mode", "xx"}),
                     "--mode: unknown mode 'xx': expected tp, pp, dp or hybrid");
  expect_usage_error(ranklab({"run", "--scenario", "ring", "--dtype", "f16"}),
                     "unknown --dtype 'f16'");
  expect_usage_error(ranklab({"run", "--log-level", "loud", "--scenario", "ring"}),
                     "unknown --log-level 'loud'");
  expect_usage_error(ranklab({"stats", "--format", "csv", "/nonexistent.jsonl"}),
                     "unknown --format");
  expect_usage_error(ranklab({"run", "--scenario", "ring", "--policy", "preempt:x"}),
                     "--policy");
}

//! explore's usage line shows what it explores, its TRACE among them.
TEST(CommandLineTest, ExploreUsageShowsTrace) {
  const Result help = ranklab({"explore", "--help"});
  ASSERT_EQ(help.code, 0) << show(help);
  EXPECT_TRUE(has(help, "explore [OPTIONS] (--scenario NAME | --run [ARGS...] | TRACE [ARGS...])"));
}

//! One rank is "1 rank", not "1 ranks".
TEST(CommandLineTest, CountsAreSingularForOne) {
  const Result one = ranklab({"run", "--scenario", "allreduce", "--world", "1"});
  EXPECT_EQ(one.code, 0) << show(one);
  EXPECT_TRUE(has(one, "result: ok: 1 rank finished\n"));
  EXPECT_EQ(one.out.find("1 ranks"), std::string::npos) << one.out;
  const Result explore = ranklab(
      {"explore", "--scenario", "ring", "--runs", "1", "--jobs", "1", "--keep-send-mode"});
  EXPECT_TRUE(has(explore, ": 1 schedule (random after rank-order), 1 job\n"));
  EXPECT_TRUE(has(explore, "result: ok: 1 schedule passed"));
}

//! A crash report says where the surviving ranks are blocked.
TEST(CommandLineTest, CrashReportListsTheSurvivors) {
  const Result crash = ranklab({"run", "--scenario", "crash"});
  EXPECT_EQ(crash.code, 5) << show(crash);
  // The three make the same call: one line names them.
  EXPECT_TRUE(has(crash, "blocked operations:\n  ranks 0-2 (3 ranks): all_reduce #0 in world:"));
}

//! "last events" come in rank order: here rank 1 is blocked and 0, 2 and 3 have finished
//! (the report used to list the blocked ranks first).
TEST(CommandLineTest, LastEventsInRankOrder) {
  const Result r = ranklab({"run", "--scenario", "ring", "--fault", "drop:0->1#0"});
  EXPECT_EQ(r.code, 3) << show(r);
  const std::size_t events = r.out.find("last events:\n");
  ASSERT_NE(events, std::string::npos) << show(r);
  std::size_t previous = events;
  for (const int rank : {0, 1, 2, 3}) {
    const std::size_t at = r.out.find("  rank " + std::to_string(rank) + ":", previous);
    ASSERT_NE(at, std::string::npos) << rank << "\n" << r.out.substr(events);
    previous = at;
  }
}

//! A failed main job's result line is its summary, never "ok: ...; CHECK FAILED".
TEST(CommandLineTest, FailedRunResultIsTheFailure) {
  TempDir cwd("ranklab_cli_killed");
  const Result r = ranklab({"run", "--no-trace", "--fault", "kill:5@1"}, cwd.path());
  EXPECT_EQ(r.code, 5) << show(r);
  EXPECT_TRUE(has(r, "result: rank 5 failed: killed by fault injection"));
  EXPECT_EQ(r.out.find("CHECK FAILED"), std::string::npos);
  EXPECT_EQ(r.out.find("result: ok"), std::string::npos);
}

}  // namespace
}  // namespace ranklab::testing
