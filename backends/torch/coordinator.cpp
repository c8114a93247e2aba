#include "backends/torch/coordinator.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <arpa/inet.h>
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
  /// On a Unix socket at `path`: the processes of one machine.
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
  /// On TCP at `host`:`port` (an IPv4 address): processes of other nodes join too.
  Listener(const std::string& host, int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
      throw UsageError(fmt::format("--master-addr {} is not an IPv4 address", host));
    }
    if (fd_ < 0 || ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_, 1024) != 0) {
      throw Error(fmt::format("cannot listen on {}:{} for the other nodes' processes: {}", host,
                              port, std::strerror(errno)));
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
  const int first = o.node_rank * o.nproc_per_node;
  std::vector<ProcessSpec> specs;
  std::string python_path = o.python_path;
  if (const char* existing = std::getenv("PYTHONPATH"); existing != nullptr && *existing != 0) {
    python_path += std::string(":") + existing;
  }
  for (int rank = first; rank < first + o.nproc_per_node; ++rank) {
    ProcessSpec spec;
    spec.argv = {o.python, "-m", "ranklab_torch.launch", o.script};
    spec.argv.insert(spec.argv.end(), o.script_args.begin(), o.script_args.end());
    spec.env = {{"RANK", std::to_string(rank)},
                {"LOCAL_RANK", std::to_string(rank - first)},
                {"GROUP_RANK", std::to_string(o.node_rank)},
                {"ROLE_RANK", std::to_string(rank)},
                {"WORLD_SIZE", std::to_string(n)},
                {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
                {"ROLE_WORLD_SIZE", std::to_string(n)},
                {"MASTER_ADDR", o.master_addr},
                {"MASTER_PORT", std::to_string(master_port)},
                {"PYTHONPATH", python_path},
                {"PYTHONUNBUFFERED", "1"},
                {"RANKLAB_TORCH_COORDINATOR", coordinator}};
    // As torchrun: one OpenMP thread per process when several share the machine, unless set.
    if (o.nproc_per_node > 1 && std::getenv("OMP_NUM_THREADS") == nullptr) {
      spec.env["OMP_NUM_THREADS"] = "1";
    }
    if (o.keep_backend) spec.env["RANKLAB_TORCH_KEEP_BACKEND"] = "1";
    specs.push_back(std::move(spec));
  }
  return specs;
}

/// Every process's connection, by rank, once each has said hello.
std::vector<std::unique_ptr<WireConnection>> accept_all(Listener& listener,
                                                        ProcessGroupRunner& processes,
                                                        int n, int timeout_ms) {
  std::vector<std::unique_ptr<WireConnection>> connections(static_cast<std::size_t>(n));
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (int connected = 0; connected < n;) {
    for (int rank = 0; rank < n; ++rank) {
      if (connections[static_cast<std::size_t>(rank)] == nullptr && processes.runs(rank) &&
          processes.exited(rank)) {
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

/// A node other than the master's: its processes join the master's coordinator over TCP;
/// this node only starts them, forwards their output and waits for them to end.
TorchRunResult run_worker_node(const TorchRunOptions& options, const std::string& coordinator,
                               int master_port) {
  ProcessGroupRunner processes(process_specs(options, coordinator, master_port), options.log_dir,
                               options.node_rank * options.nproc_per_node);
  TorchRunResult result;
  result.worker_node = true;
  // The master's coordinator ends them; a process it never hears from ends by itself.
  processes.finish(std::numeric_limits<int>::max());
  for (int rank = processes.first_rank(); rank < processes.first_rank() + processes.size();
       ++rank) {
    result.process_endings.push_back(processes.how_it_ended(rank));
  }
  return result;
}

}  // namespace

TorchRunResult run_torch_job(TorchRunOptions options) {
  const int n = options.cluster.world_size;
  options.cluster.threads = 1;
  const bool one_node = options.nnodes == 1;
  const int master_port = options.master_port.value_or(one_node ? free_port() : 29500);
  // The coordinator listens beside the script's store: on a Unix socket of its own on one
  // machine, on MASTER_PORT + 1 of the master's address when other nodes join.
  const std::string tcp =
      fmt::format("tcp:{}:{}", options.master_addr, master_port + 1);
  if (options.node_rank > 0) return run_worker_node(options, tcp, master_port);
  PrivateFolder folder;
  const std::filesystem::path socket = folder.path() / "coordinator.sock";
  std::optional<Listener> listener;
  if (one_node) {
    listener.emplace(socket);
  } else {
    listener.emplace(options.master_addr, master_port + 1);
  }
  ProcessGroupRunner processes(
      process_specs(options, one_node ? "unix:" + socket.string() : tcp, master_port),
      options.log_dir);
  std::vector<std::unique_ptr<WireConnection>> connections =
      accept_all(*listener, processes, n, options.connect_timeout_ms);

  DecisionPoints decisions(connections, processes, options.cluster.timeout);
  EmulatorLauncher launcher(options.cluster);
  TorchRunResult result;
  result.python_stacks.resize(static_cast<std::size_t>(n));
  result.run = launcher.run(options.launch, [&](Communicator& world) {
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
  for (int rank = 0; rank < processes.size(); ++rank) {
    result.process_endings.push_back(processes.how_it_ended(rank));
  }
  return result;
}

}  // namespace ranklab::torch_bridge
