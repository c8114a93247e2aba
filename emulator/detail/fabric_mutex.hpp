// The fabric's one lock. Private to emulator/.
#pragma once

#include <boost/fiber/mutex.hpp>

namespace ranklab::detail {

/// A Boost.Fiber mutex when the run has several worker threads, and no lock at all when it
/// has one. With one worker, fibers switch only where they choose to, and no fabric code
/// suspends while it holds the lock except inside a condition variable's wait, which
/// releases it: nothing else can run inside a critical section, so there is nothing to
/// exclude. Locking a Boost fiber mutex costs ~300 instructions a round trip (its spinlock
/// and the active-fiber lookup), a sixth of an 8-rank all_reduce (bench/RESULTS.md).
/// Used with boost::fibers::condition_variable_any, which accepts any lockable.
class FabricMutex {
 public:
  explicit FabricMutex(bool several_threads) : several_threads_(several_threads) {}
  FabricMutex(const FabricMutex&) = delete;
  FabricMutex& operator=(const FabricMutex&) = delete;

  void lock() {
    if (several_threads_) mutex_.lock();
  }
  void unlock() {
    if (several_threads_) mutex_.unlock();
  }
  /// False: lock() and unlock() do nothing (one worker thread).
  bool several_threads() const { return several_threads_; }

 private:
  const bool several_threads_;
  boost::fibers::mutex mutex_;
};

}  // namespace ranklab::detail
