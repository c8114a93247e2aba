// `ranklab run --steps N --lr LR` end to end: --steps 1 is the seed's run byte for byte,
// N steps print a row per step and check every one, --json carries the losses, --save
// writes the last step's set, and bad values are one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/cli_support.hpp"

namespace ranklab::testing {
namespace {

// The report without its timing line and the trace's path: what must not change.
std::string without_time_and_trace(const std::string& out) {
  std::istringstream in(out);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("time: ", 0) == 0 || line.rfind("trace: ", 0) == 0) continue;
    kept += line + "\n";
  }
  return kept;
}

// The loss column of the per-step table ("   3   0.27491796 ...").
std::vector<double> step_losses(const std::string& out) {
  std::istringstream in(out);
  std::vector<double> losses;
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("training: ", 0) == 0) {
      std::getline(in, line);  // the column names
      table = true;
      continue;
    }
    if (!table) continue;
    std::istringstream row(line);
    int step = 0;
    double loss = 0.0;
    if (!(row >> step >> loss)) break;
    losses.push_back(loss);
  }
  return losses;
}

//! --steps 1 is the default: the same report and the same trace, byte for byte.
TEST(TrainStepsCliTest, OneStepIsTheSeedRunByteForByte) {
  TempDir dir("ranklab_steps");
  const Result seed = ranklab({"run", "--trace", (dir / "seed.jsonl").string()});
  const Result one = ranklab({"run", "--steps", "1", "--trace", (dir / "one.jsonl").string()});
  ASSERT_EQ(seed.code, 0) << show(seed);
  ASSERT_EQ(one.code, 0) << show(one);
  EXPECT_EQ(without_time_and_trace(seed.out), without_time_and_trace(one.out));
  EXPECT_EQ(read_file(dir / "seed.jsonl"), read_file(dir / "one.jsonl"));
  EXPECT_EQ(seed.out.find("training: "), std::string::npos);
  EXPECT_EQ(read_file(dir / "one.jsonl").find(", step 1\""), std::string::npos);
}

//! N steps: a row per step, each checked, the loss going down, every rank's worst step
//! within tolerance (weights included), N steps' traffic, and the trace header says so.
TEST(TrainStepsCliTest, ManyStepsReportEveryStep) {
  TempDir dir("ranklab_steps");
  const Result r = ranklab({"run", "--steps", "4", "--lr", "0.2", "--trace",
                            (dir / "t.jsonl").string()});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_TRUE(has(r, "training: 4 steps of SGD, lr 0.2 "));
  EXPECT_TRUE(has(r, "weights rel"));
  EXPECT_TRUE(has(r, "loss per replica (last stage, step 4)"));
  EXPECT_TRUE(has(r, "expected traffic (the seed's algorithm, rank by rank): matches"));
  EXPECT_TRUE(has(r, "start-up and 4 steps on 8 ranks"));
  EXPECT_TRUE(has(r, "result: ok: 8 ranks finished; every check passed"));
  const std::vector<double> losses = step_losses(r.out);
  ASSERT_EQ(losses.size(), 4U) << r.out;
  for (std::size_t s = 1; s < losses.size(); ++s) EXPECT_LT(losses[s], losses[s - 1]) << s;
  const std::string trace = read_file(dir / "t.jsonl");
  EXPECT_NE(trace.substr(0, trace.find('\n')).find("\"steps\":4"), std::string::npos);
  // Every operation names its step in its label; one step's labels name none.
  EXPECT_NE(trace.find("\"label\":\"DP all_reduce of the w1 gradient of local layer 0, step 4\""),
            std::string::npos);
  EXPECT_NE(trace.find("\"label\":\"PP send of micro-batch 0 activation, chunk 0, step 1\""),
            std::string::npos);
  EXPECT_EQ(read_file(dir / "t.jsonl").find(", step 5\""), std::string::npos);
}

//! --json: the steps, the learning rate and every step's losses and verdict.
TEST(TrainStepsCliTest, JsonHasEveryStep) {
  const Result r = ranklab({"run", "--steps", "3", "--schedule", "1f1b", "--microbatches", "4",
                            "--json", "--no-trace"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["training"]["steps"], 3);
  EXPECT_EQ(j["training"]["lr"], 0.05);
  const auto& steps = j["training"]["per_step"];
  ASSERT_EQ(steps.size(), 3U);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    EXPECT_EQ(steps[s]["step"], s + 1);
    EXPECT_TRUE(steps[s]["ok"].get<bool>());
    EXPECT_EQ(steps[s]["losses"].size(), 2U);
    if (s > 0) {
      EXPECT_LT(steps[s]["loss"].get<double>(), steps[s - 1]["loss"].get<double>());
    }
  }
  EXPECT_TRUE(j["ranks"][0]["errors"].contains("weights"));
  EXPECT_TRUE(j["checks_ok"].get<bool>());
  // One step has none of it: the seed's JSON.
  const Result one = ranklab({"run", "--json", "--no-trace"});
  EXPECT_FALSE(nlohmann::json::parse(one.out).contains("training"));
}

