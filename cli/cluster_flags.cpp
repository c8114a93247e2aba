#include "cli/cluster_flags.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/choice_flags.hpp"
#include "collectives/algorithms/registry.hpp"
#include "comm/device.hpp"
#include "comm/errors.hpp"
#include "emulator/schedule_policies.hpp"
#include "model/device.hpp"
#include "traces/enum_names.hpp"
#include "traces/jsonl.hpp"
#include "traces/output_file.hpp"

namespace ranklab::cli {

namespace {

// --algo's values in --help: the registry's algorithms, then the MPI library's own.
std::string algorithm_choices() {
  std::vector<std::string_view> names = algorithm_names();
  names.push_back("mpi");
  return choices_text(names);
}

// --policy's values in --help, and its help: the scheduling policies' rows.
std::string policy_choices() {
  std::vector<std::string_view> syntaxes;
  for (const SchedulePolicyRow& row : schedule_policies()) syntaxes.push_back(row.syntax);
  return choices_text(syntaxes);
}

std::string policy_help() {
  std::string help = "scheduling policy";
  for (const SchedulePolicyRow& row : schedule_policies()) {
    if (!row.help.empty()) help += fmt::format("; {}", row.help);
  }
  return help;
}

}  // namespace

void add_cluster_flags(CLI::App& command, ClusterFlags& flags, ClusterFlagSet set) {
  if (set == ClusterFlagSet::program) {
    command.add_option("--world", flags.world, "number of ranks (default: the program's own)");
  }
  command.add_option("--policy", flags.policy, policy_help())
      ->check(parsed_as(policy_choices(), SchedulePolicy::parse))
      ->capture_default_str();
  if (set != ClusterFlagSet::torch) {
    command.add_option("--threads", flags.threads, "OS threads running the rank fibers")
        ->capture_default_str();
  }
  command.add_option("--send-mode", flags.send_mode, "rendezvous, eager, or eager<=BYTES")
      ->check(parsed_as("{rendezvous,eager,eager<=BYTES}", SendMode::parse))
      ->capture_default_str();
  if (set == ClusterFlagSet::program) {
    command
        .add_option("--algo", flags.algorithm,
                    "default collective algorithm; mpi (with --backend mpi only) is the MPI "
                    "library's own collectives (fastest; floating-point results then agree "
                    "with the others only within rounding)")
        ->check(parsed_as(algorithm_choices(),
                          [](const std::string& name) {
                            if (name != "mpi") parse_algorithm_flag(name);
                          }))
        ->capture_default_str();
    command
        .add_option("--device", flags.device,
                    "every rank's device: cpu; cpu-staged (a stand-in device with memory of "
                    "its own: communication staged through host buffers, as with cuda); "
                    "cuda (a CUDA build: rank r on GPU r % count)")
        ->check(parsed_as("{cpu,cpu-staged,cuda}",
                          [](const std::string& name) { parse_device_kind(name); }))
        ->capture_default_str();
  }
  command.add_option("--timeout-ms", flags.timeout_ms,
                     "watchdog: the longest any rank may block")
      ->capture_default_str();
  command.add_option("--stack-kib", flags.stack_kib, "stack of each rank's fiber, in KiB")
      ->capture_default_str();
  CLI::Option* trace =
      command.add_option("--trace", flags.trace_path, "write the trace (JSON Lines) to this file");
  // replay writes a trace only with --trace: the main job's default is not its own.
  command
      .add_flag("--no-trace", flags.no_trace,
                set == ClusterFlagSet::replay
                    ? "write no trace (the default: a replay writes one only with --trace)"
                    : "write no trace (the main job writes one by default)")
      ->excludes(trace);
  command.add_option("--fault", flags.faults,
                     "inject a fault (repeatable; quote it in a shell): kill:RANK@OPNUM, "
                     "'drop:SRC->DST#N', delay:RANK@OPNUM:STEPS, 'corrupt:SRC->DST#N' "
                     "(numbers from 0)")
      ->take_all();
  command.add_option("--wait-graph", flags.wait_graph_path,
                     "if ranks end blocked (deadlock), write the wait-for graph (Graphviz DOT)");
}

namespace {

// Parses a flag's value, naming the flag in the error.
template <typename Parse>
auto parse_flag(std::string_view flag, const std::string& value, Parse parse) {
  try {
    return parse(value);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
}

// A preempt policy that lists nothing, or a rank outside the world, used to run as rank
// order without a word (the scheduler ignores a preemption whose rank is not ready).
void check_preemptions(const SchedulePolicy& policy, std::string_view text, int world_size) {
  if (policy.kind != SchedulePolicy::Kind::preempt) return;
  if (policy.preemptions.empty()) {
    throw UsageError("--policy 'preempt:' lists no preemption: expected preempt:STEP=RANK,... "
                     "(rank-order runs with none)");
  }
  for (const Preemption& p : policy.preemptions) {
    if (p.rank >= world_size) {
      throw UsageError(fmt::format("--policy '{}': step {} names rank {}, outside the world of {}",
                                   text, p.step, p.rank, world_size));
    }
  }
}

}  // namespace

ClusterOptions to_cluster_options(const ClusterFlags& flags, int world_size) {
  if (world_size < 1) throw UsageError(fmt::format("--world must be at least 1, got {}", world_size));
  if (flags.threads < 1) {
    throw UsageError(fmt::format("--threads must be at least 1, got {}", flags.threads));
  }
  if (flags.timeout_ms < 1) {
    throw UsageError(fmt::format("--timeout-ms must be positive, got {}", flags.timeout_ms));
  }
  if (flags.stack_kib < 16) {
    throw UsageError(fmt::format("--stack-kib must be at least 16, got {}", flags.stack_kib));
  }
  // One stack larger than the 47-bit user address space can never be mapped; refused here,
  // a larger value wrapped 64 bits in KiB x 1024 or in world x stack size and crashed.
  constexpr std::size_t kMaxStackKib = std::size_t{1} << 37;  // 128 TiB
  if (flags.stack_kib > kMaxStackKib) {
    throw UsageError(fmt::format(
        "--stack-kib must be at most {} (128 TiB, the user address space), got {}",
        kMaxStackKib, flags.stack_kib));
  }
  ClusterOptions options;
  options.world_size = world_size;
  options.policy = parse_flag("--policy", flags.policy, SchedulePolicy::parse);
  check_preemptions(options.policy, flags.policy, world_size);
  options.threads = flags.threads;
  options.send_mode = parse_flag("--send-mode", flags.send_mode, SendMode::parse);
  options.device = parse_flag("--device", flags.device, parse_device_kind);
  require_device_built(options.device);  // before any rank runs: one line, exit 1
  options.timeout = std::chrono::milliseconds(flags.timeout_ms);
  options.stack_size = flags.stack_kib * 1024;
  for (const std::string& fault : flags.faults) {
    options.faults.faults.push_back(parse_flag("--fault", fault, FaultSpec::parse));
  }
  options.faults.validate(world_size);
  // Before the run: an output found unwritable only afterwards would hide its exit code.
  if (!flags.trace_path.empty()) require_writable_output(flags.trace_path, "the trace");
  if (!flags.wait_graph_path.empty()) {
    require_writable_output(flags.wait_graph_path, "the wait-for graph");
  }
  return options;
}

void write_trace_creating_folders(const std::string& path, const Trace& trace) {
  create_output_folder(std::filesystem::path(path).parent_path(), "the trace");
  write_trace_file(path, trace);
}

std::shared_ptr<JsonlFileSink> open_trace_sink(const ClusterFlags& flags) {
  if (flags.trace_path.empty()) return nullptr;
  create_output_folder(std::filesystem::path(flags.trace_path).parent_path(), "the trace");
  return std::make_shared<JsonlFileSink>(flags.trace_path);
}

Algorithm parse_algorithm_flag(std::string_view name) {
  const auto algorithm = parse_algorithm(name);
  if (!algorithm || *algorithm == Algorithm::automatic) {
    throw UsageError(fmt::format("unknown --algo '{}': expected {}", name,
                                 alternatives_text(algorithm_names())));
  }
  return *algorithm;
}

Algorithm to_algorithm(const ClusterFlags& flags) { return parse_algorithm_flag(flags.algorithm); }

spdlog::level::level_enum parse_log_level(std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    throw UsageError(fmt::format(
        "unknown --log-level '{}': expected trace, debug, info, warn, error, critical or off",
        level));
  }
  return parsed;
}

void configure_logging(const std::string& level) {
  const auto parsed = parse_log_level(level);
  auto logger = spdlog::stderr_color_mt("ranklab");
  logger->set_level(parsed);
  logger->set_pattern("[%l] %v");
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace ranklab::cli
