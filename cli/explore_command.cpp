#include "cli/explore_command.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <tbb/info.h>

#include "cli/choice_flags.hpp"
#include "cli/cluster_flags.hpp"
#include "cli/explore.hpp"
#include "cli/explore_report.hpp"
#include "cli/replay_command.hpp"
#include "cli/run_diagnosis.hpp"
#include "comm/errors.hpp"
#include "traces/progress.hpp"

namespace ranklab::cli {
namespace {

constexpr const char* kRunCommand = "ranklab run";

// A shell word: bare when safe, else single-quoted (`drop:0->1#0` needs it).
std::string shell_word(const std::string& arg) {
  const bool safe = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
  });
  if (safe) return arg;
  std::string out = "'";
  for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `ranklab run ARGS --policy P` (or `ranklab replay ...`), without the flags that only name
// output files (--trace, --wait-graph): they do not change the run, and explore has
// written them already. A schedule under the other send mode than the job's replaces the
// job's --send-mode with its own.
// A nondeterminism finding adds --compare-rank-order, without which the run alone passes.
std::string reproduce_command(const std::string& command, const std::vector<std::string>& args,
                              const SchedulePolicy& policy, const SendMode* other_mode,
                              bool nondeterminism) {
  std::string out = command;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool replaced = other_mode != nullptr && arg == "--send-mode";
    if (arg == "--trace" || arg == "--wait-graph" || replaced) {
      ++i;  // and its value
      continue;
    }
    if (arg.starts_with("--trace=") || arg.starts_with("--wait-graph=")) continue;
    if (other_mode != nullptr && arg.starts_with("--send-mode=")) continue;
    out += " " + shell_word(arg);
  }
  if (other_mode != nullptr) out += " --send-mode " + shell_word(other_mode->to_string());
  out += " --policy " + shell_word(policy.to_string());
  if (nondeterminism && command == kRunCommand) out += " --compare-rank-order";
  return out;
}

// Parses `args` exactly as `ranklab NAME` would (NAME's parser registered by `add`);
// refuses what explore decides itself.
template <typename Flags, typename Add>
Flags parse_subcommand(const char* name, const std::vector<std::string>& args, Add add) {
  CLI::App parser{"ranklab"};
  Flags flags;
  CLI::App& command = add(parser, flags);
  std::vector<const char*> argv = {"ranklab", name};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    parser.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(
        fmt::format("explore: in the arguments for `ranklab {}`: {}", name, e.what()));
  }
  const std::pair<const char*, const char*> refused[] = {
      {"--policy", "explore chooses the schedules (see --strategy)"},
      {"--threads", "every schedule runs on one thread, so that it reproduces"},
      {"--save", "explore runs the job many times"}};
  for (const auto& [flag, why] : refused) {
    const CLI::Option* option = command.get_option_no_throw(flag);
    if (option != nullptr && option->count() > 0) {
      throw UsageError(fmt::format("explore: {} is not allowed: {}", flag, why));
    }
  }
  return flags;
}

// What explore runs: the job, the command that reproduces one of its runs, and the files
// the user asked for.
struct Target {
  std::unique_ptr<Job> job;
  std::string command;  ///< "ranklab run" or "ranklab replay"
  std::vector<std::string> args;
  ClusterFlags cluster;
};

Target make_target(const ExploreFlags& flags) {
  Target t;
  t.args = flags.run_args;
  // Anything but --run or --scenario is a trace and replay's flags, in any order (a TI
  // trace's `--format simgrid-ti DIR` starts with a flag).
  const bool trace = !flags.run && flags.scenario.empty() && !t.args.empty();
  if (trace) {
    auto replay = parse_subcommand<ReplayFlags>("replay", t.args, add_replay_command);
    if (replay.wildcards.empty()) {
      // Receives from any source choose their sender again under each schedule, so that
      // the race a recording pinned can show; the reproducing command says so too.
      t.args.insert(t.args.end(), {"--wildcards", "free"});
      replay.wildcards = "free";
    }
    t.job = make_replay_job(replay);
    t.command = "ranklab replay";
    t.cluster = replay.cluster;
    return t;
  }
  if (!flags.run && flags.scenario.empty()) {
    throw UsageError("explore needs --scenario NAME, --run [ARGS...] or a TRACE (see --help)");
  }
  if (!flags.scenario.empty()) t.args.insert(t.args.begin(), {"--scenario", flags.scenario});
  const auto run = parse_subcommand<RunFlags>("run", t.args, add_run_command);
  t.job = make_job(run);
  t.command = kRunCommand;
  t.cluster = run.cluster;
  return t;
}

