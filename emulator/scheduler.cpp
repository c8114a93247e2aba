#include "emulator/scheduler.hpp"

#include <algorithm>
#include <bit>

#include <boost/fiber/context.hpp>

namespace ranklab {
namespace {

thread_local int launching_rank = -1;
thread_local bool on_cluster_worker = false;  // a RankScheduler runs this thread's fibers

// suspend_until's polling before it sleeps: ~100 us of pause instructions on this project's
// machine (AMD EPYC: ~25 ns a pause, measured).
constexpr int kPollsBeforeSleeping = 4096;

void pause_cpu() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// PCT needs an estimate of the run's length to place its change points; a few hundred
// scheduling steps per rank covers the scenarios and the seed's training step.
constexpr std::uint64_t kPctStepsPerRank = 256;

}  // namespace

void RankScheduler::set_launching_rank(int rank) { launching_rank = rank; }

RankProperties* RankScheduler::current_rank() {
  // Asking Boost.Fiber on another thread would install a scheduler there, and its main
  // fiber has no properties at all: check both before looking.
  if (!on_cluster_worker) return nullptr;
  auto* props = static_cast<RankProperties*>(boost::fibers::context::active()->get_properties());
  return props != nullptr && props->rank >= 0 ? props : nullptr;
}

RankScheduler::~RankScheduler() { on_cluster_worker = false; }

RankScheduler::RankScheduler(const SchedulePolicy& policy, int world_size, int thread_index,
                             int ranks_on_thread, ScheduleLog* log, bool poll_when_idle)
    : policy_(policy),
      random_(policy.seed * 0x100000001b3ULL + static_cast<std::uint64_t>(thread_index)),
      // One worker runs the whole world (threads = min(threads, world)).
      round_(std::max(ranks_on_thread, ranks_on_thread == world_size ? kMinRound : 1)),
      round_left_(round_),
      log_(log),
      poll_when_idle_(poll_when_idle),
      plain_fifo_(policy.kind == SchedulePolicy::Kind::rank_order && policy.preemptions.empty() &&
                  log == nullptr),
      prefetch_(ranks_on_thread >= kPrefetchMinRanks),
      quick_picks_(plain_fifo_ && !prefetch_) {
  on_cluster_worker = true;
  // Everything awakened() and new_properties() will need, allocated here, where running
  // out of memory is an exception the worker can report: a rank is in a ready queue at
  // most once, and Boost's main, dispatcher and watchdog fibers need properties too.
  const auto ranks = static_cast<std::size_t>(std::max(ranks_on_thread, 0)) + 1;
  spare_properties_.reserve(ranks + 3);
  for (std::size_t i = 0; i < ranks + 3; ++i) {
    spare_properties_.push_back(std::make_unique<RankProperties>(nullptr));
  }
  switch (policy_.kind) {
    case SchedulePolicy::Kind::rank_order:
    case SchedulePolicy::Kind::preempt:
      // A rank is ready at most once: the ring never needs to grow for the ranks.
      fifo_mask_ = std::bit_ceil(std::max<std::size_t>(ranks - 1, 1)) - 1;
      fifo_ = std::make_unique<boost::fibers::context*[]>(fifo_mask_ + 1);
      if (plain_fifo_) quick_capacity_ = fifo_mask_ + 1;
      break;
    case SchedulePolicy::Kind::random:
      pool_.reserve(ranks);
      break;
    case SchedulePolicy::Kind::pct:
      spare_nodes_.reserve(ranks);
      for (std::size_t i = 0; i < ranks; ++i) by_priority_.emplace(static_cast<std::int64_t>(i), nullptr);
      while (!by_priority_.empty()) spare_nodes_.push_back(by_priority_.extract(by_priority_.begin()));
      break;
  }
  if (policy_.kind != SchedulePolicy::Kind::pct) return;
  // Distinct initial priorities d .. d+n-1 in a random order (Fisher-Yates).
  const auto n = static_cast<std::size_t>(world_size);
  priority_.resize(n);
  for (std::size_t i = 0; i < n; ++i) priority_[i] = policy_.depth + static_cast<std::int64_t>(i);
  for (std::size_t i = n; i > 1; --i) std::swap(priority_[i - 1], priority_[random_.below(i)]);
  const std::uint64_t horizon = kPctStepsPerRank * std::max<std::uint64_t>(n, 1);
  for (int i = 1; i < policy_.depth; ++i) change_points_.push_back(1 + random_.below(horizon));
  std::sort(change_points_.begin(), change_points_.end());
  lowest_ = policy_.depth - 1;
}

RankProperties::RankProperties(boost::fibers::context* ctx)
    : fiber_properties(ctx), rank(launching_rank) {}

void RankProperties::attach(boost::fibers::context* ctx) {
  ctx_ = ctx;
  rank = launching_rank;
}

boost::fibers::fiber_properties* RankScheduler::new_properties(boost::fibers::context* ctx) {
  RankProperties* props = nullptr;
  if (spare_properties_.empty()) {
    props = new RankProperties(ctx);  // more fibers than foreseen
  } else {
    props = spare_properties_.back().release();
    spare_properties_.pop_back();
    props->attach(ctx);
  }
  props->scheduler = this;
  return props;
}

void RankScheduler::awakened(boost::fibers::context* ctx, RankProperties& props) noexcept {
  if (props.rank >= 0) [[likely]] return enqueue_rank(ctx, props);
  awakened_slow(ctx, props);
}

[[gnu::noinline]] void RankScheduler::awakened_slow(boost::fibers::context* ctx,
                                                   RankProperties& props) noexcept {
  if (props.rank < 0) {
    system_.push_back(ctx);
    return;
  }
  switch (policy_.kind) {
    case SchedulePolicy::Kind::rank_order:
    case SchedulePolicy::Kind::preempt:
      if (fifo_size_ > fifo_mask_) [[unlikely]] {  // more ready fibers than ranks: grow
        const std::size_t capacity = 2 * (fifo_mask_ + 1);
        auto grown = std::make_unique<boost::fibers::context*[]>(capacity);
        for (std::size_t i = 0; i < fifo_size_; ++i) grown[i] = fifo_at(i);
        fifo_ = std::move(grown);
        fifo_mask_ = capacity - 1;
        fifo_head_ = 0;
        if (plain_fifo_) quick_capacity_ = capacity;
      }
      fifo_at(fifo_size_++) = ctx;
      break;
    case SchedulePolicy::Kind::random:
      pool_.push_back(ctx);
      break;
    case SchedulePolicy::Kind::pct:
      if (props.yielding) lower_priority(props.rank);
      if (spare_nodes_.empty()) {
        by_priority_.emplace(priority_[static_cast<std::size_t>(props.rank)], ctx);
      } else {
        auto node = std::move(spare_nodes_.back());
        spare_nodes_.pop_back();
        node.key() = priority_[static_cast<std::size_t>(props.rank)];
        node.mapped() = ctx;
        by_priority_.insert(std::move(node));
      }
      break;
  }
  props.yielding = false;
}

void RankScheduler::lower_priority(int rank) noexcept {
  priority_[static_cast<std::size_t>(rank)] = lowest_--;
}

boost::fibers::context* RankScheduler::pick_next() noexcept { return pick(); }

[[gnu::noinline]] boost::fibers::context* RankScheduler::pick_next_slow() noexcept {
  if (plain_fifo_ && fifo_turn()) {  // with many ranks, which the caches no longer hold
    auto* ctx = pop_fifo_head();
    prefetch_ahead();
    return ctx;
  }
  if (!system_.empty() && (round_left_ <= 0 || !has_ready_rank())) return pick_system();
  --round_left_;
  return pick_rank();
}

void RankScheduler::prefetch_ahead() noexcept {
  // A few picks ahead, the rank's Boost context (at the top of its stack, below the rank's
  // home) and the 2 KiB of frames below it, which its resumption reads: with thousands of
  // ranks they have left the caches since it last ran, and a switch waited on them
  // (bench/RESULTS.md §3: 65,536 ranks 0.365 -> 0.25 s of CPU). A prefetch never faults.
  if (fifo_size_ <= kPrefetchDistance) return;
  // As an address, not a pointer: the frames lie outside the context object.
  const auto at = reinterpret_cast<std::uintptr_t>(fifo_at(kPrefetchDistance));
  for (std::uintptr_t below = 32 * 64; below > 0; below -= 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(at - below), 1);
  }
  for (std::uintptr_t line = 0; line < 4; ++line) {
    __builtin_prefetch(reinterpret_cast<const void*>(at + 64 * line), 1);
  }
}

