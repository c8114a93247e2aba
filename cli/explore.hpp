// Schedule exploration (`ranklab explore`): run one job under many schedules, in parallel,
// and stop at the first that fails, or whose results or per-rank traces differ from the
// rank-order schedule's (the nondeterminism check, DESIGN.md §5). Then shrink the failing
// schedule to the fewest preemptions of rank order that still fail the same way.
//
// Schedule 0 is rank-order, the reference; schedule i > 0 is `random:i` or `pct:i:DEPTH`.
// A schedule is also a send mode: with ExploreOptions::other_send_mode, odd schedules run
// under it instead of the job's own (rendezvous finds the deadlocks that buffering hides,
// eager the potential deadlocks and the matchings that only buffering allows).
// Every schedule is its own cluster on one thread, so it is reproducible from its policy
// alone; the jobs are oneTBB tasks, each running its schedules one after another on a
// cluster thread of its own (emulator/cluster_thread.hpp), and the failure reported is
// always the one with the lowest index, whatever the number of jobs.
//
// Shrinking works on the `preempt` policy (emulator/options.hpp): rank order, except that
// at listed scheduling steps a listed rank runs instead of the FIFO choice. The failing
// schedule is recorded pick by pick, replayed as a preempt policy that lists every pick,
// and reduced to the picks that were not FIFO's choice; delta debugging (Zeller's ddmin)
// then removes preemptions while the run still fails the same way (same kind, same
// culprit kind). What remains is printed as `--policy preempt:STEP=RANK,...`.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "cli/job.hpp"

namespace ranklab::cli {

enum class Strategy { random, pct };

struct ExploreOptions {
  int runs = 100;  ///< schedules, the rank-order reference included
  Strategy strategy = Strategy::random;
  int pct_depth = 3;
  int jobs = 1;              ///< oneTBB workers, each running whole clusters
  bool shrink = true;
  int shrink_budget = 400;   ///< at most this many runs to shrink
  /// The send mode of odd schedules; unset: every schedule under the job's own.
  std::optional<SendMode> other_send_mode;
  /// Called after each run with (runs finished, runs planned), from any worker, serialised.
  std::function<void(int, int)> progress;
};

/// The policy of schedule `index` (0: rank-order).
SchedulePolicy schedule_policy(const ExploreOptions& options, int index);
/// The send mode of schedule `index`: `own` (the job's), or the other one for odd indices.
SendMode schedule_send_mode(const ExploreOptions& options, const SendMode& own, int index);
/// The mode explore alternates with `own`: eager for rendezvous, rendezvous for the others.
SendMode other_send_mode(const SendMode& own);

/// How a run failed, judged against the reference run.
struct Verdict {
  std::string kind;  ///< "deadlock", "mismatch", "rank failure", "check failed", "nondeterminism"
  std::string why;   ///< one line
  std::string culprit;  ///< the report's culprit kind, or "nondeterminism"
};

/// The failure of `outcome`, or nothing if it passed and matches `reference` (if given).
std::optional<Verdict> judge(const JobOutcome& outcome, const JobOutcome* reference);

struct Failure {
  int index = 0;  ///< the schedule's number, from 0
  SchedulePolicy policy;
  SendMode send_mode;
  JobOutcome outcome;
  Verdict verdict;
};

struct ShrunkSchedule {
  SchedulePolicy policy;      ///< preempt:...
  JobOutcome outcome;
  std::size_t preemptions_before = 0;  ///< of the failing schedule, replayed under preempt
  int runs = 0;                        ///< runs spent shrinking
};

struct ExploreResult {
  int planned = 0;
  int runs = 0;          ///< schedules up to the first failure (all planned if none)
  int executed = 0;      ///< schedules actually run (parallel workers may pass the failure)
  double seconds = 0.0;  ///< wall time of those runs (not of shrinking)
  JobOutcome reference;  ///< schedule 0's outcome
  /// Rank order under ExploreOptions::other_send_mode: the reference of odd schedules, so
  /// that each is compared with rank order under its own send mode (what its reproducing
  /// command, run with --compare-rank-order, compares).
  std::optional<JobOutcome> other_reference;
  std::optional<Failure> failure;
  std::optional<ShrunkSchedule> shrunk;  ///< when the failure could be shrunk

  /// The reference schedule `index` is compared with: rank order under its send mode.
  const JobOutcome& reference_of(int index) const;
};

/// Explores `job` as the top of this file says. Throws what a run throws (bad flags).
ExploreResult explore(const Job& job, const ExploreOptions& options);

/// The differences between two runs' results and per-rank traces, for the report.
std::string describe_difference(const JobOutcome& reference, const JobOutcome& other,
                                const std::string& reference_name, const std::string& other_name);

}  // namespace ranklab::cli
