#include "backends/torch/processes.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traces/error.hpp"

extern char** environ;

namespace ranklab::torch_bridge {
namespace {

std::vector<std::string> environment_with(const std::map<std::string, std::string>& set) {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string name(text.substr(0, text.find('=')));
    if (!set.contains(name)) out.emplace_back(text);
  }
  for (const auto& [name, value] : set) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// A log file ranklab creates; an existing one is refused, never truncated.
int create_log(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("--log-dir: cannot create {}: {}", path.string(),
                            errno == EEXIST ? "it exists (ranklab does not overwrite it)"
                                            : std::strerror(errno)));
  }
  return fd;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the output is lost, not the job
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

ProcessGroupRunner::ProcessGroupRunner(const std::vector<ProcessSpec>& specs,
                                       const std::string& log_dir, int first_rank)
    : first_rank_(first_rank) {
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const int rank = first_rank + static_cast<int>(i);
    int files[2] = {-1, -1};
    if (!log_dir.empty()) {
      const std::filesystem::path folder = std::filesystem::path(log_dir) / fmt::format("rank{}", rank);
      std::error_code error;
      std::filesystem::create_directories(folder, error);
      if (error) {
        throw Error(fmt::format("--log-dir: cannot create {}: {}", folder.string(), error.message()));
      }
      files[0] = create_log(folder / "stdout.log");
      files[1] = create_log(folder / "stderr.log");
    }
    int pipes[2][2];
    for (auto& pipe : pipes) {
      if (::pipe2(pipe, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipes[0][1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, pipes[1][1], STDERR_FILENO);
    std::vector<std::string> argv = specs[i].argv;
    std::vector<std::string> env = environment_with(specs[i].env);
    std::vector<char*> argv_pointers = pointers(argv);
    std::vector<char*> env_pointers = pointers(env);
    pid_t pid = -1;
    const int failed = ::posix_spawnp(&pid, argv_pointers[0], &actions, nullptr,
                                      argv_pointers.data(), env_pointers.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipes[0][1]);
    ::close(pipes[1][1]);
    if (failed != 0) {
      ::close(pipes[0][0]);
      ::close(pipes[1][0]);
      throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(failed)));
    }
    pids_.push_back(pid);
    statuses_.emplace_back();
    streams_.push_back({pipes[0][0], rank, files[0], {}});
    streams_.push_back({pipes[1][0], rank, files[1], {}});
  }
  output_ = std::thread([this] { forward_output(); });
}

ProcessGroupRunner::~ProcessGroupRunner() {
  for (int rank = first_rank_; rank < first_rank_ + size(); ++rank) {
    if (!exited(rank)) ::kill(pid(rank), SIGKILL);
  }
  for (int rank = first_rank_; rank < first_rank_ + size(); ++rank) {
    if (!statuses_[local(rank)]) {
      int status = 0;
      ::waitpid(pid(rank), &status, 0);
    }
  }
  if (output_.joinable()) output_.join();
}

void ProcessGroupRunner::forward_output() {
  std::vector<pollfd> fds;
  for (const Stream& s : streams_) fds.push_back({s.fd, POLLIN, 0});
  std::size_t open = fds.size();
  char buffer[65536];
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      Stream& stream = streams_[i];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0 && stream.file >= 0) {
        write_all(stream.file, std::string_view(buffer, static_cast<std::size_t>(n)));
        continue;
      }
      if (n > 0) stream.partial.append(buffer, static_cast<std::size_t>(n));
      // Whole lines, each prefixed; at the end of the stream, what is left too.
      std::size_t start = 0;
      for (std::size_t end; (end = stream.partial.find('\n', start)) != std::string::npos;
           start = end + 1) {
        write_all(STDERR_FILENO, fmt::format("[rank{}]:{}\n", stream.rank,
                                             std::string_view(stream.partial).substr(start, end - start)));
      }
      stream.partial.erase(0, start);
      if (n <= 0) {
        if (!stream.partial.empty()) {
          write_all(STDERR_FILENO, fmt::format("[rank{}]:{}\n", stream.rank, stream.partial));
        }
        ::close(fds[i].fd);
        if (stream.file >= 0) ::close(stream.file);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

bool ProcessGroupRunner::exited(int rank) {
  auto& status = statuses_[local(rank)];
  if (status) return true;
  int value = 0;
  if (::waitpid(pid(rank), &value, WNOHANG) == pid(rank)) status = value;
  return status.has_value();
}

std::string ProcessGroupRunner::how_it_ended(int rank) {
  if (!exited(rank)) return {};
  const int status = *statuses_[local(rank)];
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

std::vector<int> ProcessGroupRunner::finish(int grace_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  std::vector<int> killed;
  for (int rank = first_rank_; rank < first_rank_ + size(); ++rank) {
    while (!exited(rank) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!exited(rank)) {
      ::kill(pid(rank), SIGKILL);
      int status = 0;
      ::waitpid(pid(rank), &status, 0);
      statuses_[local(rank)] = status;
      killed.push_back(rank);
    }
  }
  if (output_.joinable()) output_.join();
  return killed;
}

}  // namespace ranklab::torch_bridge