boost::fibers::context* RankScheduler::pick_system() noexcept {
  round_left_ = round_;
  auto* ctx = system_.front();
  system_.pop_front();
  return ctx;
}

bool RankScheduler::has_ready_rank() const noexcept {
  return fifo_size_ != 0 || !pool_.empty() || !by_priority_.empty();
}

void RankScheduler::log_pick(boost::fibers::context* ctx, bool deviation) noexcept {
  const int rank = properties(ctx).rank;
  try {
    log_->picks.push_back(rank);
    if (deviation) log_->deviations.push_back(Preemption{picks_, rank});
  } catch (...) {  // out of memory: the log is a debugging aid, the run goes on
  }
}

boost::fibers::context* RankScheduler::pick_fifo() noexcept {
  if (fifo_size_ == 0) return nullptr;
  std::size_t chosen = 0;  // position in the ring, from its head
  const auto& preemptions = policy_.preemptions;
  while (next_preemption_ < preemptions.size() &&
         preemptions[next_preemption_].step <= picks_) {
    const Preemption& p = preemptions[next_preemption_++];
    if (p.step != picks_) continue;
    // The listed rank runs if it is ready; otherwise rank order's choice stands.
    for (std::size_t i = 0; i < fifo_size_; ++i) {
      if (properties(fifo_at(i)).rank == p.rank) {
        chosen = i;
        break;
      }
    }
  }
  auto* ctx = fifo_at(chosen);
  if (log_) log_pick(ctx, chosen != 0);
  if (chosen == 0) {
    fifo_head_ = (fifo_head_ + 1) & fifo_mask_;  // the common case
  } else {
    for (std::size_t i = chosen; i + 1 < fifo_size_; ++i) fifo_at(i) = fifo_at(i + 1);
  }
  --fifo_size_;
  ++picks_;
  return ctx;
}

