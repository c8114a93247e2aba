#include "cli/schedule_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <iostream>

#include "cli/schedule_dry_run.hpp"
#include "model/schedule_builders.hpp"
#include "model/schedule_text.hpp"

namespace ranklab::cli {

CLI::App& add_schedule_command(CLI::App& app, ScheduleFlags& flags) {
  CLI::App& cmd = *app.add_subcommand(
      "schedule",
      "print a pipeline schedule (seed, gpipe, 1f1b, interleaved) as a table and validate it "
      "with a dry run on the emulator");
  CLI::Option* file =
      cmd.add_option("--file", flags.file,
                     "check this schedule file (written by --save, or by hand) instead of a "
                     "built-in schedule");
  cmd.add_option("--schedule", flags.schedule, "seed, gpipe, 1f1b or interleaved")
      ->capture_default_str()
      ->excludes(file);
  cmd.add_option("--pp", flags.pp, "pipeline stages")->capture_default_str()->excludes(file);
  cmd.add_option("--microbatches", flags.microbatches, "micro-batches M")
      ->capture_default_str()
      ->excludes(file);
  cmd.add_option("--virtual-stages", flags.virtual_stages,
                 "model chunks per stage V (interleaved only)")
      ->capture_default_str()
      ->excludes(file);
  cmd.add_option("--save", flags.save, "write the schedule as a text file, one line per step");
  return cmd;
}

void print_schedule(std::ostream& out, const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  fmt::print(out, "schedule {}: PP {}, {} micro-batch{}, {} chunk{} per stage\n",
             to_string(spec.kind), spec.pp, spec.microbatches, spec.microbatches == 1 ? "" : "es",
             spec.virtual_stages, spec.virtual_stages == 1 ? "" : "s");
  fmt::print(out, "compute order (F forward, B backward of a micro-batch{})\n",
             spec.virtual_stages > 1 ? "; .c: through chunk c" : "");
  for (int p = 0; p < spec.pp; ++p) fmt::print(out, "  stage {}: {}\n", p, s.compute_order(p));

  // Side by side: row i is each stage's i-th step (a program counter, not a time).
  std::vector<std::vector<std::string>> cells(s.stages.size());
  std::vector<std::size_t> widths(s.stages.size(), 0);
  std::size_t rows = 0;
  for (std::size_t p = 0; p < s.stages.size(); ++p) {
    for (const Step& step : s.stages[p]) cells[p].push_back(describe(step, spec.virtual_stages));
    widths[p] = fmt::format("stage {}", p).size();
    for (const std::string& cell : cells[p]) widths[p] = std::max(widths[p], cell.size());
    rows = std::max(rows, cells[p].size());
  }
  fmt::print(out,
             "\nsteps (row i: each stage's i-th step; a communication step posts its sends and "
             "receives together, then waits for all of them)\n{:>4}",
             "step");
  std::string header;
  for (std::size_t p = 0; p < s.stages.size(); ++p) {
    header += fmt::format("  {:<{}}", fmt::format("stage {}", p), widths[p]);
  }
  header.erase(header.find_last_not_of(' ') + 1);
  fmt::print(out, "{}\n", header);
  for (std::size_t i = 0; i < rows; ++i) {
    std::string line = fmt::format("{:>4}", i);
    for (std::size_t p = 0; p < s.stages.size(); ++p) {
      line += fmt::format("  {:<{}}", i < cells[p].size() ? cells[p][i] : "", widths[p]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    fmt::print(out, "{}\n", line);
  }
}

void print_verdict(std::ostream& out, const Schedule& s, const ScheduleVerdict& verdict) {
  const std::vector<StageMessages> messages = s.messages();
  std::string per_stage;
  int total = 0;
  for (std::size_t p = 0; p < messages.size(); ++p) {
    per_stage += fmt::format("{}stage {}: {} ({} sent, {} received)", p == 0 ? "" : "; ", p,
                             messages[p].total(), messages[p].sent, messages[p].received);
    total += messages[p].sent;
  }
  fmt::print(out, "messages per stage: {}; {} in all\n", per_stage, total);
  std::string in_flight;
  for (int p = 0; p < static_cast<int>(s.stages.size()); ++p) {
    in_flight += fmt::format("{}stage {}: {}", p == 0 ? "" : ", ", p, s.peak_in_flight(p));
  }
  fmt::print(out, "most forwards awaiting their backward (activations kept): {}\n", in_flight);
  if (verdict.ok()) {
    fmt::print(out,
               "validation: ok (each forward before its backward, every send matched by a "
               "receive, dry run on the emulator under rendezvous sends: {} messages, no "
               "deadlock)\n",
               verdict.messages);
  } else {
    fmt::print(out, "validation: REJECTED: {}\n", verdict.problem);
  }
}

int schedule_command(const ScheduleFlags& flags) {
  const Schedule schedule = flags.file.empty()
                                ? build_schedule({.kind = parse_schedule_kind(flags.schedule),
                                                  .pp = flags.pp,
                                                  .microbatches = flags.microbatches,
                                                  .virtual_stages = flags.virtual_stages})
                                : read_schedule_file(flags.file);
  if (!flags.save.empty()) write_schedule_file(flags.save, schedule);
  const ScheduleVerdict verdict = validate_schedule(schedule, emulator_dry_runner());
  if (!flags.file.empty()) fmt::print(std::cout, "file: {}\n", flags.file);
  print_schedule(std::cout, schedule);
  fmt::print(std::cout, "\n");
  print_verdict(std::cout, schedule, verdict);
  if (!flags.save.empty()) fmt::print(std::cout, "saved: {}\n", flags.save);
  if (!verdict.ok() && !verdict.details.empty()) fmt::print(std::cout, "\n{}\n", verdict.details);
  return verdict.exit_code();
}

}  // namespace ranklab::cli
