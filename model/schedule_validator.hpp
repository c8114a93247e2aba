// The validator of a pipeline schedule (issue 6 §2), run before a schedule is used:
//
//   1. per stage, in step order: every (micro-batch, chunk) runs forward once and backward
//      once, each pass after its input exists (received, produced by the stage itself, or
//      the data), each backward after its forward, each send after the pass whose output it
//      carries, each transfer to the neighbour the chunk's virtual stage implies;
//   2. between each pair of stages, per payload (activations, gradients): the sends and the
//      receives pair up in order (the fabric matches FIFO per source and tag, as MPI does),
//      each send with a receive of the same micro-batch for the next virtual stage;
//   3. a dry run on the emulator: one rank per stage executes the schedule with no compute,
//      each transfer a 3-integer message naming what it carries, under rendezvous sends;
//      a cycle of waits is the emulator's deadlock, and each receive checks what it got.
//
// A broken schedule is rejected with the first step that cannot progress: the smallest
// step index at which a stage fails a check or blocks (then the smallest stage), named
// as "stage 1, step 4 (recv grad m2 <- 2)": stage, step and micro-batch.
#pragma once

#include <string>

#include "model/schedule.hpp"
#include "traces/error.hpp"

namespace ranklab {

/// A rejected schedule. what() is one line naming stage, step and micro-batch.
class ScheduleError : public UsageError {
 public:
  using UsageError::UsageError;
};

/// What the validator found.
struct ScheduleVerdict {
  enum class Kind {
    ok,        ///< every check passed
    invalid,   ///< a static check (1 or 2) failed
    deadlock,  ///< the dry run deadlocked
    mismatch,  ///< the dry run delivered a message its receive did not expect
  };
  Kind kind = Kind::ok;
  std::string problem;  ///< one line (empty when ok)
  std::string details;  ///< the emulator's report of a failed dry run (empty otherwise)
  int messages = 0;     ///< messages the dry run delivered

  bool ok() const { return kind == Kind::ok; }
  /// DESIGN.md §7's exit codes: 0 ok, 1 invalid, 3 deadlock, 4 mismatch.
  int exit_code() const;
};

/// Checks 1 and 2; throws ScheduleError with the first problem. No ranks run.
void check_schedule(const Schedule& schedule);

/// Checks 1 and 2, then the dry run (PP fibers on a fresh emulator cluster, which never
/// hangs: its deadlock detection ends the run). Never throws for a broken schedule.
ScheduleVerdict validate_schedule(const Schedule& schedule);

/// validate_schedule, throwing ScheduleError with the verdict's problem unless it is ok.
void require_valid_schedule(const Schedule& schedule);

}  // namespace ranklab
