// The fabric's lock with several worker threads (emulator/detail/fabric_mutex.hpp): it
// excludes across OS threads, both when a contender spins and when it sleeps, and it works
// with the Boost.Fiber condition variable the fabric's waits use.
#include "emulator/detail/fabric_mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>

namespace ranklab::testing {
namespace {

using detail::FabricMutex;

constexpr int kThreads = 4;
constexpr int kIncrements = 50'000;

//! kThreads threads each run `increment(counter)` kIncrements times; returns the counter,
//! deliberately not atomic: only the lock that `increment` takes keeps it exact.
template <typename Increment>
long count_in_threads(Increment increment) {
  long counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) increment(counter);
    });
  }
  for (auto& thread : threads) thread.join();
  return counter;
}

//! Many threads incrementing a plain counter under the lock lose no increment.
TEST(FabricMutexTest, ExcludesAcrossThreads) {
  FabricMutex mutex(/*several_threads=*/true);
  EXPECT_EQ(count_in_threads([&](long& counter) {
              std::lock_guard lock(mutex);
              ++counter;
            }),
            long{kThreads} * kIncrements);
}

//! A contender that outlasts the spin sleeps, and is woken when the holder unlocks.
TEST(FabricMutexTest, LongHoldWakesSleepingContender) {
  FabricMutex mutex(/*several_threads=*/true);
  std::atomic<bool> held{false};
  bool released = false;  // written under the lock by the holder
  bool saw_release = false;
  std::thread holder([&] {
    std::lock_guard lock(mutex);
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // far past the spin
    released = true;
  });
  while (!held) std::this_thread::yield();
  {
    std::lock_guard lock(mutex);
    saw_release = released;
  }
  holder.join();
  EXPECT_TRUE(saw_release);
}

//! The fabric's pattern: a fiber of one thread waits on a condition variable with the lock,
//! a fiber of another thread changes the state under the lock and notifies it.
TEST(FabricMutexTest, ConditionVariableAcrossThreads) {
  FabricMutex mutex(/*several_threads=*/true);
  boost::fibers::condition_variable_any ready;
  constexpr int kRounds = 2'000;
  int turn = 0;  // even: the waiter's turn to see it; odd: the notifier's
  // Each player takes its turn (the counter's parity) kRounds times, on its own thread.
  auto player = [&](int parity) {
    return std::thread([&, parity] {
      boost::fibers::fiber([&] {
        detail::FabricLock lock(mutex);  // what the fabric's waits hold
        for (int i = 0; i < kRounds; ++i) {
          ready.wait(lock, [&] { return turn % 2 == parity; });
          ++turn;
          ready.notify_one();
        }
      }).join();
    });
  };
  std::thread waiter = player(1);
  std::thread notifier = player(0);
  waiter.join();
  notifier.join();
  EXPECT_EQ(turn, 2 * kRounds);
}

//! A deferred FabricLock holds nothing until lock(), and its scope's end releases what it
//! holds: threads that take it late (as a collective's post does) still exclude each other.
TEST(FabricMutexTest, DeferredLockExcludesOnceTaken) {
  FabricMutex mutex(/*several_threads=*/true);
  EXPECT_EQ(count_in_threads([&](long& counter) {
              detail::FabricLock lock(mutex, std::defer_lock);
              lock.lock();
              ++counter;
            }),
            long{kThreads} * kIncrements);
}

}  // namespace
}  // namespace ranklab::testing
