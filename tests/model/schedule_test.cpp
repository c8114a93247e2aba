// Pipeline schedules as data: the builders' compute orders, the communication the round
// simulation inserts, the messages they count, and the one-line errors of bad specs.
#include "model/schedule.hpp"

#include <gtest/gtest.h>

#include "cli/schedule_dry_run.hpp"
#include "model/schedule_builders.hpp"
#include "model/schedule_validator.hpp"
#include "model/step_options.hpp"
#include "tests/support/expect_throw_msg.hpp"

namespace ranklab {
namespace {

ScheduleSpec spec(ScheduleKind kind, int pp, int m, int v = 1) {
  return {.kind = kind, .pp = pp, .microbatches = m, .virtual_stages = v};
}

// The valid specs of a grid wider than the run tests': PP up to 8, M up to 16, V up to 3.
std::vector<ScheduleSpec> valid_specs() {
  std::vector<ScheduleSpec> out;
  for (const ScheduleKind kind :
       {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
    for (const int pp : {1, 2, 3, 4, 8}) {
      for (const int m : {1, 2, 3, 4, 6, 8, 16}) {
        for (const int v : {1, 2, 3}) {
          const ScheduleSpec s = spec(kind, pp, m, v);
          try {
            s.validate();
          } catch (const UsageError&) {
            continue;
          }
          out.push_back(s);
        }
      }
    }
  }
  return out;
}

//! Every built-in schedule of the grid passes the validator (static checks and the dry run
//! under rendezvous sends), and sends each micro-batch across each of the PP·V-1 virtual
//! stage boundaries once forward and once backward.
TEST(ScheduleTest, EveryBuiltInScheduleIsValid) {
  const std::vector<ScheduleSpec> specs = valid_specs();
  ASSERT_GT(specs.size(), 100u);
  for (const ScheduleSpec& s : specs) {
    const Schedule schedule = build_schedule(s);
    const ScheduleVerdict verdict = validate_schedule(schedule, cli::emulator_dry_runner());
    EXPECT_TRUE(verdict.ok()) << verdict.problem;
    const int boundaries = s.pp == 1 ? 0 : s.virtual_count() - 1;
    EXPECT_EQ(verdict.messages, 2 * s.microbatches * boundaries) << s.describe();
    int sent = 0;
    int received = 0;
    for (const StageMessages& m : schedule.messages()) {
      sent += m.sent;
      received += m.received;
    }
    EXPECT_EQ(sent, received) << s.describe();
    EXPECT_EQ(sent, verdict.messages) << s.describe();
  }
}

//! The compute orders are the published ones: GPipe all forwards then all backwards; 1F1B
//! PP-p-1 warm-up forwards; interleaved 2(PP-p-1) + (V-1)·PP warm-up forwards, all of them
//! when M = PP.
TEST(ScheduleTest, ComputeOrdersFollowThePapers) {
  const Schedule gpipe = build_schedule(spec(ScheduleKind::gpipe, 2, 3));
  EXPECT_EQ(gpipe.compute_order(0), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(gpipe.compute_order(1), "F0 F1 F2 B0 B1 B2");
  const Schedule one = build_schedule(spec(ScheduleKind::one_f_one_b, 4, 6));
  EXPECT_EQ(one.compute_order(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(one.compute_order(2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(one.compute_order(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Activations kept: GPipe all M, 1F1B PP-p on stage p.
  EXPECT_EQ(gpipe.peak_in_flight(0), 3);
  EXPECT_EQ(one.peak_in_flight(0), 4);
  EXPECT_EQ(one.peak_in_flight(3), 1);
  // Fewer micro-batches than the warm-up: the warm-up is cut to M.
  EXPECT_EQ(build_schedule(spec(ScheduleKind::one_f_one_b, 4, 2)).compute_order(0), "F0 F1 B0 B1");
  const Schedule inter = build_schedule(spec(ScheduleKind::interleaved, 2, 4, 2));
  // Stage 0: 2 + 2 warm-up forwards (groups of 2 micro-batches through chunk 0, then 1).
  EXPECT_EQ(inter.compute_order(0),
            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 "
            "B1.0 B2.1 B3.1 B2.0 B3.0");
  EXPECT_EQ(inter.compute_order(1),
            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 "
            "B2.1 F3.1 B3.1 B2.0 B3.0");
  // M = PP: every pass is warm-up (Megatron's all_warmup_microbatches), on every stage.
  const Schedule all = build_schedule(spec(ScheduleKind::interleaved, 2, 2, 2));
  for (const int p : {0, 1}) {
    EXPECT_EQ(all.compute_order(p), "F0.0 F1.0 F0.1 F1.1 B0.1 B1.1 B0.0 B1.0") << "stage " << p;
  }
}

//! With one micro-batch, GPipe's rounds are the seed's step call for call, so the seed
//! schedule (built by hand) and gpipe M=1 are the same data.
TEST(ScheduleTest, SeedIsGpipeWithOneMicrobatch) {
  for (const int pp : {1, 2, 3, 4}) {
    const Schedule seed = build_schedule(spec(ScheduleKind::seed, pp, 1));
    const Schedule gpipe = build_schedule(spec(ScheduleKind::gpipe, pp, 1));
    EXPECT_EQ(seed.stages, gpipe.stages) << "PP" << pp;
  }
  // Stage 1 of 3: receive, forward, send, receive the gradient, backward, send it back.
  const Schedule seed = build_schedule(spec(ScheduleKind::seed, 3, 1));
  std::vector<std::string> steps;
  for (const Step& s : seed.stages[1]) steps.push_back(describe(s, 1));
  EXPECT_EQ(steps, (std::vector<std::string>{"recv act m0 <- 0", "F m0", "send act m0 -> 2",
                                             "recv grad m0 <- 2", "B m0", "send grad m0 -> 0"}));
}

//! In the steady state of 1F1B a stage's send and its neighbour's send travel in one
//! communication step each (Megatron's send_forward_recv_backward), never alone.
TEST(ScheduleTest, SteadyStateExchangesAreBatched) {
  const Schedule s = build_schedule(spec(ScheduleKind::one_f_one_b, 2, 4));
  std::vector<std::string> steps;
  for (const Step& step : s.stages[0]) steps.push_back(describe(step, 1));
  EXPECT_NE(std::find(steps.begin(), steps.end(), "send act m2 -> 1, recv grad m1 <- 1"),
            steps.end());
  for (const Step& step : s.stages[1]) steps.push_back(describe(step, 1));
  EXPECT_NE(std::find(steps.begin(), steps.end(), "send grad m1 -> 0, recv act m2 <- 0"),
            steps.end());
}

//! Interleaved 1F1B exchanges once per steady iteration, after its forward and its backward
//! (Megatron's send_forward_backward_recv_forward_backward): stage 0 of PP2 M4 V2 runs F m2
//! c0 then B m0 c1 with no communication between them, then sends both outputs in one step.
TEST(ScheduleTest, InterleavedSteadyIterationsExchangeOnce) {
  const Schedule s = build_schedule(spec(ScheduleKind::interleaved, 2, 4, 2));
  std::vector<std::string> steps;
  for (const Step& step : s.stages[0]) steps.push_back(describe(step, 2));
  const auto at = std::find(steps.begin(), steps.end(), "F m2 c0");
  ASSERT_NE(at, steps.end());
  ASSERT_LT(at + 2, steps.end());
  EXPECT_EQ(at[1], "B m0 c1");
  EXPECT_EQ(at[2].rfind("send act m2 c0 -> 1, send grad m0 c1 -> 1", 0), 0u) << at[2];
}

//! Compute orders that cannot run (a backward before its forward) are refused by
//! with_communication with the stage and pass it stopped at.
TEST(ScheduleTest, InfeasibleOrdersAreRefused) {
  const ScheduleSpec s = spec(ScheduleKind::gpipe, 2, 1);
  const std::vector<std::vector<Pass>> orders = {
      {{PassKind::backward, 0, 0}, {PassKind::forward, 0, 0}},
      {{PassKind::forward, 0, 0}, {PassKind::backward, 0, 0}}};
  EXPECT_THROW_MSG(with_communication(s, orders), UsageError,
                   "the compute orders cannot run: no stage's next pass has its input (stage 0 "
                   "waits at B m0)");
}

//! Bad combinations give one line naming the flag and the rule.
TEST(ScheduleTest, BadSpecsAreOneLine) {
  EXPECT_THROW_MSG(spec(ScheduleKind::seed, 2, 4).validate(), UsageError,
                   "--schedule seed runs the whole batch at once: --microbatches 4 needs gpipe");
  EXPECT_THROW_MSG(spec(ScheduleKind::one_f_one_b, 2, 4, 2).validate(), UsageError,
                   "--virtual-stages 2 needs --schedule interleaved");
  EXPECT_THROW_MSG(spec(ScheduleKind::interleaved, 4, 6, 2).validate(), UsageError,
                   "--microbatches 6 must be a multiple of PP");
  EXPECT_THROW_MSG(spec(ScheduleKind::interleaved, 4096, 4096, 4).validate(), UsageError,
                   "PP*M*V = 4096*4096*4 = 67108864 passes per direction is too large");
  EXPECT_THROW_MSG(spec(ScheduleKind::gpipe, 2, 0).validate(), UsageError,
                   "--microbatches must be positive, got 0");
  const ModelShape shape{.batch = 8, .layers = 4};
  EXPECT_THROW_MSG(spec(ScheduleKind::gpipe, 2, 3).validate(shape), UsageError,
                   "--microbatches 3 does not divide the batch B=8");
  EXPECT_THROW_MSG(spec(ScheduleKind::interleaved, 2, 2, 4).validate(shape), UsageError,
                   "L=4 is not divisible by PP*V=2*4");
  EXPECT_THROW_MSG(parse_schedule_kind("zigzag"), UsageError,
                   "unknown schedule 'zigzag': expected seed, gpipe, 1f1b or interleaved");
  EXPECT_EQ(parse_schedule_kind("1f1b"), ScheduleKind::one_f_one_b);
}

//! Every schedule and TP collective reads back from its name (one table each); --tp-comm
//! also takes the collective's own name, all_reduce.
TEST(ScheduleTest, NamesReadBack) {
  for (const ScheduleKind kind : {ScheduleKind::seed, ScheduleKind::gpipe,
                                  ScheduleKind::one_f_one_b, ScheduleKind::interleaved}) {
    EXPECT_EQ(parse_schedule_kind(to_string(kind)), kind) << to_string(kind);
  }
  EXPECT_EQ(to_string(ScheduleKind::interleaved), "interleaved");
  for (const TpComm comm : {TpComm::all_reduce, TpComm::sequence_parallel}) {
    EXPECT_EQ(parse_tp_comm(to_string(comm)), comm) << to_string(comm);
  }
  EXPECT_EQ(to_string(TpComm::sequence_parallel), "sp");
  EXPECT_EQ(parse_tp_comm("all_reduce"), TpComm::all_reduce);
  EXPECT_THROW_MSG(parse_tp_comm("ring"), UsageError,
                   "unknown --tp-comm 'ring': expected allreduce");
}

}  // namespace
}  // namespace ranklab
