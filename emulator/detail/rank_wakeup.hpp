// Where a blocked rank sleeps until the fabric completes what it waits for. Private to
// emulator/.
#pragma once

#include <chrono>
#include <cstdint>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/context.hpp>

#include "emulator/detail/fabric_mutex.hpp"
#include "emulator/scheduler.hpp"

namespace ranklab::detail {

/// One rank's sleep. With one worker thread, a waiting fiber simply suspends and the
/// completing one puts it back on the ready queue: nothing can run between releasing the
/// (absent) fabric lock and suspending, so no wake-up can be lost, and Boost's condition
/// variable (a spinlock, its wait queue and two lookups of the active fiber per round
/// trip) was 8-10% of an 8-rank all_reduce's samples (bench/RESULTS.md). With several
/// workers a completion can come from another thread while the waiter is still on its way
/// to suspending, which the condition variable's own lock rules out, so they use it. Timed
/// waits always do.
class RankWakeup {
 public:
  using Lock = FabricLock;

  /// Sleeps until notify(); may also return spuriously. `lock` holds the fabric mutex.
  void wait(Lock& lock) {
    if (lock.mutex()->several_threads()) {
      condition_.wait(lock);
      return;
    }
    // Only the rank's own fiber waits here, so the active context is looked up (a
    // thread-local) once per rank, not once per wait.
    if (fiber_ == 0) fiber_ = reinterpret_cast<std::uintptr_t>(boost::fibers::context::active());
    fiber_ |= kParked;
    RankScheduler::suspend(fiber());
  }

  /// Sleeps until notify() or `deadline`; false on timeout.
  bool wait_until(Lock& lock, std::chrono::steady_clock::time_point deadline) {
    return condition_.wait_until(lock, deadline) == boost::fibers::cv_status::no_timeout;
  }

  /// Wakes the rank if it sleeps (called with the fabric mutex held).
  void notify() {
    if ((fiber_ & kParked) != 0) {
      fiber_ &= ~kParked;
      // Straight onto the sleeper's (the one worker's) ready queue: what the active
      // context's schedule() does for a fiber of its own thread, without looking up the
      // active context to get there, nor the sleep queue (wait() has no deadline).
      RankScheduler::wake(fiber());
      return;
    }
    condition_.notify_one();
  }

 private:
  static constexpr std::uintptr_t kParked = 1;  // contexts are aligned: bit 0 is free
  boost::fibers::context* fiber() const {
    return reinterpret_cast<boost::fibers::context*>(fiber_ & ~kParked);
  }

  /// One worker: the rank's fiber once it has waited (0 before), bit 0 set while it is
  /// suspended in wait(). One word, as a rank's slot is kept for a million ranks.
  std::uintptr_t fiber_ = 0;
  boost::fibers::condition_variable_any condition_;
};

}  // namespace ranklab::detail
