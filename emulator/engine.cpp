#include "emulator/engine.hpp"

#include <algorithm>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/scheduler.hpp>

#include "emulator/detail/run_memory.hpp"
#include "emulator/detail/stack_overflow.hpp"
#include "emulator/detail/thread_affinity.hpp"
#include "comm/errors.hpp"
#include "emulator/cluster_thread.hpp"
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

RunReport run_cluster(const ClusterOptions& options, const Engine::RankFunction& rank_fn);

// Worker `index` could not set up: its ranks fail without running, so that the others
// settle and the run ends in a report (exit 5) instead of std::terminate.
void fail_unstarted(Fabric& fabric, int index, int threads, int ranks_here,
                    std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    try {
      error = std::make_exception_ptr(Error(fmt::format(
          "could not start: out of memory while worker thread {} set up its {} ranks", index,
          ranks_here)));
    } catch (...) {  // keep the bare bad_alloc
    }
  } catch (...) {
  }
  const int world = fabric.world_size();
  for (int r = index; r < world; r += threads) fabric.rank_failed(r, error);
}

// Puts Boost's own round-robin scheduler back in place of a run's RankScheduler, which
// dies now (it points into the run's options and schedule log). Out of memory leaves the
// run's in place: a cluster thread's next cluster replaces it (cluster_thread.hpp).
void restore_plain_scheduler(boost::fibers::context* thread_context) noexcept {
  try {
    thread_context->get_scheduler()->set_algo(
        boost::fibers::algo::algorithm::ptr_t(new boost::fibers::algo::round_robin()));
  } catch (...) {
  }
}

// One worker OS thread: installs the run's scheduler, starts its ranks (r % threads ==
// index) as fibers, and joins them. Ranks stay pinned to their thread.
void run_worker(Fabric& fabric, StackArena& stacks, const ClusterOptions& options, int index,
                int threads, bool poll_when_idle, const Engine::RankFunction& rank_fn) {
  const int ranks_here = (options.world_size - index + threads - 1) / threads;
  std::vector<boost::fibers::fiber> fibers;
  boost::fibers::context* thread_context = nullptr;
  try {
    // Everything that allocates before the ranks start (RankScheduler reserves what its
    // noexcept callbacks need): out of memory here fails this worker's ranks, reported.
    // Made here, not by use_scheduling_algorithm, which is noexcept and would terminate.
    // Boost's own context of this thread first (its main and dispatcher fibers): failing
    // the ranks notifies through it.
    thread_context = boost::fibers::context::active();
    boost::fibers::algo::algorithm::ptr_t scheduler(
        new RankScheduler(options.policy, options.world_size, index, ranks_here,
                          options.schedule_log.get(), poll_when_idle));
    thread_context->get_scheduler()->set_algo(std::move(scheduler));
    fibers.reserve(static_cast<std::size_t>(options.world_size / threads + 1));
  } catch (...) {
    fail_unstarted(fabric, index, threads, ranks_here, std::current_exception());
    if (thread_context != nullptr) restore_plain_scheduler(thread_context);
    return;
  }
  for (int r = index; r < options.world_size; r += threads) {
    RankScheduler::set_launching_rank(r);
    fibers.emplace_back(std::allocator_arg, stacks.allocator(static_cast<std::size_t>(r)),
                        [&fabric, r, &rank_fn] { run_rank(fabric, r, rank_fn); });
  }
  RankScheduler::set_launching_rank(-1);
  // The first worker also enforces the cluster timeout, until its ranks and every other
  // worker's have ended (a rank of another worker blocked past the timeout is still seen:
  // the watchdog scans all ranks, and a worker's ranks end only when all can).
  {
    std::optional<Watchdog> watchdog;
    if (index == 0) watchdog.emplace(fabric, options.timeout);
    for (auto& fiber : fibers) fiber.join();
  }
  // Leave the thread as it was, for a cluster thread's next cluster: the last fibers to
  // end may still wait in Boost's queue of terminated fibers, their contexts in `stacks`,
  // which the next cluster's arena reuses; one yield lets the dispatcher release them. Then
  // a plain scheduler in place of this run's, which points into this run's options.
  boost::this_fiber::yield();
  restore_plain_scheduler(thread_context);
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
  detail::check_run_memory(options_.world_size, options_.stack_size, options_.threads);
}

RunReport Engine::run(const RankFunction& rank_fn) {
  try {
    return run_cluster(options_, rank_fn);
  } catch (const std::bad_alloc&) {
    // The fabric's own state, set up before the ranks or gathered after them (the trace's
    // pending operations, its sink): a rank's failure is reported, this is not one.
    const detail::RunMemory need = detail::estimate_run_memory(
        options_.world_size, options_.stack_size, options_.threads);
    throw UsageError(fmt::format(
        "world {} with --stack-kib {}: out of memory setting up or finishing the run (it "
        "needs at least {} bytes, and the trace more)",
        options_.world_size, options_.stack_size / 1024, need.stacks + need.state + need.workers));
  }
}

namespace {

RunReport run_cluster(const ClusterOptions& options_, const Engine::RankFunction& rank_fn) {
  // Only on threads of the emulator's own: the caller's keeps whatever Boost.Fiber scheduler
  // it had (unless it is a cluster thread, outside a cluster); two clusters at once never
  // share a thread or its scheduler state.
  const int threads = std::min(options_.threads, options_.world_size);
  // Before the fabric, which keeps each rank's state in its stack's home.
  StackArena stacks(static_cast<std::size_t>(options_.world_size), options_.stack_size,
                    static_cast<std::size_t>(threads));
  Fabric fabric(options_, stacks);
  if (threads == 1) {
    // On a cluster thread (cluster_thread.hpp): explore's one-thread clusters, one after
    // another, without a thread's start and end each.
    try {
      detail::run_cluster_on_cluster_thread([&] {
        const detail::StackOverflowGuard overflow_report(stacks);
        run_worker(fabric, stacks, options_, 0, 1, false, rank_fn);
      });
    } catch (...) {  // no thread (out of memory for its stack): the ranks fail unstarted
      fail_unstarted(fabric, 0, 1, options_.world_size, std::current_exception());
    }
    return fabric.finish();
  }
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
    try {
      workers.emplace_back([&, t] {
        if (!cpus.empty()) detail::pin_current_thread(cpus[static_cast<std::size_t>(t)]);
        const detail::StackOverflowGuard overflow_report(stacks);  // past its stack: exit 5
        run_worker(fabric, stacks, options_, t, threads, poll_when_idle, rank_fn);
      });
    } catch (...) {  // no thread (out of memory for its stack): its ranks fail unstarted
      fail_unstarted(fabric, t, threads, (options_.world_size - t + threads - 1) / threads,
                     std::current_exception());
    }
  }
  for (auto& worker : workers) worker.join();
  return fabric.finish();
}

}  // namespace

}  // namespace ranklab
