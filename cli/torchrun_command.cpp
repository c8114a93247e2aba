#include "cli/torchrun_command.hpp"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/torch/coordinator.hpp"
#include "cli/run_diagnosis.hpp"
#include "emulator/report_json.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::cli {
namespace {

// torchrun spells its flags both ways (--nproc-per-node, --nproc_per_node).
std::vector<std::string> both_spellings(const std::string& dashed) {
  std::string underscored = dashed;
  for (std::size_t i = 2; i < underscored.size(); ++i) {
    if (underscored[i] == '-') underscored[i] = '_';
  }
  return underscored == dashed ? std::vector{dashed} : std::vector{dashed, underscored};
}

std::string option_names(const std::string& dashed) {
  std::string names;
  for (const std::string& name : both_spellings(dashed)) names += (names.empty() ? "" : ",") + name;
  return names;
}

bool has_torch(const std::string& python) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(python.c_str(), python.c_str(), "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// --python, else the first python3 on PATH that imports torch, else Debian's.
std::string find_python(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::filesystem::path candidate =
          std::filesystem::path(rest.substr(0, colon)) / "python3";
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (::access(candidate.c_str(), X_OK) == 0 && has_torch(candidate.string())) {
        return candidate.string();
      }
    }
  }
  return "/usr/bin/python3";
}

// The folder holding the ranklab_torch package: RANKLAB_PYTHON_DIR, the installed copy
// beside the binary, or the source tree the binary was built from.
std::string python_package_dir() {
  if (const char* dir = std::getenv("RANKLAB_PYTHON_DIR"); dir != nullptr && *dir != 0) return dir;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = self.parent_path().parent_path() / "share" / "ranklab" / "python";
    if (std::filesystem::exists(installed / "ranklab_torch")) return installed.string();
  }
  return RANKLAB_PYTHON_SOURCE_DIR;
}

std::string describe(const TorchRunFlags& flags, const ClusterOptions& options) {
  return fmt::format("ranklab torchrun: {}, {}, policy {}, send mode {}", flags.script,
                     plural(static_cast<std::size_t>(options.world_size), "process", "processes"),
                     options.policy.to_string(), options.send_mode.to_string());
}

// The Python stacks of the ranks that ended blocked (deadlocked, or cancelled in a wait), by
// rank: where in the script each one waits.
nlohmann::ordered_json blocked_stacks(const torch_bridge::TorchRunResult& result) {
  nlohmann::ordered_json stacks = nlohmann::ordered_json::object();
  for (std::size_t rank = 0; rank < result.run.report.ranks.size(); ++rank) {
    if (result.run.report.ranks[rank].state == RankOutcome::State::finished) continue;
    nlohmann::ordered_json frames = nlohmann::ordered_json::array();
    for (const auto& frame : result.python_stacks[rank]) {
      if (frame.is_array() && frame.size() == 3) {
        frames.push_back({{"file", frame[0]}, {"line", frame[1]}, {"function", frame[2]}});
      }
    }
    stacks[std::to_string(rank)] = std::move(frames);
  }
  return stacks;
}

void log_blocked_stacks(const nlohmann::ordered_json& stacks) {
  for (const auto& [rank, frames] : stacks.items()) {
    spdlog::debug("rank {}'s Python stack at its last call, innermost first:", rank);
    for (const auto& frame : frames) {
      spdlog::debug("  {}:{} in {}", frame["file"].get<std::string>(), frame["line"].get<int>(),
                    frame["function"].get<std::string>());
    }
  }
}

// A node other than node 0 ran its processes only: how each ended, and where the report is.
// Exit 0 when every one of them ended with status 0, 5 otherwise (the report says why).
int report_worker_node(const TorchRunFlags& flags, const torch_bridge::TorchRunResult& result) {
  const int first = flags.node_rank * flags.nproc_per_node;
  bool all_ok = true;
  std::cout << fmt::format("ranklab torchrun: {}, node {} of {}: ranks {}-{}\n", flags.script,
                           flags.node_rank, flags.nnodes, first, first + flags.nproc_per_node - 1);
  for (std::size_t i = 0; i < result.process_endings.size(); ++i) {
    std::cout << fmt::format("rank {}: {}\n", first + static_cast<int>(i),
                             result.process_endings[i]);
    all_ok = all_ok && result.process_endings[i] == "exit status 0";
  }
  std::cout << "result: the job's report is node 0's\n";
  return all_ok ? 0 : 5;
}

}  // namespace

