// What `ranklab explore` reports, and its two renderings: text for people, JSON for machines
// (`--json`, docs/json.md), both from this one structure.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/explore.hpp"

namespace ranklab::cli {

struct ExploreReport {
  std::string target;    ///< the job explored, as Job::describe() says it
  std::string strategy;  ///< "random" or "pct"
  std::string other_send_mode;  ///< the mode every other schedule runs under; empty: none
  int jobs = 1;
  int planned = 0;
  int executed = 0;
  double seconds = 0.0;

  /// The first failing schedule.
  struct Finding {
    int schedule = 0;  ///< from 1
    std::string policy;
    std::string send_mode;  ///< the schedule's own send mode when not the job's; else empty
    Verdict verdict;
    std::string report;  ///< the failing run's report, or for nondeterminism the difference
    nlohmann::ordered_json run;  ///< the failing run's JSON report
    std::string reproduce;       ///< the command that reproduces it
    /// The shrunk schedule, when the failure could be shrunk.
    struct Shrunk {
      std::size_t preemptions = 0;
      std::size_t preemptions_before = 0;
      int runs = 0;
      std::string reproduce;
    };
    std::optional<Shrunk> shrunk;
    int exit_code = 0;
  };
  std::optional<Finding> failure;
  std::string failing_trace;  ///< where the failing schedule's trace was written, if asked

  int exit_code() const { return failure ? failure->exit_code : 0; }
  /// The result line, without "result: ".
  std::string result() const;
};

/// The report as text: print_header's line, then print_outcome's.
void print_text(std::ostream& out, const ExploreReport& report);
/// What is explored, with how many schedules (printed before they run).
void print_header(std::ostream& out, const ExploreReport& report);
/// The finding (indented report, reproduce and shrunk lines, the trace written) and the
/// result line.
void print_outcome(std::ostream& out, const ExploreReport& report);

/// The same content as JSON.
nlohmann::ordered_json to_json(const ExploreReport& report);

}  // namespace ranklab::cli