// Writes the failing schedule's trace if asked; returns the path written (or empty).
std::string write_failing_trace(const std::string& path, const Trace& trace) {
  if (path.empty()) return {};
  write_trace_creating_folders(path, trace);
  return path;
}

// explore's usage names what it explores: its TRACE is one of the arguments it passes on,
// so CLI11 cannot know it.
class ExploreUsage final : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name +
           " [OPTIONS] (--scenario NAME | --run [ARGS...] | TRACE [ARGS...])\n  ARGS: the "
           "arguments of `ranklab run` (or of `ranklab replay` after a TRACE)\n";
  }
};

}  // namespace

Strategy parse_strategy(std::string_view text) {
  if (text == "random") return Strategy::random;
  if (text == "pct") return Strategy::pct;
  throw UsageError(fmt::format("unknown --strategy '{}': expected random or pct", text));
}

CLI::App& add_explore_command(CLI::App& app, ExploreFlags& flags) {
  CLI::App& explore = *app.add_subcommand(
      "explore",
      "run a scenario, the main job or the replay of a trace under many schedules in parallel; "
      "stop at the first deadlock, mismatch, failure or nondeterministic result and print the "
      "command that reproduces it. Arguments explore does not know go to `ranklab run` (or "
      "`ranklab replay` after a TRACE).");
  explore.add_option("--scenario", flags.scenario, "a built-in scenario (see `ranklab scenarios`)")
      ->check(not_empty("names no scenario: `ranklab scenarios` lists them"));
  explore.add_flag("--run", flags.run,
                   "explore what `ranklab run ARGS...` runs; ARGS are the arguments explore "
                   "does not know (no --scenario: the main job)");
  explore.add_option("--runs", flags.runs, "schedules to run, rank-order first")
      ->capture_default_str();
  explore.add_option("--strategy", flags.strategy, "how schedules are drawn: random, or PCT")
      ->check(parsed_as("{random,pct}", parse_strategy))
      ->capture_default_str();
  explore.add_option("--depth", flags.depth, "PCT's bug depth")->capture_default_str();
  explore.add_option("--jobs", flags.jobs, "schedules run at once (default: one per core)");
  explore.add_flag("--no-shrink", flags.no_shrink, "do not shrink the failing schedule");
  explore.add_flag("--json", flags.json,
                   "print the report as JSON instead of text (docs/json.md; the failing run's "
                   "own report under failure.run)");
  explore.add_flag("--keep-send-mode", flags.keep_send_mode,
                   "run every schedule under the job's --send-mode (default: every other "
                   "schedule under the other mode, eager for rendezvous and rendezvous for eager)");
  explore.allow_extras();
  explore.formatter(std::make_shared<ExploreUsage>());
  return explore;
}