CLI::App& add_torchrun_command(CLI::App& app, TorchRunFlags& flags) {
  CLI::App& command = *app.add_subcommand(
      "torchrun",
      "run an unmodified torch.distributed script, one Python process per rank, with every "
      "call on the emulator's fabric: gloo and nccl groups become ranklab's, and a hang is "
      "reported at once with the script's own lines");
  command.add_option(option_names("--nproc-per-node"), flags.nproc_per_node,
                     "processes (ranks) to start")
      ->capture_default_str();
  command.add_option(option_names("--nnodes"), flags.nnodes,
                     "nodes: each runs `ranklab torchrun` with its --node-rank; node 0 runs the "
                     "coordinator (on MASTER_PORT + 1) and reports")
      ->capture_default_str();
  command.add_option(option_names("--node-rank"), flags.node_rank, "this node, from 0")
      ->capture_default_str();
  command.add_option("--python", flags.python,
                     "the interpreter (default: the first python3 on PATH that has torch, else "
                     "/usr/bin/python3)");
  command.add_flag(option_names("--keep-backend"), flags.keep_backend,
                   "leave the script's gloo and nccl process groups as it asks (only groups "
                   "made with backend 'ranklab' then run on the emulator)");
  command.add_option(option_names("--log-dir"), flags.log_dir,
                     "keep each rank's output in LOG_DIR/rankN/{stdout,stderr}.log instead of "
                     "printing it on stderr prefixed with [rankN]:");
  command.add_option(option_names("--master-addr"), flags.master_addr,
                     "MASTER_ADDR for the script's own store")
      ->capture_default_str();
  command.add_option(option_names("--master-port"), flags.master_port,
                     "MASTER_PORT for the script's own store (default: a free port on one "
                     "node, 29500 on several)");
  command.add_flag("--json", flags.json, "print the report as JSON (docs/json.md)");
  add_cluster_flags(command, flags.cluster, ClusterFlagSet::torch);
  command.add_option("script", flags.script, "the script")->required();
  command.add_option("args", flags.script_args, "the script's arguments");
  // Everything after the script is the script's, flags included (as torchrun).
  command.positionals_at_end();
  command.prefix_command();
  return command;
}

int torchrun_command(const TorchRunFlags& flags) {
  if (flags.nproc_per_node < 1) {
    throw UsageError(fmt::format("--nproc-per-node must be at least 1, got {}", flags.nproc_per_node));
  }
  if (flags.nnodes < 1 || flags.node_rank < 0 || flags.node_rank >= flags.nnodes) {
    throw UsageError(fmt::format("--node-rank must be from 0 to --nnodes - 1 ({}), got {}",
                                 flags.nnodes - 1, flags.node_rank));
  }
  if (!std::filesystem::is_regular_file(flags.script)) {
    throw UsageError(fmt::format("the script {} is not a file", flags.script));
  }
  torch_bridge::TorchRunOptions options;
  options.script = flags.script;
  options.script_args = flags.script_args;
  options.python = find_python(flags.python);
  options.python_path = python_package_dir();
  options.keep_backend = flags.keep_backend;
  options.log_dir = flags.log_dir;
  options.master_addr = flags.master_addr;
  options.master_port = flags.master_port;
  options.nproc_per_node = flags.nproc_per_node;
  options.nnodes = flags.nnodes;
  options.node_rank = flags.node_rank;
  options.cluster = to_cluster_options(flags.cluster, flags.nproc_per_node * flags.nnodes);
  options.launch.record = !flags.cluster.trace_path.empty();
  options.launch.trace_config = {{"program", "torchrun"}, {"script", flags.script}};
  const std::string headline = describe(flags, options.cluster);
  spdlog::info("{} ({})", headline, options.python);
  const torch_bridge::TorchRunResult result = torch_bridge::run_torch_job(std::move(options));
  if (result.worker_node) return report_worker_node(flags, result);
  const RunReport& run = result.run.report;
  if (!flags.cluster.trace_path.empty()) {
    write_trace_creating_folders(flags.cluster.trace_path, result.run.trace);
  }
  write_wait_graph(flags.cluster.wait_graph_path, run);
  if (flags.json) {
    nlohmann::ordered_json json =
        report_header("torchrun", to_string(run.status), exit_code(run.status));
    json["result"] = run.summary;
    json["program"] = "torchrun";
    json["script"] = flags.script;
    json["world"] = flags.nproc_per_node;
    json.update(run_report_json(run));
    json["processes"] = result.process_endings;
    json["python_stacks"] = blocked_stacks(result);
    json["trace"] = flags.cluster.trace_path;
    std::cout << json.dump(2) << "\n";
    return exit_code(run.status);
  }
  log_blocked_stacks(blocked_stacks(result));
  std::cout << headline << "\n";
  if (!run.ok()) std::cout << "\n" << render_analysis(run.analysis) << "\n";
  print_diagnosis(std::cout, run.culprit, run.faults);
  for (const int rank : result.killed) {
    std::cout << fmt::format(
        "rank {}'s process was outside any call when the job ended and did not end: killed\n",
        rank);
  }
  std::cout << "result: " << run.summary << "\n";
  if (!flags.cluster.trace_path.empty()) std::cout << "trace: " << flags.cluster.trace_path << "\n";
  return exit_code(run.status);
}

}  // namespace ranklab::cli
