#include "backends/torch/coordinator.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends/torch/decision_points.hpp"
#include "backends/torch/processes.hpp"
#include "backends/torch/proxy.hpp"
#include "backends/torch/wire.hpp"
#include "collectives/cluster.hpp"

namespace ranklab::torch_bridge {
namespace {

using Clock = std::chrono::steady_clock;

/// A folder of ranklab's own for the coordinator's socket, removed with what is in it.
class PrivateFolder {
 public:
  PrivateFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ranklab-torchrun-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error(fmt::format("cannot create a folder for the coordinator's socket: {}",
                              std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~PrivateFolder() {
    std::error_code ignored;
    std::filesystem::remove(path_ / "coordinator.sock", ignored);
    std::filesystem::remove(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class Listener {
 public:
  explicit Listener(const std::filesystem::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.string().size() >= sizeof address.sun_path) {
      throw Error(fmt::format("socket path too long: {}", path.string()));
    }
    std::strcpy(address.sun_path, path.c_str());
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_, 128) != 0) {
      throw Error(fmt::format("cannot listen on {}: {}", path.string(), std::strerror(errno)));
    }
  }
  ~Listener() { ::close(fd_); }
  /// A connection, or -1 if none came within `timeout_ms`.
  int accept(int timeout_ms) {
    pollfd entry{fd_, POLLIN, 0};
    if (::poll(&entry, 1, timeout_ms) <= 0) return -1;
    return ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  }

 private:
  int fd_ = -1;
};

/// A TCP port free now on the loopback, for the script's own store (MASTER_PORT): the
/// coordinator listens elsewhere, as the issue of two jobs side by side requires.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(fmt::format("cannot find a free port for MASTER_PORT: {}", std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::vector<ProcessSpec> process_specs(const TorchRunOptions& o, const std::string& coordinator,
                                       int master_port) {
  const int n = o.cluster.world_size;
  std::vector<ProcessSpec> specs;
  std::string python_path = o.python_path;
  if (const char* existing = std::getenv("PYTHONPATH"); existing != nullptr && *existing != 0) {
    python_path += std::string(":") + existing;
  }
  for (int rank = 0; rank < n; ++rank) {
    ProcessSpec spec;
    spec.argv = {o.python, "-m", "ranklab_torch.launch", o.script};
    spec.argv.insert(spec.argv.end(), o.script_args.begin(), o.script_args.end());
    spec.env = {{"RANK", std::to_string(rank)},
                {"LOCAL_RANK", std::to_string(rank)},
                {"GROUP_RANK", "0"},
                {"ROLE_RANK", std::to_string(rank)},
                {"WORLD_SIZE", std::to_string(n)},
                {"LOCAL_WORLD_SIZE", std::to_string(n)},
                {"ROLE_WORLD_SIZE", std::to_string(n)},
                {"MASTER_ADDR", o.master_addr},
                {"MASTER_PORT", std::to_string(master_port)},
                {"PYTHONPATH", python_path},
                {"PYTHONUNBUFFERED", "1"},
                {"RANKLAB_TORCH_COORDINATOR", coordinator}};
    // As torchrun: one OpenMP thread per process when several share the machine, unless set.
    if (n > 1 && std::getenv("OMP_NUM_THREADS") == nullptr) spec.env["OMP_NUM_THREADS"] = "1";
    if (o.keep_backend) spec.env["RANKLAB_TORCH_KEEP_BACKEND"] = "1";
    specs.push_back(std::move(spec));
  }
  return specs;
}

/// Every process's connection, by rank, once each has said hello.
std::vector<std::unique_ptr<WireConnection>> accept_all(Listener& listener,
                                                        ProcessGroupRunner& processes,
                                                        int timeout_ms) {
  const int n = processes.size();
  std::vector<std::unique_ptr<WireConnection>> connections(static_cast<std::size_t>(n));
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int connected = 0; connected < n;) {
    for (int rank = 0; rank < n; ++rank) {
      if (connections[static_cast<std::size_t>(rank)] == nullptr && processes.exited(rank)) {
        throw Error(fmt::format("rank {}'s process ended ({}) before it reached ranklab's "
                                "coordinator: see its output above",
                                rank, processes.how_it_ended(rank)));
      }
    }
    if (Clock::now() > deadline) {
      throw Error(fmt::format("{} of {} processes connected to ranklab's coordinator within "
                              "{} ms", connected, n, timeout_ms));
    }
    const int fd = listener.accept(100);
    if (fd < 0) continue;
    auto connection = std::make_unique<WireConnection>(fd, "a new process");
    const WireMessage hello = connection->receive();
    const int rank = hello.header.value("rank", -1);
    if (hello.header.value("op", "") != "hello" || rank < 0 || rank >= n ||
        connections[static_cast<std::size_t>(rank)] != nullptr) {
      throw Error(fmt::format("a process connected with an unexpected hello: {}",
                              hello.header.dump()));
    }
    connection->set_peer(fmt::format("rank {}'s process", rank));
    connections[static_cast<std::size_t>(rank)] = std::move(connection);
    ++connected;
  }
  return connections;
}

}  // namespace

TorchRunResult run_torch_job(TorchRunOptions options) {
  const int n = options.cluster.world_size;
  options.cluster.threads = 1;
  PrivateFolder folder;
  const std::filesystem::path socket = folder.path() / "coordinator.sock";
  Listener listener(socket);
  const int master_port = options.master_port.value_or(free_port());
  ProcessGroupRunner processes(process_specs(options, "unix:" + socket.string(), master_port),
                               options.log_dir);
  std::vector<std::unique_ptr<WireConnection>> connections =
      accept_all(listener, processes, options.connect_timeout_ms);

  DecisionPoints decisions(connections, processes, options.cluster.timeout);
  Cluster cluster(options.cluster, options.algorithm);
  TorchRunResult result;
  result.python_stacks.resize(static_cast<std::size_t>(n));
  result.report = cluster.run([&](Communicator& world) {
    const int rank = world.rank();
    decisions.rank_started(world);
    ProcessProxy proxy(world, *connections[static_cast<std::size_t>(rank)], decisions);
    try {
      proxy.serve();
    } catch (...) {
      result.python_stacks[static_cast<std::size_t>(rank)] = proxy.last_stack();
      decisions.rank_ended(rank, /*failed=*/true);
      throw;
    }
    result.python_stacks[static_cast<std::size_t>(rank)] = proxy.last_stack();
    decisions.rank_ended(rank, /*failed=*/false);
  });
  connections.clear();  // a process still in a call learns that the job has ended
  // A process outside any call (stuck in torch's store waiting for a dead one, or computing
  // past the timeout) would never learn it: it gets a few seconds, then is killed.
  result.killed = processes.finish(/*grace_ms=*/3'000);
  for (int rank = 0; rank < n; ++rank) result.process_endings.push_back(processes.how_it_ended(rank));
  return result;
}

}  // namespace ranklab::torch_bridge
