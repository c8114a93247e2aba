#include "cli/schedule_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <iostream>

#include "cli/schedule_dry_run.hpp"
#include "emulator/report_json.hpp"
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
  cmd.add_flag("--json", flags.json, "print the report as JSON instead of text (docs/json.md)");
  return cmd;
}

void print_schedule(std::ostream& out, const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  fmt::print(out, "schedule {}: PP {}, {}, {} per stage\n", to_string(spec.kind), spec.pp,
             plural(static_cast<std::size_t>(spec.microbatches), "micro-batch", "micro-batches"),
             plural(static_cast<std::size_t>(spec.virtual_stages), "chunk"));
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

std::vector<ComparisonRow> compare_schedules(const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  const int v = spec.virtual_stages > 1 ? spec.virtual_stages : 2;
  const ScheduleCostShape equal{.forward_seconds = 1, .backward_seconds = 1};
  std::vector<ScheduleSpec> specs = {
      {.kind = ScheduleKind::gpipe, .pp = spec.pp, .microbatches = spec.microbatches},
      {.kind = ScheduleKind::one_f_one_b, .pp = spec.pp, .microbatches = spec.microbatches},
      {.kind = ScheduleKind::interleaved,
       .pp = spec.pp,
       .microbatches = spec.microbatches,
       .virtual_stages = v}};
  std::vector<ComparisonRow> rows;
  for (const ScheduleSpec& other : specs) {
    ComparisonRow row{.name = fmt::format("{}{}", to_string(other.kind),
                                          other.virtual_stages > 1
                                              ? fmt::format(" V{}", other.virtual_stages)
                                              : ""),
                      .self = other == spec};
    try {
      const Schedule built = row.self ? s : build_schedule(other);
      row.bubble = schedule_bubble(built);
      row.bubble_equal = schedule_bubble(built, equal);
      row.ideal = ideal_bubble(other);
      row.activations = peak_activations(built);
    } catch (const UsageError& e) {
      row.problem = e.what();
    }
    rows.push_back(std::move(row));
  }
  if (spec.kind == ScheduleKind::seed) {
    rows.push_back({.name = "seed",
                    .self = true,
                    .bubble = schedule_bubble(s),
                    .bubble_equal = schedule_bubble(s, equal),
                    .activations = peak_activations(s)});
  }
  return rows;
}

void print_comparison(std::ostream& out, const Schedule& s) {
  const ScheduleSpec& spec = s.spec;
  fmt::print(out,
             "compared at PP {}, M {} (predicted bubble with free communication, a backward "
             "twice a forward, and with B = F; activations: the most micro-batches a stage "
             "holds, a chunk's forward counting 1/V):\n",
             spec.pp, spec.microbatches);
  fmt::print(out, "  {:<18}  {:>9}  {:>9}  {:>16}  {:>11}\n", "schedule", "bubble", "(B = F)",
             spec.microbatches < spec.pp ? "closed form (*)" : "(p-1)/(vm+p-1)", "activations");
  for (const ComparisonRow& row : compare_schedules(s)) {
    if (!row.problem.empty()) {
      fmt::print(out, "  {:<18}  not for these degrees: {}\n", row.name, row.problem);
      continue;
    }
    fmt::print(out, "  {:<18}  {:>8.1f}%  {:>8.1f}%  {:>16}  {:>11g}{}\n", row.name,
               row.bubble * 100, row.bubble_equal * 100,
               row.ideal ? fmt::format("{:>15.1f}%", *row.ideal * 100) : "", row.activations,
               row.self ? "  (this one)" : "");
  }
  if (spec.microbatches < spec.pp) {
    fmt::print(out,
               "  (*) (p-1)/(vm+p-1); interleaved with M < PP runs one group of M micro-batches "
               "and stage 0 waits PP-M chunk passes at each change of chunk: "
               "((p-m)v+m-1)/(pv+m-1)\n");
  }
}

namespace {

const char* verdict_status(ScheduleVerdict::Kind kind) {
  switch (kind) {
    case ScheduleVerdict::Kind::ok: return "ok";
    case ScheduleVerdict::Kind::invalid: return "invalid";
    case ScheduleVerdict::Kind::deadlock: return "deadlock";
    case ScheduleVerdict::Kind::mismatch: return "mismatch";
  }
  return "unknown";
}

nlohmann::ordered_json schedule_json(const ScheduleFlags& flags, const Schedule& s,
                                     const ScheduleVerdict& verdict) {
  const ScheduleSpec& spec = s.spec;
  nlohmann::ordered_json j =
      report_header("schedule", verdict_status(verdict.kind), verdict.exit_code());
  j["file"] = flags.file;
  j["schedule"] = to_string(spec.kind);
  j["pp"] = spec.pp;
  j["microbatches"] = spec.microbatches;
  j["virtual_stages"] = spec.virtual_stages;
  const std::vector<StageMessages> messages = s.messages();
  j["stages"] = nlohmann::ordered_json::array();
  for (std::size_t p = 0; p < s.stages.size(); ++p) {
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const Step& step : s.stages[p]) steps.push_back(describe(step, spec.virtual_stages));
    j["stages"].push_back({{"stage", p},
                           {"compute_order", s.compute_order(static_cast<int>(p))},
                           {"steps", steps},
                           {"messages", {{"sent", messages[p].sent},
                                         {"received", messages[p].received}}},
                           {"peak_in_flight", s.peak_in_flight(static_cast<int>(p))}});
  }
  j["validation"] = {{"ok", verdict.ok()},
                     {"kind", verdict_status(verdict.kind)},
                     {"problem", verdict.problem},
                     {"messages", verdict.messages},
                     {"details", verdict.details}};
  j["comparison"] = nlohmann::ordered_json::array();
  if (verdict.ok()) {
    for (const ComparisonRow& row : compare_schedules(s)) {
      nlohmann::ordered_json r{{"schedule", row.name}, {"this_one", row.self}};
      if (row.problem.empty()) {
        r["bubble"] = row.bubble;
        r["bubble_equal_passes"] = row.bubble_equal;
        r["ideal_bubble"] = row.ideal ? nlohmann::ordered_json(*row.ideal) : nullptr;
        r["activations"] = row.activations;
      } else {
        r["problem"] = row.problem;
      }
      j["comparison"].push_back(r);
    }
  }
  j["saved"] = flags.save;
  return j;
}

}  // namespace

int schedule_command(const ScheduleFlags& flags) {
  const Schedule schedule = flags.file.empty()
                                ? build_schedule({.kind = parse_schedule_kind(flags.schedule),
                                                  .pp = flags.pp,
                                                  .microbatches = flags.microbatches,
                                                  .virtual_stages = flags.virtual_stages})
                                : read_schedule_file(flags.file);
  if (!flags.save.empty()) write_schedule_file(flags.save, schedule);
  const ScheduleVerdict verdict = validate_schedule(schedule, emulator_dry_runner());
  if (flags.json) {
    std::cout << schedule_json(flags, schedule, verdict).dump(2) << "\n";
    return verdict.exit_code();
  }
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
