// The MPI backend's own errors: a collective mismatch that every member of the call found at
// once (--check-collectives), so one of them can report it for all; and, at rank 0, another
// process's failure report.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "comm/errors.hpp"
#include "comm/run_report.hpp"

namespace ranklab {

class CollectiveMismatchError : public MismatchError {
 public:
  /// `table`: every member's call and the verdict (what()); `sentence`: the culprit line's
  /// text; `summary`: the result line; `reporter`: whether this member (the group's rank 0)
  /// is the one to print it; `blamed`: the global ranks whose calls differ (or all).
  CollectiveMismatchError(std::string table, std::string sentence, std::string summary,
                          bool reporter, std::vector<int> blamed)
      : MismatchError(std::move(table)),
        sentence_(std::move(sentence)),
        summary_(std::move(summary)),
        reporter_(reporter),
        blamed_(std::move(blamed)) {}

  const std::string& sentence() const { return sentence_; }
  const std::string& summary() const { return summary_; }
  bool reporter() const { return reporter_; }
  const std::vector<int>& blamed() const { return blamed_; }

 private:
  std::string sentence_;
  std::string summary_;
  bool reporter_;
  std::vector<int> blamed_;
};

/// At rank 0: another process's program failed and sent its report (rank 0 prints it, and
/// the job ends with `exit_code`). Thrown from any wait of rank 0's program.
class ReportedFailure : public Error {
 public:
  ReportedFailure(int from, int exit_code, RunReport report)
      : Error(report.summary), from_(from), exit_code_(exit_code), report_(std::move(report)) {}

  int from() const { return from_; }
  int exit_code() const { return exit_code_; }
  /// What the failed process found: status, culprit, details and summary.
  const RunReport& report() const { return report_; }

 private:
  int from_;
  int exit_code_;
  RunReport report_;
};

}  // namespace ranklab
