// The emulator's runner: one function of a RankContext on N ranks, as fibers over an
// in-memory fabric. RankContext is the emulator's own API (the fabric's groups, requests
// and native calls), for what drives the fabric directly: replay, the emulator's tests and
// the benchmarks of the fabric alone. Rank programs never see it: they are functions of a
// Communicator&, run by Cluster (collectives/cluster.hpp), which is built on this.
#pragma once

#include <functional>

#include "emulator/options.hpp"
#include "emulator/rank.hpp"
#include "comm/run_report.hpp"

namespace ranklab {

/// Like SimGrid's s4u::Engine: holds the options, and each run() builds a fresh fabric and
/// scheduler state, so several runs can go one after another or side by side in one
/// process. run() returns when every rank has finished or failed, or the run was declared
/// deadlocked; it never hangs (the watchdog bounds what deadlock detection cannot see).
class Engine {
 public:
  /// Throws UsageError for an impossible configuration (world size < 1, threads < 1), or
  /// one whose stacks and rank state cannot fit in what the process may map or the
  /// machine's RAM (detail/run_memory.hpp), naming the world, stack size and bytes needed.
  explicit Engine(ClusterOptions options);

  using RankFunction = std::function<void(RankContext&)>;

  /// Runs `rank_fn` once per rank. Rank failures are reported, not thrown.
  RunReport run(const RankFunction& rank_fn);

  const ClusterOptions& options() const { return options_; }

 private:
  ClusterOptions options_;
};

}  // namespace ranklab
