// The Boost.Fiber scheduling algorithm of one worker thread. Its state belongs to the
// cluster run that created it (no process-wide statics, unlike Boost's work_stealing), so
// runs are reproducible and several clusters can coexist in one process.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/properties.hpp>

#include "emulator/options.hpp"
#include "emulator/random.hpp"

namespace ranklab {

class RankContext;

/// Per-fiber data: which rank a fiber runs (-1 for Boost's main and dispatcher fibers).
class RankScheduler;

class RankProperties : public boost::fibers::fiber_properties {
 public:
  /// Boost creates the properties when the fiber is first scheduled, inside its
  /// constructor: the rank is the one the worker thread is launching at that moment.
  explicit RankProperties(boost::fibers::context* ctx);
  /// Gives properties made ahead of time (RankScheduler's reserve) to `ctx`.
  void attach(boost::fibers::context* ctx);

  int rank;
  RankContext* context = nullptr;  ///< set by the rank's fiber when it starts
  RankScheduler* scheduler = nullptr;  ///< the worker's, which gave these properties
  bool yielding = false;           ///< set by RankContext::yield for the next wake-up
};

/// Picks the next ready rank per SchedulePolicy:
/// - rank-order: FIFO, ranks start in rank order;
/// - random:SEED: a uniformly random ready rank;
/// - pct:SEED:D: PCT (Burckhardt et al., ASPLOS 2010): distinct random priorities, the
///   highest ready one runs; at D-1 random steps the running rank drops below all others.
///   A yielding rank also drops, so polling loops cannot starve the others.
/// - preempt:STEP=RANK,...: rank-order, except that at each listed step the listed rank runs
///   if it is ready (a "preemption" of rank order's choice).
/// With a ScheduleLog every pick is recorded, and under rank-order and preempt the picks
/// that were not FIFO's choice, so that explore can replay and shrink a schedule.
/// Boost's own fibers (main, dispatcher) run when no rank is ready, and otherwise once per
/// round of the thread's ranks, as Boost's round_robin would run them: Boost's dispatcher
/// re-queues itself every time it resumes a fiber, so running it first would put a
/// dispatcher switch between every two ranks (bench/RESULTS.md, finding 3). With one worker
/// thread the round is at least kMinRound picks: there the dispatcher has no other thread's
/// wake-ups to collect, only sleepers' deadlines (the watchdog's tick, wait_for), and each
/// of its runs costs two fiber switches and a clock read.
class RankScheduler : public boost::fibers::algo::algorithm_with_properties<RankProperties> {
 public:
  /// `ranks_on_thread`: how many ranks this worker runs, the length of a round. `log` (may
  /// be null) receives every pick; only one thread of a run may have one. `poll_when_idle`:
  /// with nothing ready, poll for a wake-up a while before sleeping in the kernel (only
  /// worth it when every worker has a CPU of its own: see suspend_until).
  RankScheduler(const SchedulePolicy& policy, int world_size, int thread_index,
                int ranks_on_thread, ScheduleLog* log = nullptr, bool poll_when_idle = false);

  void awakened(boost::fibers::context* ctx, RankProperties& props) noexcept override;
  /// Boost asks for a fiber's properties inside awakened(), which may not throw: they come
  /// from a reserve made in the constructor, so running out of memory while the ranks
  /// start cannot abort the process there.
  boost::fibers::fiber_properties* new_properties(boost::fibers::context* ctx) override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  void suspend_until(std::chrono::steady_clock::time_point const& until) noexcept override;
  void notify() noexcept override;

  /// Puts `ctx`, a fiber of this worker suspended with no deadline (so in no sleep queue),
  /// on its ready queue: what Boost's scheduler::schedule does for it, without checking the
  /// sleep queue and looking its properties up twice on the way (a sixth of an 8-rank
  /// all_reduce's fiber work, bench/RESULTS.md).
  static void wake(boost::fibers::context* ctx) noexcept {
    auto& props = *static_cast<RankProperties*>(ctx->get_properties());
    props.scheduler->enqueue_rank(ctx, props);
  }

  /// Suspends `self`, the calling rank's fiber, until wake(self): what Boost's
  /// context::suspend does (its scheduler resumes the algorithm's pick_next), with rank
  /// order's common pick inline instead of two calls into Boost and a virtual one (with
  /// wake(): ~800 -> ~530 instructions of an 8-rank all_reduce of one float, bench/RESULTS.md).
  /// The pick is pick_next's, so every policy's schedule stays the same.
  static void suspend(boost::fibers::context* self) noexcept {
    static_cast<RankProperties*>(self->get_properties())->scheduler->pick()->resume();
  }

  /// The rank whose fiber the worker thread creates next (RankProperties reads it); -1 for
  /// a fiber of the worker's own (a watchdog, the PyTorch bridge's decider), which runs when
  /// no rank is ready and otherwise once per round.
  static void set_launching_rank(int rank);
  /// Whether a rank of this worker is ready to run (the worker's own fibers aside).
  bool has_ready_rank() const noexcept;

  /// The calling fiber's properties if it is a rank of a running cluster, else null
  /// (outside any cluster worker thread, or on a worker's own main fiber).
  static RankProperties* current_rank();

