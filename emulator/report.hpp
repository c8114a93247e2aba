// The outcome of a cluster run: how it ended, each rank's fate, and the human report.
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace ranklab {

/// How a run ended, in order of precedence. Each maps to a CLI exit code (DESIGN.md §7).
enum class RunStatus {
  ok,           ///< every rank returned (exit 0)
  deadlock,     ///< every live rank blocked with nothing able to complete them, or the
                ///< watchdog saw a rank wait past the timeout (exit 3)
  mismatch,     ///< a collective's members or a message's two sides disagreed (exit 4)
  rank_failed,  ///< a rank threw (exit 5)
};

int exit_code(RunStatus status);
const char* to_string(RunStatus status);

/// What became of one rank.
struct RankOutcome {
  enum class State { finished, failed, deadlocked, aborted };
  State state = State::finished;
  std::string error;  ///< what() of the exception that ended it, if any
};

/// Returned by Cluster::run; the run itself never throws for a rank's failure.
struct RunReport {
  RunStatus status = RunStatus::ok;
  std::vector<RankOutcome> ranks;
  int root_cause_rank = -1;          ///< the rank whose error ended the run, if any
  std::exception_ptr root_cause;     ///< that error, to rethrow in tests
  std::string summary;               ///< one line
  std::string details;               ///< the full report: deadlock analysis, mismatch table

  bool ok() const { return status == RunStatus::ok; }
  /// Rethrows the root cause (tests use this to fail with the rank's own message).
  void rethrow_if_failed() const;
};

}  // namespace ranklab
