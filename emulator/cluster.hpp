// The virtual cluster: runs one function on N ranks as fibers over an in-memory fabric.
#pragma once

#include <functional>

#include "emulator/options.hpp"
#include "emulator/rank.hpp"
#include "emulator/report.hpp"

namespace ranklab {

/// Like SimGrid's s4u::Engine: holds the options, and each run() builds a fresh fabric and
/// scheduler state, so several clusters can run one after another or side by side in one
/// process. run() returns when every rank has finished or failed, or the run was declared
/// deadlocked; it never hangs (the watchdog bounds what deadlock detection cannot see).
class Cluster {
 public:
  /// Throws UsageError for an impossible configuration (world size < 1, threads < 1), or
  /// one whose stacks and rank state cannot fit in what the process may map or the
  /// machine's RAM (detail/run_memory.hpp), naming the world, stack size and bytes needed.
  explicit Cluster(ClusterOptions options);

  using RankFunction = std::function<void(RankContext&)>;

  /// Runs `rank_fn` once per rank. Rank failures are reported, not thrown.
  RunReport run(const RankFunction& rank_fn);

  const ClusterOptions& options() const { return options_; }

 private:
  ClusterOptions options_;
};

}  // namespace ranklab