  ~RankScheduler() override;

  /// One worker thread's shortest round (see the class comment): 64 rank switches take
  /// ~5 us, nothing beside a watchdog tick of milliseconds.
  static constexpr int kMinRound = 64;

 private:
  /// awakened() of what the plain FIFO does not cover: Boost's own fibers, the other
  /// policies, a full ring.
  void awakened_slow(boost::fibers::context* ctx, RankProperties& props) noexcept;
  /// awakened() of a rank's fiber: the plain FIFO's push inline (which leaves `yielding`
  /// alone: only PCT reads it), anything else out of line.
  void enqueue_rank(boost::fibers::context* ctx, RankProperties& props) noexcept {
    if (fifo_size_ < quick_capacity_) [[likely]] {
      fifo_at(fifo_size_++) = ctx;
      return;
    }
    awakened_slow(ctx, props);
  }
  /// pick_next(): plain rank order's common pick inline (without the prefetching that many
  /// ranks need), anything else out of line.
  boost::fibers::context* pick() noexcept {
    return quick_picks_ && fifo_turn() ? pop_fifo_head() : pick_next_slow();
  }
  /// Under plain rank order, whether the FIFO's head runs next: the round of ranks lasts,
  /// or Boost's own fibers have nothing to do.
  bool fifo_turn() const noexcept {
    return fifo_size_ != 0 && (round_left_ > 0 || system_.empty());
  }
  boost::fibers::context* pop_fifo_head() noexcept {
    --round_left_;
    auto* ctx = fifo_[fifo_head_];
    fifo_head_ = (fifo_head_ + 1) & fifo_mask_;
    --fifo_size_;
    return ctx;
  }
  boost::fibers::context* pick_next_slow() noexcept;
  boost::fibers::context* pick_rank() noexcept;
  boost::fibers::context* pick_fifo() noexcept;
  /// The ring's i-th entry from its head (i <= fifo_mask_).
  boost::fibers::context*& fifo_at(std::size_t i) noexcept {
    return fifo_[(fifo_head_ + i) & fifo_mask_];
  }
  void log_pick(boost::fibers::context* ctx, bool deviation) noexcept;
  /// Prefetches the context kPrefetchDistance picks ahead in the plain FIFO, and the
  /// stack frames below it, when the thread runs at least kPrefetchMinRanks ranks (fewer
  /// stay in the caches, and a small collective's picks need no extra work).
  void prefetch_ahead() noexcept;
  static constexpr std::size_t kPrefetchDistance = 4;
  static constexpr int kPrefetchMinRanks = 1024;
  boost::fibers::context* pick_system() noexcept;
  void lower_priority(int rank) noexcept;

  SchedulePolicy policy_;
  SplitMix64 random_;
  std::deque<boost::fibers::context*> system_;   // Boost's own fibers
  // rank-order. A deque allocates as it grows, in awakened(), which may not throw: this
  // ring holds every rank of the thread from the start. Its capacity is a power of two, so
  // that an index wraps with a mask (fifo_mask_, the capacity less one).
  std::unique_ptr<boost::fibers::context*[]> fifo_;
  std::size_t fifo_mask_ = 0;
  /// The ring's capacity under plain rank order, else 0: enqueue_rank's one test.
  std::size_t quick_capacity_ = 0;
  std::size_t fifo_head_ = 0;
  std::size_t fifo_size_ = 0;
  std::vector<boost::fibers::context*> pool_;    // random
  std::map<std::int64_t, boost::fibers::context*> by_priority_;  // pct
  /// pct: map nodes made in the constructor and reused, so awakened() never allocates.
  std::vector<std::map<std::int64_t, boost::fibers::context*>::node_type> spare_nodes_;
  std::vector<std::unique_ptr<RankProperties>> spare_properties_;
  std::vector<std::int64_t> priority_;           // pct, by rank
  std::vector<std::uint64_t> change_points_;     // pct, sorted step numbers
  std::uint64_t steps_ = 0;
  std::int64_t lowest_ = 0;                      // pct: next priority below all others
  int round_ = 1;                 // ranks on this thread
  /// Rank picks left before Boost's own fibers run again (round_ less the picks since they
  /// last ran; below zero while they had nothing to do).
  std::int64_t round_left_ = 1;
  /// Rank picks so far (preempt's steps, the log's), not counted under plain rank order,
  /// where nothing reads it.
  std::uint64_t picks_ = 0;
  std::size_t next_preemption_ = 0;   // preempt: index into policy_.preemptions
  ScheduleLog* log_ = nullptr;
  bool poll_when_idle_ = false;
  /// rank-order with no schedule log: awakened() and pick_next() take their short paths
  /// (push to and pop from the ring), the policy's other cases stay out of line.
  bool plain_fifo_ = false;
  bool prefetch_ = false;  ///< many ranks on this thread (prefetch_ahead)
  bool quick_picks_ = false;  ///< plain_fifo_ and not prefetch_: pick()'s inline case

  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::atomic<bool> notified_{false};  // a wake-up is pending (notify() since the last sleep)
};

}  // namespace ranklab
