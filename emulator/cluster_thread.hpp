// Cluster threads: the worker threads of one-thread clusters, kept from one cluster to the
// next.
//
// Why: `ranklab explore` runs thousands of one-thread clusters, each job one after another.
// A fresh thread per cluster cost each of them a clone, glibc's release of the thread's
// stack (madvise) and malloc arena at its exit, Boost.Fiber's per-thread setup (its
// dispatcher fiber, std::random_device's seeding of its spinlocks), and the stack-overflow
// guard's alternate signal stack: system calls that change the process's mappings, which
// with two jobs interrupt the other job's CPU (TLB shootdowns) and wait on the
// address-space lock (bench/RESULTS.md, §4 Explore scales). A kept thread pays them once.
//
// Each calling thread keeps its own cluster thread, started on first use and ended with the
// calling thread (two callers never share one), so clusters started from different threads
// still run side by side, and a cluster started by a rank of another gets a thread of its
// own. A cluster never runs on a thread that is not a cluster thread: the caller's
// Boost.Fiber scheduler, whatever it is, is left alone.
#pragma once

#include <functional>

namespace ranklab {

/// Runs `body` on the calling thread's cluster thread (on the calling thread itself if it
/// is one, outside a cluster), and returns when it has, rethrowing what it throws. The
/// one-thread clusters `body` runs then run on that thread, with no hand-off to another
/// thread and back per cluster: explore's jobs run their schedules so. Throws
/// std::system_error if the thread cannot start (no memory for its stack).
void run_on_cluster_thread(const std::function<void()>& body);

namespace detail {

/// Runs `cluster`, the whole of a one-thread cluster's worker, on a cluster thread: the
/// calling thread if it is one, outside a cluster, else the calling thread's own. Returns
/// once `cluster` has; it must not throw (as on a std::thread, an exception ends the
/// process). Throws std::system_error if the thread cannot start: `cluster` did not run.
void run_cluster_on_cluster_thread(const std::function<void()>& cluster);

}  // namespace detail

}  // namespace ranklab
