// The catalogue of TP/PP/DP bugs (cli/scenarios/), in process: every bug is detected under
// every policy and thread count with the culprit its entry promises (races: by explore,
// under both strategies), and every fixed twin and correct scenario passes 200 random and
// 200 PCT schedules of explore with no false alarm.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cli/explore.hpp"
#include "cli/job.hpp"
#include "cli/scenarios.hpp"
#include "collectives/cluster.hpp"
#include "tests/support/cluster_params.hpp"

namespace ranklab::cli {
namespace {

using ranklab::testing::contains;

std::unique_ptr<Job> scenario_job(const std::string& name) {
  RunFlags flags;
  flags.scenario = name;
  return make_job(flags);
}

std::vector<std::string> names(bool bugs) {
  std::vector<std::string> out;
  for (const Scenario& s : scenarios()) {
    if (s.twin.empty()) continue;
    if (s.is_bug == bugs) out.push_back(s.name);
  }
  return out;
}

// The scenarios that must pass every schedule: the fixed twins and the correct basics.
std::vector<std::string> passing() {
  std::vector<std::string> out = names(false);
  for (const Scenario& s : scenarios()) {
    if (s.twin.empty() && s.expect.status == RunStatus::ok && !s.expect.needs_exploration) {
      out.push_back(s.name);
    }
  }
  return out;
}

std::string test_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) c = c == '-' ? '_' : c;
  return out;
}

//! The catalogue has at least 12 bugs, each with a fixed twin that names it back, and
//! every bug states what its report says.
TEST(CatalogueTest, TwelveBugsEachWithAFixedTwin) {
  const std::vector<std::string> bugs = names(true);
  EXPECT_GE(bugs.size(), 12u);
  std::set<CulpritKind> kinds;
  for (const std::string& name : bugs) {
    const Scenario& bug = find_scenario(name);
    const Scenario& twin = find_scenario(bug.twin);
    EXPECT_FALSE(twin.is_bug) << name;
    EXPECT_EQ(twin.twin, bug.name);
    EXPECT_EQ(twin.default_world, bug.default_world);
    EXPECT_NE(bug.expect.culprit, CulpritKind::none) << name;
    EXPECT_EQ(twin.expect.status, RunStatus::ok) << twin.name;
    kinds.insert(bug.expect.culprit);
  }
  EXPECT_GE(kinds.size(), 8u) << "the catalogue covers many kinds of report";
}

struct BugCase {
  std::string name;
  std::string policy;
  int threads = 1;
};

class CatalogueBugTest : public ::testing::TestWithParam<BugCase> {};

//! A bug is detected under this policy and thread count: the run's status and culprit kind
//! are the entry's, the culprit names first one of the entry's ranks, and its text names a
//! rank, a group and a call.
TEST_P(CatalogueBugTest, DetectedWithTheRightCulprit) {
  const BugCase& c = GetParam();
  const Scenario& s = find_scenario(c.name);
  const std::unique_ptr<Job> job = scenario_job(c.name);
  if (s.expect.needs_exploration) {
    // A race passes any single run; explore must find it under either strategy.
    const ExploreOptions options{.runs = 200,
                                 .strategy = c.policy.starts_with("pct") ? Strategy::pct
                                                                         : Strategy::random,
                                 .jobs = 2,
                                 .shrink = false};
    const ExploreResult result = explore(*job, options);
    ASSERT_TRUE(result.failure.has_value()) << c.name << " passed " << options.runs << " schedules";
    EXPECT_EQ(result.failure->verdict.kind, "nondeterminism");
    return;
  }
  ClusterOptions options = job->options();
  options.policy = SchedulePolicy::parse(c.policy);
  options.threads = c.threads;
  const JobOutcome out = job->run(options);
  const Culprit& culprit = out.report.culprit;
  SCOPED_TRACE(out.text());
  EXPECT_EQ(out.report.status, s.expect.status);
  EXPECT_EQ(culprit.kind, s.expect.culprit);
  ASSERT_FALSE(culprit.ranks.empty());
  const auto& allowed = s.expect.ranks;
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), culprit.ranks.front()), allowed.end())
      << "the culprit blames rank " << culprit.ranks.front() << " first";
  EXPECT_TRUE(contains(culprit.text, "rank " + std::to_string(culprit.ranks.front())));
  const bool names_group = culprit.text.find('[') != std::string::npos ||
                           culprit.text.find("world") != std::string::npos;
  EXPECT_TRUE(names_group) << culprit.text;
  constexpr const char* kCalls[] = {"send", "recv", "all_reduce", "barrier"};
  const bool names_call = std::any_of(std::begin(kCalls), std::end(kCalls), [&](const char* call) {
    return culprit.text.find(call) != std::string::npos;
  });
  EXPECT_TRUE(names_call) << culprit.text;
}