boost::fibers::context* RankScheduler::pick_rank() noexcept {
  boost::fibers::context* ctx = nullptr;
  switch (policy_.kind) {
    case SchedulePolicy::Kind::rank_order:
    case SchedulePolicy::Kind::preempt:
      return pick_fifo();
    case SchedulePolicy::Kind::random: {
      if (pool_.empty()) return nullptr;
      const std::size_t i = random_.below(pool_.size());
      ctx = pool_[i];
      pool_[i] = pool_.back();
      pool_.pop_back();
      if (log_) log_pick(ctx, false);
      ++picks_;
      return ctx;
    }
    case SchedulePolicy::Kind::pct: {
      if (by_priority_.empty()) return nullptr;
      auto node = by_priority_.extract(std::prev(by_priority_.end()));
      ctx = node.mapped();
      spare_nodes_.push_back(std::move(node));  // within the capacity reserved for every rank
      ++steps_;
      // At a change point the chosen rank drops below every other: it runs now, but
      // after its next block or yield it is the last to be picked.
      while (!change_points_.empty() && change_points_.front() <= steps_) {
        change_points_.erase(change_points_.begin());
        lower_priority(properties(ctx).rank);
      }
      if (log_) log_pick(ctx, false);
      ++picks_;
      return ctx;
    }
  }
  return nullptr;
}

bool RankScheduler::has_ready_fibers() const noexcept {
  return !system_.empty() || has_ready_rank();
}

void RankScheduler::suspend_until(std::chrono::steady_clock::time_point const& until) noexcept {
  // A worker with nothing ready is usually waiting for the other worker to finish the
  // collective its ranks are in, which takes microseconds; waking a thread asleep in the
  // kernel takes tens on this project's VM (bench/RESULTS.md). So poll for a while first,
  // as MPI's progress engines do, then sleep. Not when workers outnumber the CPUs: there the
  // poll would take the CPU from the very worker it waits for (the seed step with 8 workers
  // on 2 CPUs ran 1.8x slower).
  for (int i = 0; poll_when_idle_ && i < kPollsBeforeSleeping; ++i) {
    if (notified_.load(std::memory_order_acquire)) break;
    pause_cpu();
  }
  if (!notified_.load(std::memory_order_acquire)) {
    auto pending = [this] { return notified_.load(std::memory_order_acquire); };
    std::unique_lock<std::mutex> lock(mutex_);
    if (until == std::chrono::steady_clock::time_point::max()) {
      wakeup_.wait(lock, pending);
    } else {
      wakeup_.wait_until(lock, until, pending);
    }
  }
  // Cleared before Boost's dispatcher looks at its remote queue again, so a wake-up whose
  // notify() finds the flag still set has its fiber queued where that look will find it.
  notified_.store(false, std::memory_order_release);
}

void RankScheduler::notify() noexcept {
  // Only the first notify() since the worker last slept needs the lock and the kernel: the
  // others find the flag set, and the worker has not yet cleared it (it clears it after it
  // wakes, before it looks for work).
  if (notified_.exchange(true, std::memory_order_acq_rel)) return;
  // Taking the lock orders this with a worker between checking the flag and sleeping.
  { const std::lock_guard<std::mutex> lock(mutex_); }
  wakeup_.notify_all();
}

}  // namespace ranklab
