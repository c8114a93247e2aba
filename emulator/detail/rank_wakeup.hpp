// Where a blocked rank sleeps until the fabric completes what it waits for. Private to
// emulator/.
#pragma once

#include <chrono>
#include <mutex>
#include <utility>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/context.hpp>

#include "emulator/detail/fabric_mutex.hpp"

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
  using Lock = std::unique_lock<FabricMutex>;

  /// Sleeps until notify(); may also return spuriously. `lock` holds the fabric mutex.
  void wait(Lock& lock) {
    if (lock.mutex()->several_threads()) {
      condition_.wait(lock);
      return;
    }
    parked_ = boost::fibers::context::active();
    parked_->suspend();
  }

  /// Sleeps until notify() or `deadline`; false on timeout.
  bool wait_until(Lock& lock, std::chrono::steady_clock::time_point deadline) {
    return condition_.wait_until(lock, deadline) == boost::fibers::cv_status::no_timeout;
  }

  /// Wakes the rank if it sleeps (called with the fabric mutex held).
  void notify() {
    if (boost::fibers::context* sleeper = std::exchange(parked_, nullptr)) {
      boost::fibers::context::active()->schedule(sleeper);
      return;
    }
    condition_.notify_one();
  }

 private:
  boost::fibers::context* parked_ = nullptr;  ///< one worker: the suspended fiber
  boost::fibers::condition_variable_any condition_;
};

}  // namespace ranklab::detail
