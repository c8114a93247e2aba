#include "cli/schedule_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <iostream>

#include "cli/schedule_dry_run.hpp"
#include "model/schedule_builders.hpp"
#include "model/schedule_cost.hpp"
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

void print_comparison(std::ostream& out, const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  const int v = spec.virtual_stages > 1 ? spec.virtual_stages : 2;
  fmt::print(out,
             "compared at PP {}, M {} (predicted bubble with free communication, a backward "
             "twice a forward, and with B = F; activations: the most micro-batches a stage "
             "holds, a chunk's forward counting 1/V):\n",
             spec.pp, spec.microbatches);
  fmt::print(out, "  {:<18}  {:>9}  {:>9}  {:>16}  {:>11}\n", "schedule", "bubble", "(B = F)",
             spec.microbatches < spec.pp ? "closed form (*)" : "(p-1)/(vm+p-1)", "activations");
  const ScheduleCostShape equal{.forward_seconds = 1, .backward_seconds = 1};
  std::vector<ScheduleSpec> specs = {
      {.kind = ScheduleKind::gpipe, .pp = spec.pp, .microbatches = spec.microbatches},
      {.kind = ScheduleKind::one_f_one_b, .pp = spec.pp, .microbatches = spec.microbatches},
      {.kind = ScheduleKind::interleaved,
       .pp = spec.pp,
       .microbatches = spec.microbatches,
       .virtual_stages = v}};
  for (const ScheduleSpec& other : specs) {
    const bool self = other == spec;
    std::string name = fmt::format("{}{}", to_string(other.kind),
                                   other.virtual_stages > 1 ? fmt::format(" V{}", other.virtual_stages)
                                                            : "");
    try {
      const Schedule built = self ? s : build_schedule(other);
      fmt::print(out, "  {:<18}  {:>8.1f}%  {:>8.1f}%  {:>15.1f}%  {:>11g}{}\n", name,
                 schedule_bubble(built) * 100, schedule_bubble(built, equal) * 100,
                 ideal_bubble(other) * 100, peak_activations(built), self ? "  (this one)" : "");
    } catch (const UsageError& e) {
      fmt::print(out, "  {:<18}  not for these degrees: {}\n", name, e.what());
    }
  }
  if (spec.microbatches < spec.pp) {
    fmt::print(out,
               "  (*) (p-1)/(vm+p-1); interleaved with M < PP runs one group of M micro-batches "
               "and stage 0 waits PP-M chunk passes at each change of chunk: "
               "((p-m)v+m-1)/(pv+m-1)\n");
  }
  if (spec.kind == ScheduleKind::seed) {
    fmt::print(out, "  {:<18}  {:>8.1f}%  {:>8.1f}%  {:>16}  {:>11g}  (this one)\n", "seed",
               schedule_bubble(s) * 100, schedule_bubble(s, equal) * 100, "",
               peak_activations(s));
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
  if (verdict.ok()) {
    fmt::print(std::cout, "\n");
    print_comparison(std::cout, schedule);
  }
  if (!flags.save.empty()) fmt::print(std::cout, "saved: {}\n", flags.save);
  if (!verdict.ok() && !verdict.details.empty()) fmt::print(std::cout, "\n{}\n", verdict.details);
  return verdict.exit_code();
}

}  // namespace ranklab::cli
