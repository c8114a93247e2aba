// The validator of a pipeline schedule (issue 6 §2), run before a schedule is used:
//
//   1. per stage, in step order: every (micro-batch, chunk) runs forward once and backward
//      once, each pass after its input exists (received, produced by the stage itself, or
//      the data), each backward after its forward, each send after the pass whose output it
//      carries, each transfer to the neighbour the chunk's virtual stage implies;
//   2. between each pair of stages, per payload (activations, gradients): the sends and the
//      receives pair up in order (the fabric matches FIFO per source and tag, as MPI does),
//      each send with a receive of the same micro-batch for the next virtual stage;
//   3. a dry run: one rank per stage executes the schedule with no compute, each transfer a
//      3-integer message naming what it carries, under rendezvous sends; a cycle of waits
//      is a deadlock, and each receive checks what it got. The model knows only the
//      Communicator, so the ranks come from above: a DryRunner (the emulator's is
//      cli::emulator_dry_runner(), cli/schedule_dry_run.hpp).
//
// A broken schedule is rejected with the first step that cannot progress: the smallest
// step index at which a stage fails a check or blocks (then the smallest stage), named
// as "stage 1, step 4 (recv grad m2 <- 2)": stage, step and micro-batch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"
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
  std::string details;  ///< the runner's report of a failed dry run (empty otherwise)
  int messages = 0;     ///< messages the dry run delivered

  bool ok() const { return kind == Kind::ok; }
  /// DESIGN.md §7's exit codes: 0 ok, 1 invalid, 3 deadlock, 4 mismatch.
  int exit_code() const;
};

/// How a dry run ended, as the validator reads it.
struct DryRunOutcome {
  enum class End {
    ok,        ///< every rank returned
    deadlock,  ///< the ranks that had not returned could not progress
    failed,    ///< a rank threw (a receive got what it did not expect, a mismatch)
  };
  End end = End::ok;
  std::vector<bool> finished;  ///< per rank: whether its stage returned
  std::string problem;         ///< failed: the error that ended the run, in one line
  std::string details;         ///< the runner's full report of a run that did not end ok
};

/// Runs `stage` once on each rank of a fresh world of `ranks` ranks (so rank r runs stage
/// r) with rendezvous sends (a send completes only when its receive is posted, so the dry
/// run relies on no buffering) and says how it ended. It never hangs: a run that cannot
/// progress ends as a deadlock.
using DryRunner =
    std::function<DryRunOutcome(int ranks, const std::function<void(Communicator&)>& stage)>;

/// Checks 1 and 2; throws ScheduleError with the first problem. No ranks run.
void check_schedule(const Schedule& schedule);

/// Checks 1 and 2, then the dry run on PP ranks from `dry_run`. Never throws for a broken
/// schedule.
[[nodiscard]] ScheduleVerdict validate_schedule(const Schedule& schedule,
                                              const DryRunner& dry_run);

/// validate_schedule, throwing ScheduleError with the verdict's problem unless it is ok.
void require_valid_schedule(const Schedule& schedule, const DryRunner& dry_run);

}  // namespace ranklab
