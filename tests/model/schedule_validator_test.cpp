// The schedule validator on hand-broken schedules: each is rejected with one line naming
// the first step that cannot progress (stage, step, micro-batch) and why.
#include "model/schedule_validator.hpp"

#include <gtest/gtest.h>

#include "cli/schedule_dry_run.hpp"
#include "model/schedule_builders.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab {
namespace {

Step transfer(bool send, Payload payload, int m, int peer, int chunk = 0) {
  return communication_step(
      {{.send = send, .payload = payload, .microbatch = m, .chunk = chunk, .peer = peer}});
}
Step fwd(int m) { return compute_step(PassKind::forward, m, 0); }
Step bwd(int m) { return compute_step(PassKind::backward, m, 0); }

// Splits every multi-transfer step of `stage` into one step per transfer, in order: the
// blocking send-then-receive a naive schedule does.
void split_exchanges(Schedule& s, int stage) {
  std::vector<Step> out;
  for (const Step& step : s.stages[static_cast<std::size_t>(stage)]) {
    if (step.compute || step.transfers.size() == 1) {
      out.push_back(step);
      continue;
    }
    for (const Transfer& t : step.transfers) out.push_back(communication_step({t}));
  }
  s.stages[static_cast<std::size_t>(stage)] = out;
}

ScheduleVerdict expect_rejected(const Schedule& s, ScheduleVerdict::Kind kind,
                                const std::string& problem) {
  const ScheduleVerdict verdict = validate_schedule(s, cli::emulator_dry_runner());
  EXPECT_EQ(verdict.kind, kind) << verdict.problem;
  EXPECT_EQ(verdict.problem, problem);
  EXPECT_THROW_MSG(require_valid_schedule(s, cli::emulator_dry_runner()), ScheduleError, problem);
  return verdict;
}

//! 1F1B whose steady-state exchanges are blocking send-then-receive on both neighbours
//! deadlocks under rendezvous sends: the dry run names both stuck steps.
TEST(ScheduleValidatorTest, UnbatchedOneFOneBDeadlocks) {
  Schedule s = build_schedule({.kind = ScheduleKind::one_f_one_b, .pp = 2, .microbatches = 3});
  split_exchanges(s, 0);
  split_exchanges(s, 1);
  EXPECT_NO_THROW(check_schedule(s));  // every static check passes: only the dry run sees it
  const ScheduleVerdict verdict = expect_rejected(
      s, ScheduleVerdict::Kind::deadlock,
      "schedule 1f1b PP2 M3: stage 0, step 7 (send act m2 -> 1): cannot progress: the dry run "
      "under rendezvous sends deadlocks, while stage 1, step 7 (send grad m1 -> 0) waits too");
  EXPECT_EQ(verdict.exit_code(), 3);
  EXPECT_NE(verdict.details.find("wait-for cycles"), std::string::npos) << verdict.details;
}

//! Two stages that disagree on the order of micro-batches: the first receive that would get
//! the wrong activation is named, with the send it would match.
TEST(ScheduleValidatorTest, OutOfOrderReceivesAreMismatched) {
  Schedule s{.spec = {.kind = ScheduleKind::gpipe, .pp = 2, .microbatches = 2}};
  s.stages = {
      {fwd(0), transfer(true, Payload::activation, 0, 1), fwd(1),
       transfer(true, Payload::activation, 1, 1), transfer(false, Payload::gradient, 0, 1), bwd(0),
       transfer(false, Payload::gradient, 1, 1), bwd(1)},
      {transfer(false, Payload::activation, 1, 0), fwd(1),
       transfer(false, Payload::activation, 0, 0), fwd(0), bwd(0),
       transfer(true, Payload::gradient, 0, 0), bwd(1), transfer(true, Payload::gradient, 1, 0)}};
  const ScheduleVerdict verdict = expect_rejected(
      s, ScheduleVerdict::Kind::invalid,
      "schedule gpipe PP2 M2: stage 1, step 0 (recv act m1 <- 0): its 1st activation receive "
      "from stage 0 expects m1, but stage 0's 1st activation send (step 1) carries m0 of its "
      "chunk 0: messages between two stages match in order");
  EXPECT_EQ(verdict.exit_code(), 1);
}

//! Local mistakes are named at their step: a backward before its forward, a pass before
//! its input arrives, a transfer with the wrong neighbour, a pass that never runs, a send
//! that never comes.
TEST(ScheduleValidatorTest, LocalMistakesAreNamedAtTheirStep) {
  const auto one_stage = [](std::vector<Step> steps, int m) {
    return Schedule{.spec = {.kind = ScheduleKind::gpipe, .pp = 1, .microbatches = m},
                    .stages = {std::move(steps)}};
  };
  expect_rejected(one_stage({bwd(0), fwd(0)}, 1), ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP1 M1: stage 0, step 0 (B m0): the backward of m0 runs before "
                  "its forward");
  expect_rejected(one_stage({fwd(0), bwd(0)}, 2), ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP1 M2: stage 0, after its last step (2): the forward of m1 "
                  "never runs");

  Schedule gpipe = build_schedule({.kind = ScheduleKind::gpipe, .pp = 3, .microbatches = 1});
  Schedule wrong_peer = gpipe;
  wrong_peer.stages[2][0] = transfer(false, Payload::activation, 0, 0);
  expect_rejected(wrong_peer, ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP3 M1: stage 2, step 0 (recv act m0 <- 0): the activation of "
                  "m0 comes from stage 1, not stage 0");

  Schedule early = gpipe;
  std::swap(early.stages[1][0], early.stages[1][1]);  // forward, then its receive
  expect_rejected(early, ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP3 M1: stage 1, step 0 (F m0): its activation has not been "
                  "received (no earlier recv from stage 0)");

  Schedule silent = gpipe;
  silent.stages[0].erase(silent.stages[0].begin() + 1);  // stage 0 never sends
  expect_rejected(silent, ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP3 M1: stage 1, step 0 (recv act m0 <- 0): stage 0 never "
                  "sends it (it sends 0 activations to stage 1)");

  Schedule twice = gpipe;
  twice.stages[0].insert(twice.stages[0].begin() + 2, transfer(true, Payload::activation, 0, 1));
  expect_rejected(twice, ScheduleVerdict::Kind::invalid,
                  "schedule gpipe PP3 M1: stage 0, step 2 (send act m0 -> 1): the activation of "
                  "m0 is sent a second time");
}

//! Interleaved chunks are checked against their virtual stages: chunk 1 of stage 0 takes
//! its activations from the last stage, not from stage 1.
TEST(ScheduleValidatorTest, InterleavedChunksUseTheirVirtualStages) {
  Schedule s = build_schedule(
      {.kind = ScheduleKind::interleaved, .pp = 2, .microbatches = 2, .virtual_stages = 2});
  ASSERT_TRUE(validate_schedule(s, cli::emulator_dry_runner()).ok());
  // Stage 0's chunk-1 forward of m0 placed before the receive that brings its input.
  std::vector<Step>& stage0 = s.stages[0];
  const auto f01 = std::find(stage0.begin(), stage0.end(), compute_step(PassKind::forward, 0, 1));
  ASSERT_NE(f01, stage0.end());
  const Step moved = *f01;
  stage0.erase(f01);
  stage0.insert(stage0.begin() + 1, moved);
  expect_rejected(s, ScheduleVerdict::Kind::invalid,
                  "schedule interleaved PP2 M2 V2: stage 0, step 1 (F m0 c1): its activation has "
                  "not been received (no earlier recv from stage 1)");
}

}  // namespace
}  // namespace ranklab
