// `ranklab schedule`: a pipeline schedule as a table (issue 6 §2): each stage's compute
// order, its steps side by side, the messages per stage, and the validator's verdict (the
// static checks and a dry run on the emulator under rendezvous sends). --save writes the
// schedule as a text file (model/schedule_text.hpp); --file checks such a file instead of a
// built-in schedule, e.g. one edited by hand.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "model/schedule.hpp"
#include "model/schedule_validator.hpp"

namespace ranklab::cli {

struct ScheduleFlags {
  std::string schedule = "seed";
  int pp = 2;
  int microbatches = 1;
  int virtual_stages = 1;
  std::string file;  ///< a schedule file to check instead of a built-in schedule
  std::string save;  ///< write the schedule to this file (model/schedule_text.hpp)
  bool json = false;
};

/// One schedule of the comparison: its predicted bubble and peak activations.
struct ComparisonRow {
  std::string name;  ///< "gpipe", "interleaved V2"
  bool self = false;  ///< the schedule shown
  double bubble = 0.0;        ///< a backward twice a forward
  double bubble_equal = 0.0;  ///< B = F
  std::optional<double> ideal;  ///< (p-1)/(vm+p-1); none for the seed's
  double activations = 0.0;
  std::string problem;  ///< not for these degrees: why (the rest unset)
};

/// GPipe, 1F1B and interleaved at the schedule's PP and M (and the seed's, if it is).
std::vector<ComparisonRow> compare_schedules(const Schedule& schedule);

/// Registers the subcommand; `flags` must outlive parsing.
CLI::App& add_schedule_command(CLI::App& app, ScheduleFlags& flags);

/// Prints the schedule and its verdict; returns the verdict's exit code (0 valid, 1
/// invalid, 3 deadlock, 4 mismatch). Throws UsageError for bad flags.
int schedule_command(const ScheduleFlags& flags);

/// The table: compute order per stage, then one row per step index with a column per stage.
void print_schedule(std::ostream& out, const Schedule& schedule);

/// GPipe, 1F1B and interleaved at the schedule's PP and M side by side: the predicted bubble
/// (model/schedule_cost.hpp), its closed form, and the peak activations a stage holds.
void print_comparison(std::ostream& out, const Schedule& schedule);

/// Messages per stage, and the verdict, one line each.
void print_verdict(std::ostream& out, const Schedule& schedule, const ScheduleVerdict& verdict);

}  // namespace ranklab::cli