//! --save after N steps writes the set of the last step (the weights it started from, its
//! gradients and losses): --init-from then runs that step again and matches it.
TEST(TrainStepsCliTest, SaveWritesTheLastStep) {
  TempDir dir("ranklab_steps");
  const Result trained = ranklab({"run", "--steps", "3", "--save", (dir / "set").string(),
                                  "--no-trace", "--json"});
  ASSERT_EQ(trained.code, 0) << show(trained);
  const Result again = ranklab({"run", "--init-from", (dir / "set").string(), "--no-trace",
                                "--json"});
  ASSERT_EQ(again.code, 0) << show(again);
  const auto a = nlohmann::json::parse(trained.out);
  const auto b = nlohmann::json::parse(again.out);
  const auto& last = a["training"]["per_step"][2]["losses"];
  ASSERT_EQ(b["losses"].size(), 2U);
  for (std::size_t d = 0; d < 2; ++d) {
    EXPECT_EQ(b["losses"][d]["loss"].get<double>(), last[d].get<double>()) << "replica " << d;
    EXPECT_EQ(b["losses"][d]["golden"].get<double>(), last[d].get<double>()) << "replica " << d;
  }
  EXPECT_TRUE(b["ranks"][0]["errors"].contains("golden_grads"));
}

//! A message corrupted in step 3 fails that step's check, not the two before it: exit 2,
//! and the result names the step.
TEST(TrainStepsCliTest, CorruptionFailsItsStep) {
  const Result r = ranklab({"run", "--steps", "3", "--no-trace", "--fault", "corrupt:0->2#2"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_EQ(step_losses(r.out).size(), 2U) << r.out;  // steps 1 and 2 read; step 3's is inf
  EXPECT_NE(r.out.find("  ok\n   2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ok\n   3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  FAIL\n(loss: "), std::string::npos) << r.out;
  EXPECT_TRUE(has(r, "differ from the dense reference (from step 3)"));
}

//! Every loss in the step table has 9 significant digits: trailing zeros were dropped, so
//! "0.27785103" stood beside "0.277851045" (issue 28 §3).
TEST(TrainStepsCliTest, StepLossesHaveOnePrecision) {
  const Result r = ranklab({"run", "--steps", "5", "--no-trace"});
  ASSERT_EQ(r.code, 0) << show(r);
  std::istringstream in(r.out.substr(r.out.find("\nstep ")));
  std::string line;
  std::getline(in, line);  // the empty line before the column names
  std::getline(in, line);  // the column names
  int rows = 0;
  while (std::getline(in, line) && !line.starts_with("(loss")) {
    std::istringstream cells(line);
    std::string step, loss, dense;
    cells >> step >> loss >> dense;
    for (const std::string& cell : {loss, dense}) {
      EXPECT_EQ(cell.size(), 11u) << "'" << cell << "' in\n" << r.out;  // 0.ddddddddd
    }
    ++rows;
  }
  EXPECT_EQ(rows, 5) << r.out;
}

//! A learning rate that makes the weights overflow: the losses and gradients turn NaN in
//! both runs, and NaN compared with NaN is no match. It ended "every check passed", exit 0.
TEST(TrainStepsCliTest, DivergedTrainingFailsTheChecks) {
  const Result r = ranklab({"run", "--steps", "6", "--lr", "1e30", "--no-trace"});
  EXPECT_EQ(r.code, 2) << show(r);
  EXPECT_EQ(r.out.find("every check passed"), std::string::npos) << show(r);
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << show(r);
}

//! Bad values: one line each, exit 1.
TEST(TrainStepsCliTest, BadStepsAndLearningRates) {
  expect_usage_error(ranklab({"run", "--steps", "0"}), "--steps 0: a run trains at least 1 step");
  expect_usage_error(ranklab({"run", "--steps", "-3"}), "--steps -3");
  expect_usage_error(ranklab({"run", "--lr", "0.1"}), "--lr needs --steps > 1");
  expect_usage_error(ranklab({"run", "--steps", "2", "--lr", "0"}), "--lr 0: the learning rate");
  expect_usage_error(ranklab({"run", "--steps", "2", "--lr", "nan"}), "--lr nan");
  expect_usage_error(ranklab({"run", "--steps", "x"}), "--steps");
}

}  // namespace
}  // namespace ranklab::testing
