// Pinning worker threads to CPUs (emulator/detail/thread_affinity.hpp): which workers are
// pinned, that each runs on its own CPU, and that nothing else is: the caller, oneTBB's
// threads (large reductions) and runs with more workers than CPUs keep their CPU masks.
#include "emulator/detail/thread_affinity.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/emulator/emulator_test_support.hpp"

namespace ranklab::testing {
namespace {

using detail::allowed_cpus;
using detail::worker_cpus;

// Every thread of this process, as /proc lists it: "TID: Cpus_allowed_list".
std::vector<std::string> thread_masks() {
  std::vector<std::string> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        out.push_back(line.substr(line.find_first_not_of(" \t", 18)));
      }
    }
  }
  return out;
}

// Restricts the calling thread to `cpus` for the scope, then restores its mask.
class ScopedCpus {
 public:
  explicit ScopedCpus(const std::vector<int>& cpus) {
    pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  ~ScopedCpus() { pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_); }
  ScopedCpus(const ScopedCpus&) = delete;
  ScopedCpus& operator=(const ScopedCpus&) = delete;

 private:
  cpu_set_t saved_;
};

// Runs `world` ranks on `threads` workers, each rank noting the CPUs its thread may use and
// checking an all_reduce of `count` int64 (large ones go through oneTBB); returns the CPUs.
std::vector<std::vector<int>> cpus_seen(int world, int threads, bool pin, std::size_t count) {
  ClusterOptions options;
  options.world_size = world;
  options.threads = threads;
  options.pin_threads = pin;
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(world));
  const RunReport report = run_ranks(options, [&](Communicator& comm) {
    seen[static_cast<std::size_t>(comm.rank())] = allowed_cpus();
    std::vector<std::int64_t> x(count, comm.rank());
    comm.all_reduce(std::span(x));
    const std::int64_t n = comm.size();
    for (std::int64_t v : x) ASSERT_EQ(v, n * (n - 1) / 2);
  });
  EXPECT_TRUE(run_ok(report));
  return seen;
}

//! Only two or more workers that fit in the allowed CPUs are pinned, to the first ones.
TEST(ThreadAffinityTest, PinsSeveralWorkersThatFit) {
  EXPECT_TRUE(worker_cpus(1, {0, 1}).empty()) << "one worker stays free to move";
  EXPECT_EQ(worker_cpus(2, {0, 1}), (std::vector<int>{0, 1}));
  EXPECT_EQ(worker_cpus(2, {3, 5, 7}), (std::vector<int>{3, 5}));
  EXPECT_TRUE(worker_cpus(3, {0, 1}).empty()) << "more workers than CPUs: none pinned";
  EXPECT_TRUE(worker_cpus(2, {}).empty());
}

//! With two workers and two CPUs, each worker's ranks run on that worker's CPU only; with
//! pin_threads off, or one worker, they may run on every CPU.
TEST(ThreadAffinityTest, EachWorkerRunsOnItsOwnCpu) {
  const std::vector<int> all = allowed_cpus();
  if (all.size() < 2) GTEST_SKIP() << "needs 2 CPUs, this process may use " << all.size();
  const auto pinned = cpus_seen(5, 2, /*pin=*/true, 8);
  for (std::size_t r = 0; r < pinned.size(); ++r) {
    EXPECT_EQ(pinned[r], std::vector<int>{all[r % 2]}) << "rank " << r;
  }
  for (const auto& cpus : cpus_seen(5, 2, /*pin=*/false, 8)) EXPECT_EQ(cpus, all);
  for (const auto& cpus : cpus_seen(5, 1, /*pin=*/true, 8)) EXPECT_EQ(cpus, all);
}

//! Pinning ends with the run: the caller, and oneTBB's threads that reduced a large buffer
//! inside a pinned worker, keep the process's CPUs.
TEST(ThreadAffinityTest, CallerAndTbbThreadsKeepTheirCpus) {
  const std::vector<int> all = allowed_cpus();
  if (all.size() < 2) GTEST_SKIP() << "needs 2 CPUs, this process may use " << all.size();
  const std::vector<std::string> before = thread_masks();
  ASSERT_FALSE(before.empty());
  cpus_seen(4, 2, /*pin=*/true, 1 << 20);  // 8 MiB per rank: reduced by oneTBB's threads
  EXPECT_EQ(allowed_cpus(), all);
  // A joined worker may still be listed for a moment: join returns once the exiting thread
  // has cleared its tid, before the kernel drops it from /proc/self/task, so a pinned mask
  // that lasts is a failure and one that goes away within the deadline is that worker.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::vector<std::string> after = thread_masks();
  while (std::ranges::count(after, before.front()) != std::ssize(after) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    after = thread_masks();
  }
  for (const std::string& mask : after) EXPECT_EQ(mask, before.front());
}

//! More workers than the CPUs the caller may use: nothing is pinned, and the run is right.
TEST(ThreadAffinityTest, MoreWorkersThanCpusRunUnpinned) {
  const std::vector<int> all = allowed_cpus();
  if (all.empty()) GTEST_SKIP() << "the system does not report CPU masks";
  const ScopedCpus one({all.front()});
  for (const auto& cpus : cpus_seen(6, 2, /*pin=*/true, 1 << 18)) {
    EXPECT_EQ(cpus, std::vector<int>{all.front()});
  }
}

}  // namespace
}  // namespace ranklab::testing
