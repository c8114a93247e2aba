// Pinning the cluster's worker threads to CPUs. Private to emulator/.
//
// Why: with several workers, ranks of different threads meet in the fabric's Boost.Fiber
// mutex, whose Boost 1.74 spinlock never yields (it skips its own back-off), and whose
// unlock wakes a waiter of the other thread while still holding the spinlock. A woken worker
// placed on the waker's CPU preempts it and spins until the scheduler's tick: milliseconds
// per hand-off (bench/RESULTS.md, finding 6). Workers on distinct CPUs never preempt each
// other that way.
#pragma once

#include <vector>

namespace ranklab::detail {

/// The CPUs the calling thread may run on, ascending (empty if the system does not say).
std::vector<int> allowed_cpus();

/// The CPU each of `threads` workers should be pinned to: the first `threads` of `allowed`,
/// or none (empty) when there is one worker, or more workers than allowed CPUs (pinning
/// would then stack workers on one CPU, the very thing it avoids).
std::vector<int> worker_cpus(int threads, const std::vector<int>& allowed);

/// Restricts the calling thread to `cpu`. Best effort: returns false if the system refused,
/// and the thread then runs wherever it did.
bool pin_current_thread(int cpu);

}  // namespace ranklab::detail
