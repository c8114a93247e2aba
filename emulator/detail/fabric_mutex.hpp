// The fabric's one lock. Private to emulator/.
#pragma once

#include <atomic>
#include <mutex>  // std::defer_lock_t

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ranklab::detail {

/// No lock at all when the run has one worker thread, and a thread-level lock (spin, then
/// sleep in the kernel) when it has several.
///
/// One worker: fibers switch only where they choose to, and no fabric code suspends while it
/// holds the lock except inside a condition variable's wait, which releases it: nothing else
/// can run inside a critical section, so there is nothing to exclude.
///
/// Several workers: the same property (no fabric critical section ever suspends its fiber)
/// is what makes a thread-level lock safe here. The holder runs to its unlock without a
/// fiber switch, so a contender can wait for it by spinning and then sleeping on a futex,
/// blocking only its own thread. A Boost fiber mutex (what this used to be) instead suspends
/// the contending fiber, and its unlock wakes it through the other worker's remote-ready
/// queue: with 65,536 ranks on two threads every fabric call met the other thread's fibers
/// queued on the mutex, and the run took 1.5x as long as on one thread (bench/RESULTS.md,
/// "--threads 2 at scale"). The spin is short: most critical sections take well under a
/// microsecond, and a long one (a collective's reduction of megabytes, which oneTBB spreads
/// over every CPU) must leave the CPU to that work rather than burn it.
///
/// Used with boost::fibers::condition_variable_any, which accepts any lockable and unlocks it
/// before it suspends the waiting fiber.
class FabricMutex {
 public:
  explicit FabricMutex(bool several_threads) : several_threads_(several_threads) {}
  FabricMutex(const FabricMutex&) = delete;
  FabricMutex& operator=(const FabricMutex&) = delete;

  void lock() {
    if (!several_threads_) return;
    int expected = kFree;
    if (state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire)) return;
    lock_contended();
  }

  void unlock() {
    if (!several_threads_) return;
    if (state_.exchange(kFree, std::memory_order_release) == kContended) state_.notify_one();
  }
  /// False: lock() and unlock() do nothing (one worker thread).
  bool several_threads() const { return several_threads_; }

 private:
  // Drepper's three-state futex mutex ("Futexes Are Tricky", mutex2), after a bounded spin.
  static constexpr int kFree = 0;
  static constexpr int kLocked = 1;     // held, nobody asleep
  static constexpr int kContended = 2;  // held, and someone may be asleep on it
  // ~12 us of pauses on this project's machine (AMD EPYC: ~25 ns a pause, measured): longer
  // than a fabric call's critical section, far shorter than a scheduler tick.
  static constexpr int kSpins = 512;

  void lock_contended() {
    for (int i = 0; i < kSpins; ++i) {
      pause();
      if (state_.load(std::memory_order_relaxed) != kFree) continue;
      int expected = kFree;
      if (state_.compare_exchange_weak(expected, kLocked, std::memory_order_acquire)) return;
    }
    // Mark the lock contended so that its holder wakes us, and sleep until it is free.
    while (state_.exchange(kContended, std::memory_order_acquire) != kFree) {
      state_.wait(kContended, std::memory_order_relaxed);
    }
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }

  const bool several_threads_;
  std::atomic<int> state_{kFree};
};

/// Holds a FabricMutex for a scope, like std::unique_lock, and is what the fabric's
/// condition variables unlock while they wait. Its own because std::unique_lock's unlock()
/// checks ownership and throws, so GCC calls it out of line from every destructor: ten
/// instructions a fabric call for a lock that, with one worker, does nothing.
class FabricLock {
 public:
  explicit FabricLock(FabricMutex& mutex) : mutex_(&mutex) { mutex_->lock(); }
  /// Not yet locked: the holder locks once it has done what needs no lock.
  FabricLock(FabricMutex& mutex, std::defer_lock_t) : mutex_(&mutex), owns_(false) {}
  ~FabricLock() {
    if (owns_) mutex_->unlock();
  }
  FabricLock(const FabricLock&) = delete;
  FabricLock& operator=(const FabricLock&) = delete;

  // Lockable, for boost::fibers::condition_variable_any.
  void lock() {
    mutex_->lock();
    owns_ = true;
  }
  void unlock() {
    owns_ = false;
    mutex_->unlock();
  }
  FabricMutex* mutex() const { return mutex_; }

 private:
  FabricMutex* mutex_;
  bool owns_ = true;
};

}  // namespace ranklab::detail