std::vector<BugCase> bug_cases() {
  std::vector<BugCase> out;
  for (const std::string& name : names(true)) {
    if (find_scenario(name).expect.needs_exploration) {
      // Explore's two strategies (each schedule on one thread).
      for (const char* strategy : {"random", "pct"}) out.push_back({name, strategy, 1});
      continue;
    }
    for (const char* policy : {"rank-order", "random:7", "pct:11:3"}) {
      for (int threads : {1, 2}) out.push_back({name, policy, threads});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Bugs, CatalogueBugTest, ::testing::ValuesIn(bug_cases()),
                         [](const auto& p) {
                           return test_name(p.param.name) + "_" +
                                  ranklab::testing::policy_name(p.param.policy) + "_t" +
                                  std::to_string(p.param.threads);
                         });

class PassingScenarioTest : public ::testing::TestWithParam<std::string> {};

//! A fixed twin or correct scenario passes 200 random and 200 PCT schedules: no deadlock,
//! no failure, and the same results and per-rank traces as rank order (no false alarm).
TEST_P(PassingScenarioTest, TwoHundredSchedulesOfEachStrategy) {
  const std::unique_ptr<Job> job = scenario_job(GetParam());
  for (const Strategy strategy : {Strategy::random, Strategy::pct}) {
    const ExploreResult result = explore(*job, {.runs = 200, .strategy = strategy, .jobs = 2});
    EXPECT_FALSE(result.failure.has_value())
        << GetParam() << ": " << result.failure->policy.to_string() << ": "
        << result.failure->verdict.why << "\n"
        << result.failure->outcome.text();
    EXPECT_EQ(result.executed, 200);
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, PassingScenarioTest, ::testing::ValuesIn(passing()),
                         [](const auto& p) { return test_name(p.param); });

//! Explore reports the lowest failing schedule whatever the number of jobs, and its shrunk
//! schedule fails the same way when run again.
TEST(ExploreTest, FirstFailureIndependentOfJobsAndShrunkReproduces) {
  const std::unique_ptr<Job> job = scenario_job("wildcard-sum");
  std::vector<int> first;
  for (int jobs : {1, 2, 3}) {
    const ExploreResult r = explore(*job, {.runs = 100, .jobs = jobs, .shrink = jobs == 1});
    ASSERT_TRUE(r.failure.has_value());
    first.push_back(r.failure->index);
    if (jobs != 1) continue;
    ASSERT_TRUE(r.shrunk.has_value());
    const ShrunkSchedule& s = *r.shrunk;
    EXPECT_LE(s.policy.preemptions.size(), s.preemptions_before);
    EXPECT_GE(s.policy.preemptions.size(), 1u) << "rank order itself passes";
    ClusterOptions options = job->options();
    options.policy = SchedulePolicy::parse(s.policy.to_string());
    const JobOutcome again = job->run(options);
    const auto verdict = judge(again, &r.reference);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->kind, "nondeterminism");
    EXPECT_EQ(again.results, s.outcome.results);
    EXPECT_EQ(again.trace.ranks, s.outcome.trace.ranks);
  }
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(first[0], first[2]);
}

// A job whose deadlock depends on the schedule: rank 0 receives from any source, then from
// rank 2. If rank 2's message matched the first receive, the second waits forever (rank 1's
// message is left over); rank order lets rank 1 send first, so it passes.
class RacyDeadlockJob final : public Job {
 public:
  RacyDeadlockJob() { options_.world_size = 3; }
  std::string describe() const override { return "racy deadlock"; }
  const ClusterOptions& options() const override { return options_; }
  JobOutcome run(ClusterOptions options) const override {
    auto sink = std::make_shared<MemorySink>();
    options.trace_sink = sink;
    Cluster cluster(std::move(options));
    JobOutcome out;
    out.report = cluster.run([](Communicator& world) {
      std::int32_t v = world.rank();
      if (world.rank() == 0) {
        world.recv(std::span(&v, 1), kAnySource, 0);
        world.recv(std::span(&v, 1), 2, 0);
      } else {
        world.send(std::span<const std::int32_t>(&v, 1), 0, 0);
      }
    });
    out.exit_code = exit_code(out.report.status);
    out.verdict = out.report.summary;
    out.trace = sink->trace();
    return out;
  }

 private:
  ClusterOptions options_;
};

//! A deadlock only some schedules reach is found by both strategies and shrunk to one
//! preemption of rank order, and that shrunk schedule deadlocks the same way when run again
//! (rank order itself passes, so one is the minimum).
TEST(ExploreTest, ScheduleDependentDeadlockShrinksToOnePreemption) {
  const RacyDeadlockJob job;
  for (const Strategy strategy : {Strategy::random, Strategy::pct}) {
    const ExploreResult r = explore(job, {.runs = 200, .strategy = strategy, .jobs = 2});
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_GT(r.failure->index, 0) << "rank order passes";
    EXPECT_EQ(r.failure->verdict.kind, "deadlock");
    EXPECT_EQ(r.failure->verdict.culprit, "source-mismatch");
    ASSERT_TRUE(r.shrunk.has_value());
    EXPECT_EQ(r.shrunk->policy.preemptions.size(), 1u) << r.shrunk->policy.to_string();
    ClusterOptions options = job.options();
    options.policy = SchedulePolicy::parse(r.shrunk->policy.to_string());
    const JobOutcome again = job.run(options);
    EXPECT_EQ(again.report.status, RunStatus::deadlock);
    EXPECT_EQ(again.report.details, r.shrunk->outcome.report.details);
  }
}

}  // namespace
}  // namespace ranklab::cli
