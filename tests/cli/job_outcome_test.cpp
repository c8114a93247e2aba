// A job's report is rendered when asked for, and each part apart: a scenario's JSON holds an
// entry per rank, so a run that prints only the text (every `ranklab run` without --json)
// must not build it, and explore builds neither for a passing schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "cli/job.hpp"
#include "tests/support/cluster_params.hpp"

namespace ranklab::cli {
namespace {

using ranklab::testing::contains;

JobOutcome run_scenario(const std::string& name, int world) {
  RunFlags flags;
  flags.scenario = name;
  flags.cluster.world = world;
  const std::unique_ptr<Job> job = make_job(flags);
  return job->run(job->options());
}

// Wraps a renderer in a counter of its calls.
template <typename Render>
Render counted(Render inner, int& calls) {
  return [inner = std::move(inner), &calls](const JobOutcome& o) {
    ++calls;
    return inner(o);
  };
}

TEST(JobOutcomeTest, ScenarioTextDoesNotBuildItsJson) {
  JobOutcome out = run_scenario("allreduce", 64);
  int json_calls = 0;
  ASSERT_TRUE(out.render_json);
  out.render_json = counted(out.render_json, json_calls);
  EXPECT_TRUE(contains(out.text(), "allreduce")) << out.text();
  EXPECT_EQ(json_calls, 0) << "text() rendered the JSON too";
  const nlohmann::ordered_json& json = out.json();
  EXPECT_EQ(json_calls, 1);
  EXPECT_EQ(json.at("world").get<int>(), 64) << json.dump(2);
  EXPECT_EQ(&out.json(), &json) << "json() rendered twice";
  EXPECT_EQ(json_calls, 1);
}

TEST(JobOutcomeTest, NothingRenderedUntilAskedAndThenOnce) {
  JobOutcome out;
  int text_calls = 0;
  int json_calls = 0;
  out.render_text = counted(std::function<std::string(const JobOutcome&)>(
                                [](const JobOutcome& o) { return "verdict: " + o.verdict; }),
                            text_calls);
  out.render_json = counted(
      std::function<nlohmann::ordered_json(const JobOutcome&)>(
          [](const JobOutcome& o) { return nlohmann::ordered_json{{"v", o.verdict}}; }),
      json_calls);
  out.verdict = "ok";
  EXPECT_EQ(text_calls + json_calls, 0);
  EXPECT_EQ(out.text(), "verdict: ok");
  EXPECT_EQ(out.text(), "verdict: ok");
  EXPECT_EQ(text_calls, 1);
  EXPECT_EQ(json_calls, 0);
  EXPECT_EQ(out.json().at("v"), "ok");
  EXPECT_EQ(json_calls, 1);
}

TEST(JobOutcomeTest, NoRendererGivesEmptyReports) {
  const JobOutcome out;
  EXPECT_EQ(out.text(), "");
  EXPECT_TRUE(out.json().is_null());
}

// A scenario nobody asked a trace of records none (a million ranks' two events each were a
// tenth of the run's memory), and its report is the one the recorded run prints: the
// fabric's own ring of recent events stands in for the sink's. Failing scenarios too, whose
// reports list each rank's last events, under both thread counts.
class UnrecordedScenarioTest
    : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(UnrecordedScenarioTest, RecordsNoTraceAndReportsTheSame) {
  const auto& [name, threads] = GetParam();
  RunFlags flags;
  flags.scenario = name;
  flags.cluster.threads = threads;
  const std::unique_ptr<Job> job = make_job(flags);
  JobOutcome recorded = job->run(job->options());
  JobOutcome unrecorded = job->run_unrecorded(job->options());
  const auto events = [](const Trace& trace) {
    std::size_t n = 0;
    for (const auto& rank : trace.ranks) n += rank.size();
    return n;
  };
  EXPECT_GT(events(recorded.trace), 0u);
  EXPECT_EQ(events(unrecorded.trace), 0u);
  EXPECT_EQ(unrecorded.exit_code, recorded.exit_code);
  EXPECT_EQ(unrecorded.text(), recorded.text());
  EXPECT_EQ(unrecorded.json().dump(), recorded.json().dump());
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, UnrecordedScenarioTest,
    ::testing::Combine(::testing::Values("allreduce", "send-send", "missing-barrier",
                                         "collective-mismatch", "crash", "tag-mismatch"),
                       ::testing::Values(1, 2)),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param);
      std::replace(name.begin(), name.end(), '-', '_');
      return name + "_t" + std::to_string(std::get<1>(param_info.param));
    });

}  // namespace
}  // namespace ranklab::cli
