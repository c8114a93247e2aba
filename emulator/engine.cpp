#include "emulator/engine.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>

#include "emulator/detail/thread_affinity.hpp"
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "emulator/scheduler.hpp"
#include "emulator/stack_arena.hpp"
#include "emulator/watchdog.hpp"

namespace ranklab {
namespace {

// The body of rank `rank`'s fiber: run the program, tell the fabric how it ended.
void run_rank(Fabric& fabric, int rank, const Engine::RankFunction& rank_fn) {
  RankContext context(fabric, rank);
  boost::this_fiber::properties<RankProperties>().context = &context;
  try {
    rank_fn(context);
    fabric.rank_finished(rank);
  } catch (...) {
    fabric.rank_failed(rank, std::current_exception());
  }
}

// One worker OS thread: installs the run's scheduler, starts its ranks (r % threads ==
// index) as fibers, and joins them. Ranks stay pinned to their thread.
void run_worker(Fabric& fabric, StackArena& stacks, const ClusterOptions& options, int index,
                int threads, bool poll_when_idle, const Engine::RankFunction& rank_fn) {
  const int ranks_here = (options.world_size - index + threads - 1) / threads;
  boost::fibers::use_scheduling_algorithm<RankScheduler>(options.policy, options.world_size,
                                                         index, ranks_here,
                                                         options.schedule_log.get(),
                                                         poll_when_idle);
  std::vector<boost::fibers::fiber> fibers;
  fibers.reserve(static_cast<std::size_t>(options.world_size / threads + 1));
  for (int r = index; r < options.world_size; r += threads) {
    RankScheduler::set_launching_rank(r);
    fibers.emplace_back(std::allocator_arg, stacks.allocator(static_cast<std::size_t>(r)),
                        [&fabric, r, &rank_fn] { run_rank(fabric, r, rank_fn); });
  }
  RankScheduler::set_launching_rank(-1);
  // The first worker also enforces the cluster timeout, until its ranks and every other
  // worker's have ended (a rank of another worker blocked past the timeout is still seen:
  // the watchdog scans all ranks, and a worker's ranks end only when all can).
  std::optional<Watchdog> watchdog;
  if (index == 0) watchdog.emplace(fabric, options.timeout);
  for (auto& fiber : fibers) fiber.join();
}

}  // namespace

Engine::Engine(ClusterOptions options) : options_(std::move(options)) {
  RANKLAB_CHECK(options_.world_size >= 1, "world size must be at least 1, got {}",
                options_.world_size);
  RANKLAB_CHECK(options_.threads >= 1, "threads must be at least 1, got {}", options_.threads);
  RANKLAB_CHECK(options_.stack_size >= 16 * 1024, "stack size must be at least 16 KiB, got {}",
                options_.stack_size);
  RANKLAB_CHECK(!options_.schedule_log || options_.threads == 1,
                "a schedule log needs one thread, got {}", options_.threads);
  options_.faults.validate(options_.world_size);
}

RunReport Engine::run(const RankFunction& rank_fn) {
  Fabric fabric(options_);
  // Always on fresh threads, even with one: the caller's thread keeps whatever Boost.Fiber
  // scheduler it had, and two clusters never share scheduler state.
  const int threads = std::min(options_.threads, options_.world_size);
  StackArena stacks(static_cast<std::size_t>(options_.world_size), options_.stack_size,
                    static_cast<std::size_t>(threads));
  // Several workers each get a CPU of their own (detail/thread_affinity.hpp says why), and
  // then an idle one polls before it sleeps (RankScheduler::suspend_until).
  const std::vector<int> allowed = detail::allowed_cpus();
  const std::vector<int> cpus =
      options_.pin_threads ? detail::worker_cpus(threads, allowed) : std::vector<int>{};
  const bool poll_when_idle =
      threads > 1 && static_cast<std::size_t>(threads) <= std::max<std::size_t>(allowed.size(), 1);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      if (!cpus.empty()) detail::pin_current_thread(cpus[static_cast<std::size_t>(t)]);
      run_worker(fabric, stacks, options_, t, threads, poll_when_idle, rank_fn);
    });
  }
  for (auto& worker : workers) worker.join();
  return fabric.finish();
}

}  // namespace ranklab
