#include "cli/replay_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>

#include "cli/memory_flag.hpp"
#include "cli/run_diagnosis.hpp"
#include "comm/errors.hpp"
#include "emulator/replay.hpp"
#include "traces/flight_recorder_notes.hpp"
#include "traces/jsonl.hpp"
#include "cli/trace_input_flags.hpp"
#include "traces/sink.hpp"

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
  const Trace trace = read_replay_input(flags);
  const std::optional<CostModel> cost = to_cost_model(flags.cost);
  if (cost) check_slowed_ranks(*cost, trace.header.world_size);
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
    if (const nlohmann::json notes = flight_recorder_notes_json(trace); !notes.is_null()) {
      doc["recording"] = notes;
    }
    doc["written_trace"] = flags.cluster.trace_path;
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << "replay: " << replay_cluster(options.cluster) << "\n"
              << format_replay(report, input_name(flags.trace, flags.more_traces))
              << format_flight_recorder_notes(trace);
    if (times) std::cout << format_virtual_times(*times, *cost);
    if (!flags.cluster.trace_path.empty())
      std::cout << "trace: " << flags.cluster.trace_path << "\n";
  }
  return replay_exit_code(report);
}

}  // namespace ranklab::cli
