// How a cluster runs: world size, scheduling policy, threads, send mode, timeout, trace.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/device.hpp"
#include "emulator/faults.hpp"
#include "traces/sink.hpp"

namespace ranklab {

/// A scheduling step at which a `preempt` policy runs `rank` instead of rank order's choice.
/// Steps count the picks of a rank fiber on a worker thread, from 0.
struct Preemption {
  std::uint64_t step = 0;
  int rank = 0;
  friend bool operator==(const Preemption&, const Preemption&) = default;
};

/// Which ready rank runs next on a worker thread.
struct SchedulePolicy {
  enum class Kind : std::uint8_t {
    rank_order,  ///< FIFO round-robin, starting in rank order (the default)
    random,      ///< a uniformly random ready rank, from a seeded generator
    pct,         ///< probabilistic concurrency testing: random priorities, DEPTH-1 change points
    preempt,     ///< rank order, except at the listed steps (what `explore` shrinks to)
  };
  Kind kind = Kind::rank_order;
  std::uint64_t seed = 0;
  int depth = 3;  ///< pct only: the bug depth the schedule targets
  std::vector<Preemption> preemptions;  ///< preempt only: by increasing step

  /// Parses `rank-order`, `random:SEED`, `pct:SEED[:DEPTH]`, `preempt:STEP=RANK,...`;
  /// throws UsageError otherwise.
  static SchedulePolicy parse(std::string_view text);
  /// The text form that `parse` accepts back.
  std::string to_string() const;
};

/// What a one-thread run's scheduler did, for `explore` (ClusterOptions::schedule_log).
struct ScheduleLog {
  std::vector<int> picks;  ///< the rank picked at each step
  /// The steps whose pick was not rank order's FIFO choice (rank-order and preempt policies
  /// only): a preempt policy with exactly these reproduces the run.
  std::vector<Preemption> deviations;
};

/// When a send completes.
struct SendMode {
  enum class Kind : std::uint8_t {
    rendezvous,  ///< only once a matching receive is posted (NCCL, large MPI messages)
    eager,       ///< at once: the payload is buffered
    eager_upto,  ///< eager up to `eager_limit` bytes, rendezvous above
  };
  Kind kind = Kind::rendezvous;
  std::size_t eager_limit = 0;

  /// Parses `rendezvous`, `eager`, `eager<=BYTES`; throws UsageError otherwise.
  static SendMode parse(std::string_view text);
  std::string to_string() const;
  /// Whether a message of `bytes` is buffered at the sender.
  bool buffers(std::size_t bytes) const {
    return kind == Kind::eager || (kind == Kind::eager_upto && bytes <= eager_limit);
  }
};

/// Options of one cluster run (an aggregate: use designated initializers).
struct ClusterOptions {
  int world_size = 8;
  SchedulePolicy policy;
  int threads = 1;  ///< OS threads; ranks are pinned round-robin to them
  /// With 2 or more threads and no more than the CPUs this process may use, worker t runs
  /// only on the t-th of those CPUs (Boost 1.74's fiber mutex spins without yielding, and a
  /// worker woken on its waker's CPU stalls both: bench/RESULTS.md, finding 6). Results and
  /// traces do not depend on it.
  bool pin_threads = true;
  SendMode send_mode;
  /// With a send mode that buffers, faults or not: a run that finished only because sends
  /// were buffered ends unsafe (exit 6, culprit `potential-deadlock`), as MUST reports a
  /// potential deadlock (detail/latent_deadlock.hpp). Off: buffering is taken as given.
  bool find_latent_deadlocks = true;
  /// Watchdog: a blocking wait that lasts longer fails the run with TimeoutError.
  std::chrono::milliseconds timeout{60'000};
  /// Stack of each rank's fiber. The model keeps Eigen's temporaries off it
  /// (EIGEN_STACK_ALLOCATION_LIMIT=0); an overflow ends the process with exit code 5 and a
  /// line naming the rank (detail/stack_overflow.hpp).
  std::size_t stack_size = 256 * 1024;
  /// Every operation records where the rank program called it (reports and traces name
  /// it). Off: no site anywhere, as before call sites were recorded; bench/site_bench.cpp
  /// compares the two (the cost is not worth measuring).
  bool call_sites = true;
  /// Every rank's device (comm/device.hpp): `cpu` (tensors in host memory), `cpu-staged`
  /// (a stand-in device whose tensors the Communicator stages through host buffers), or
  /// `cuda`. Rank r's device is (kind, r); Communicator::device() tells the rank program.
  DeviceKind device = DeviceKind::cpu;
  /// Where every operation is recorded; null records nothing and costs nothing.
  std::shared_ptr<TraceSink> trace_sink;
  /// Extra entries for the trace header's `config` (program, arguments, seed, ...).
  nlohmann::json trace_config = nlohmann::json::object();
  /// Faults to inject (faults.hpp); empty: none, at the cost of one pointer test per operation.
  FaultPlan faults;
  /// Filled with every scheduling decision when set; requires threads == 1.
  std::shared_ptr<ScheduleLog> schedule_log;

  /// Defaults overridden by RANKLAB_THREADS, RANKLAB_TIMEOUT_MS, RANKLAB_POLICY,
  /// RANKLAB_SEND_MODE (the one place those variables are read).
  static ClusterOptions from_env();
};

}  // namespace ranklab
