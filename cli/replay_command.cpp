#include "cli/replay_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/memory_flag.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/trace_input_flags.hpp"
#include "cli/what_if.hpp"
#include "comm/errors.hpp"
#include "emulator/replay.hpp"
#include "traces/flight_recorder_notes.hpp"
#include "traces/jsonl.hpp"
#include "traces/sink.hpp"
#include "traces/wait_analysis.hpp"

namespace ranklab::cli {

CLI::App& add_replay_command(CLI::App& app, ReplayFlags& flags) {
  CLI::App& command = *app.add_subcommand(
      "replay",
      "re-issue every rank's recorded operations on the fabric (synthetic payloads) and check "
      "that each rank's sequence and every send->receive match reproduce (exit 0 reproduced, "
      "2 not, 3 deadlock, 4 mismatch, 5 a rank failed, 6 unsafe: a potential deadlock or a request "
      "leak)");
  command
      .add_option("TRACE", flags.trace,
                  "trace to replay: JSON Lines, or in the --format given (a SimGrid TI trace, "
                  "PyTorch Flight Recorder dumps, NCCL debug logs)")
      ->required();
  command.add_option("MORE", flags.more_traces,
                     "with --format pytorch-fr or nccl-log: further dump or log files or folders (one dump per rank, one log per process)");
  add_format_flag(command, flags.format);
  command.add_flag("--json", flags.json, "print the report as JSON");
  add_max_memory_flag(command, flags.max_memory_mib,
                      "the most the replay's buffers may take together, in MiB; a trace asking "
                      "more is refused before the run (default: half of this machine's memory)");
  command
      .add_option("--wildcards", flags.wildcards,
                  "recorded: each receive from any source takes the sender it took when "
                  "recorded (replay's default); free: the schedule chooses among the senders the "
                  "program allows, so a race shows as a divergence (explore's default)")
      ->check(CLI::IsMember({"recorded", "free"}));
  add_cluster_flags(command, flags.cluster, ClusterFlagSet::replay);
  add_cost_flags(command, flags.cost);
  command.add_option("--what-if", flags.what_if,
                     "replay as it would have gone with one change: slow:R=xF (rank R's compute "
                     "F times slower, with --cost or --topology: the predicted step, who waits "
                     "for whom, and whether the job still completes or now hangs, exit 3) or "
                     "skip:R@OP (rank R never issues its op #OP: the report of that run)");
  return command;
}

std::string replay_cluster(const ClusterOptions& options) {
  return fmt::format("policy {}, threads {}, send mode {}", options.policy.to_string(),
                     options.threads, options.send_mode.to_string());
}

Trace read_replay_input(const ReplayFlags& flags) {
  std::vector<std::string> paths = {flags.trace};
  paths.insert(paths.end(), flags.more_traces.begin(), flags.more_traces.end());
  return read_trace_input(flags.format, paths);
}

int replay_command(const ReplayFlags& flags) {
  const Trace recorded = read_replay_input(flags);
  const std::optional<CostModel> cost = to_cost_model(flags.cost);
  if (cost) check_slowed_ranks(*cost, recorded.header.world_size);
  std::optional<WhatIf> what_if;
  if (!flags.what_if.empty()) what_if = parse_what_if(flags.what_if);
  const bool skip = what_if && what_if->kind == WhatIf::Kind::skip;
  // skip: the recording without the operation, replayed as if it had been so. Otherwise the
  // recording itself, not a copy: a copy of a million events cost a tenth of a second.
  std::optional<Trace> skipped_trace;
  if (skip) skipped_trace = skip_operation(recorded, *what_if);
  const Trace& trace = skip ? *skipped_trace : recorded;
  ReplayOptions options;
  options.cluster = to_cluster_options(flags.cluster, trace.header.world_size);
  // 0 stays 0: the replay then names its default limit as such.
  options.max_memory_bytes =
      flags.max_memory_mib == 0 ? 0 : memory_limit(flags.max_memory_mib).bytes;
  options.memory_limit_hint = " (--max-memory-mib sets it)";
  options.free_any_source = flags.wildcards == "free";
  // Timing annotates the replayed trace, so it is kept in memory and written at the end.
  auto memory =
      cost && !flags.cluster.trace_path.empty() ? std::make_shared<MemorySink>() : nullptr;
  options.cluster.trace_sink =
      memory ? std::shared_ptr<TraceSink>(memory) : open_trace_sink(flags.cluster);
  options.cluster.trace_config = {{"program", "replay"}, {"replayed", input_name(flags.trace, flags.more_traces)}};

  spdlog::info("replaying {} ({} ranks)", input_name(flags.trace, flags.more_traces), trace.header.world_size);
  const ReplayReport report = replay_trace(trace, options);
  // The recording is timed: its structure is what the replay re-issued (and it holds the
  // compute of imported traces, which the fabric never sees).
  std::optional<VirtualTimes> times;
  if (cost) times = time_trace(trace, *cost, options.cluster.send_mode);
  std::optional<SlowPrediction> slow;
  if (what_if && !skip) slow = predict_slow(trace, *what_if, cost, options.cluster.send_mode);
  const std::string skipped = skip ? describe_skip(recorded, *what_if) : "";
  if (memory) {
    Trace replayed = memory->trace();
    annotate(replayed, trace, *times);
    write_trace_creating_folders(flags.cluster.trace_path, replayed);
  }
  write_wait_graph(flags.cluster.wait_graph_path, report.run);
  if (flags.json) {
    nlohmann::ordered_json doc =
        replay_to_json(report, input_name(flags.trace, flags.more_traces));
    doc["cluster"] = replay_cluster(options.cluster);
    if (times) doc["virtual_time"] = virtual_times_to_json(*times, *cost);
    // Without a cost model, a timed recording's own times say who waited for whom.
    if (!times && !skip) {
      if (nlohmann::json timing = recorded_timing_to_json(trace); !timing.is_null()) {
        doc["timing"] = std::move(timing);
      }
    }
    if (const nlohmann::json notes = flight_recorder_notes_json(recorded); !notes.is_null()) {
      doc["recording"] = notes;
    }
    if (slow) doc["what_if"] = slow_prediction_to_json(*slow, *what_if, trace);
    if (skip) {
      doc["what_if"] = {{"what_if", what_if->text},
                        {"kind", "skip"},
                        {"rank", what_if->rank},
                        {"op", what_if->op},
                        {"skipped", skipped}};
    }
    doc["written_trace"] = flags.cluster.trace_path;
    std::cout << doc.dump(2) << "\n";
  } else {
    if (skip) std::cout << "what if " << skipped << " (" << what_if->text << "):\n";
    const std::string notes = format_flight_recorder_notes(recorded);
    std::cout << "replay: " << replay_cluster(options.cluster) << "\n"
              << format_replay(report, input_name(flags.trace, flags.more_traces)) << notes;
    if (times) std::cout << format_virtual_times(*times, *cost);
    // A skip's recorded times are of another run than the one replayed: none. A Flight
    // Recorder import's go with what else its recording says, in that block.
    if (!times && !skip) {
      const std::string timing = format_recorded_timing(trace);
      if (notes.empty()) {
        std::cout << timing;
      } else {
        for (std::size_t at = 0; at < timing.size();) {
          const std::size_t end = timing.find('\n', at);
          std::cout << "  " << timing.substr(at, end - at + 1);
          at = end + 1;
        }
      }
    }
    if (slow) std::cout << format_slow_prediction(*slow, *what_if, trace);
    if (!flags.cluster.trace_path.empty())
      std::cout << "trace: " << flags.cluster.trace_path << "\n";
  }
  // A slow rank that turns a completing job into a hang is a latent bug: exit 3.
  if (slow && report.run.ok() && !slow->predicted.complete) return exit_code(RunStatus::deadlock);
  return replay_exit_code(report);
}

}  // namespace ranklab::cli
