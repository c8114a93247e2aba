// After a failure, `--threads 2` writes the same trace every time, and the same events as
// one thread (traces/FORMAT.md, Determinism): a failure settles every rank's operations
// the same way whichever thread ran first.
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

// The event lines of a trace (the header says how many threads ran), without the Lamport
// clocks, which the contract lets differ between thread counts.
std::string events_without_clocks(const std::string& trace) {
  const std::string events = trace.substr(trace.find('\n') + 1);
  return std::regex_replace(events, std::regex(R"(,"lamport":\d+)"), "");
}

//! Kill faults, a crash, a mismatch: five runs with two threads give byte-identical traces,
//! whose events are one thread's.
TEST(CliFailureTraceTest, TwoThreadsSameTraceEveryTimeAsOneThread) {
  struct Case {
    std::vector<std::string> args;
    int code;
  };
  const Case cases[] = {
      {{"run", "--fault", "kill:1@3"}, 5},
      {{"run", "--scenario", "allreduce-death"}, 5},
      {{"run", "--scenario", "crash"}, 5},
      {{"run", "--scenario", "ring", "--fault", "kill:2@1"}, 5},
      {{"run", "--scenario", "tp-skip-barrier"}, 4},
      {{"run", "--scenario", "collective-mismatch"}, 4},
  };
  TempDir dir("ranklab_cli_failure_trace");
  for (const Case& c : cases) {
    std::string what;
    for (const auto& a : c.args) what += a + " ";
    auto run = [&](const std::string& threads, const std::string& name) {
      std::vector<std::string> args = c.args;
      args.insert(args.end(), {"--threads", threads, "--trace", (dir / name).string()});
      const Result r = ranklab(args);
      EXPECT_EQ(r.code, c.code) << what << show(r);
      return read_file(dir / name);
    };
    const std::string one = run("1", "one.jsonl");
    const std::string two = run("2", "two.jsonl");
    ASSERT_FALSE(two.empty()) << what;
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(run("2", "again.jsonl") == two) << what << "--threads 2: run " << i + 2
                                                  << " wrote another trace";
    }
    EXPECT_EQ(events_without_clocks(two), events_without_clocks(one)) << what;
  }
}

}  // namespace
}  // namespace ranklab::testing