namespace {

void validate(const ExploreFlags& flags) {
  if (flags.runs < 1) throw UsageError(fmt::format("--runs must be at least 1, got {}", flags.runs));
  if (flags.depth < 1 || flags.depth > 1000) {
    throw UsageError(fmt::format("--depth must be 1..1000, got {}", flags.depth));
  }
  if (flags.jobs && *flags.jobs < 1) {
    throw UsageError(fmt::format("--jobs must be at least 1, got {}", *flags.jobs));
  }
}

ExploreOptions explore_options(const ExploreFlags& flags) {
  return {.runs = flags.runs,
          .strategy = parse_strategy(flags.strategy),
          .pct_depth = flags.depth,
          .jobs = flags.jobs.value_or(tbb::info::default_concurrency()),
          .shrink = !flags.no_shrink};
}

/// Explores `job` under `options`: the report's header first (a long exploration shows what
/// it explores while it runs), progress on the terminal, the counts into `report`.
ExploreResult run_explore(const Job& job, ExploreOptions options, ExploreReport& report,
                          bool json) {
  if (!json) print_header(std::cout, report);
  std::cout << std::flush;
  // Schedules take milliseconds each: the clock is looked at on every one.
  Progress progress("explore", static_cast<std::uint64_t>(std::max(options.runs, 1)),
                    Progress::Unit::items, "schedules");
  options.progress = [&progress](int done, int) {
    progress.update_now(static_cast<std::uint64_t>(done));
  };
  const ExploreResult result = explore(job, options);
  progress.finish();
  report.planned = result.planned;
  report.executed = result.executed;
  report.seconds = result.seconds;
  return result;
}

/// The failing schedule (and its shrunk form) into the report, with the commands that
/// reproduce them; writes the failing run's trace and wait-for graph.
void record_finding(const Target& target, const ExploreResult& result, ExploreReport& report) {
  if (!result.failure) return;
  const Failure& f = *result.failure;
  const bool nondeterminism = f.verdict.kind == "nondeterminism";
  const std::string name = f.policy.to_string();
  const SendMode& own = target.job->options().send_mode;
  const bool other_mode =
      !(f.send_mode.kind == own.kind && f.send_mode.eager_limit == own.eager_limit);
  const SendMode* mode = other_mode ? &f.send_mode : nullptr;
  ExploreReport::Finding finding{
      .schedule = f.index + 1,
      .policy = name,
      .send_mode = other_mode ? f.send_mode.to_string() : std::string(),
      .verdict = f.verdict,
      .report = nondeterminism ? describe_difference(result.reference_of(f.index), f.outcome,
                                                     "rank-order", name)
                               : f.outcome.text(),
      .run = f.outcome.json(),
      .reproduce = reproduce_command(target.command, target.args, f.policy, mode, nondeterminism),
      .exit_code = f.outcome.exit_code != 0 ? f.outcome.exit_code : 2};
  const JobOutcome* reported = &f.outcome;
  if (result.shrunk) {
    const ShrunkSchedule& s = *result.shrunk;
    finding.shrunk = ExploreReport::Finding::Shrunk{
        .preemptions = s.policy.preemptions.size(),
        .preemptions_before = s.preemptions_before,
        .runs = s.runs,
        .reproduce =
            reproduce_command(target.command, target.args, s.policy, mode, nondeterminism)};
    reported = &s.outcome;
  }
  report.failure = std::move(finding);
  report.failing_trace = write_failing_trace(target.cluster.trace_path, reported->trace);
  write_wait_graph(target.cluster.wait_graph_path, reported->report);
}

}  // namespace

int explore_command(ExploreFlags flags, const CLI::App& command) {
  flags.run_args = command.remaining();
  validate(flags);
  const Target target = make_target(flags);
  ExploreOptions options = explore_options(flags);
  if (!flags.keep_send_mode) {
    options.other_send_mode = other_send_mode(target.job->options().send_mode);
  }
  ExploreReport report{.target = target.job->describe(),
                       .strategy = flags.strategy,
                       .other_send_mode =
                           options.other_send_mode ? options.other_send_mode->to_string() : "",
                       .jobs = options.jobs,
                       .planned = options.runs};
  const ExploreResult result = run_explore(*target.job, options, report, flags.json);
  record_finding(target, result, report);
  if (flags.json) {
    std::cout << to_json(report).dump(2) << "\n";
  } else {
    print_outcome(std::cout, report);
  }
  return report.exit_code();
}

}  // namespace ranklab::cli
