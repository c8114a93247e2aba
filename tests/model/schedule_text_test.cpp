// Schedule files: every built-in schedule survives format -> parse unchanged, and a bad
// line is one error naming SOURCE:LINE.
#include "model/schedule_text.hpp"

#include <gtest/gtest.h>

#include "cli/schedule_dry_run.hpp"
#include "model/schedule_builders.hpp"
#include "model/schedule_validator.hpp"
#include "tests/support/expect_throw_msg.hpp"
#include "tests/support/temp_dir.hpp"

namespace ranklab {
namespace {

//! format_schedule and parse_schedule are inverses on every built-in schedule, chunks and
//! batched transfers included, and the file round trip is the same.
TEST(ScheduleTextTest, RoundTripsEveryBuiltInSchedule) {
  for (const ScheduleSpec& spec :
       {ScheduleSpec{.kind = ScheduleKind::seed, .pp = 3},
        ScheduleSpec{.kind = ScheduleKind::gpipe, .pp = 2, .microbatches = 4},
        ScheduleSpec{.kind = ScheduleKind::one_f_one_b, .pp = 4, .microbatches = 8},
        ScheduleSpec{
            .kind = ScheduleKind::interleaved, .pp = 2, .microbatches = 4, .virtual_stages = 3}}) {
    const Schedule s = build_schedule(spec);
    const Schedule back = parse_schedule(format_schedule(s), "text");
    EXPECT_EQ(back.spec, s.spec);
    EXPECT_EQ(back.stages, s.stages) << spec.describe();
  }
  testing::TempDir dir("schedule_text");
  const Schedule s =
      build_schedule({.kind = ScheduleKind::one_f_one_b, .pp = 2, .microbatches = 2});
  write_schedule_file(dir / "s.txt", s);
  EXPECT_EQ(read_schedule_file(dir / "s.txt").stages, s.stages);
}

//! Stage lines may interleave and carry comments: a hand-written seed step is read as
//! written, and passes the validator.
TEST(ScheduleTextTest, HandWrittenScheduleIsReadAsWritten) {
  const Schedule s = parse_schedule(R"(# two stages, one micro-batch
schedule gpipe pp 2 microbatches 1 virtual-stages 1
stage 1: recv act m0 <- 0
stage 0: F m0
stage 0: send act m0 -> 1   # the seed's order
stage 1: F m0
stage 1: B m0
stage 1: send grad m0 -> 0
stage 0: recv grad m0 <- 1
stage 0: B m0
)",
                                    "hand");
  EXPECT_EQ(s.stages[0].size(), 4u);
  EXPECT_EQ(s.stages[1].size(), 4u);
  const ScheduleVerdict verdict = validate_schedule(s, cli::emulator_dry_runner());
  EXPECT_TRUE(verdict.ok()) << verdict.problem;
}

//! Each malformed line is one UsageError naming the source and the line.
TEST(ScheduleTextTest, BadLinesNameTheirLine) {
  const std::string header = "schedule 1f1b pp 2 microbatches 2 virtual-stages 1\n";
  EXPECT_THROW_MSG(parse_schedule("stage 0: F m0\n", "f"), UsageError,
                   "f:1: expected the header 'schedule KIND pp N microbatches M virtual-stages V'");
  EXPECT_THROW_MSG(parse_schedule("# nothing\n", "f"), UsageError, "f: no 'schedule ...' header");
  EXPECT_THROW_MSG(parse_schedule("schedule zig pp 2 microbatches 2 virtual-stages 1\n", "f"),
                   UsageError, "f:1: unknown schedule 'zig'");
  EXPECT_THROW_MSG(parse_schedule("schedule 1f1b pp x microbatches 2 virtual-stages 1\n", "f"),
                   UsageError, "f:1: expected a number, got 'x'");
  EXPECT_THROW_MSG(parse_schedule(header + "stage 2: F m0\n", "f"), UsageError,
                   "f:2: stage 2 is outside [0, 2)");
  EXPECT_THROW_MSG(parse_schedule(header + "\nstage 0: X m0\n", "f"), UsageError,
                   "f:3: expected 'F mN', 'B mN' or 'send|recv act|grad mN -> PEER', got 'X m0'");
  EXPECT_THROW_MSG(parse_schedule(header + "stage 0: send act m0 <- 1\n", "f"), UsageError,
                   "f:2: expected '-> PEER' at the end of 'send act m0 <- 1'");
  EXPECT_THROW_MSG(parse_schedule(header + "stage 0: F 0\n", "f"), UsageError,
                   "f:2: expected mN, got '0'");
  EXPECT_THROW_MSG(parse_schedule(header + "F m0\n", "f"), UsageError,
                   "f:2: expected 'stage P: STEP', got 'F m0'");
  EXPECT_THROW_MSG(read_schedule_file("/nonexistent/s.txt"), UsageError,
                   "/nonexistent/s.txt: cannot read the schedule file");
}

}  // namespace
}  // namespace ranklab
