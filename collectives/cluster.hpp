// The virtual cluster as rank programs see it: runs one function of a Communicator& on N
// ranks, as fibers over the emulator's in-memory fabric. The same function runs on real
// processes through another backend (MPI); nothing emulator-specific reaches it.
#pragma once

#include <functional>

#include "collectives/communicator.hpp"
#include "collectives/launcher.hpp"
#include "collectives/options.hpp"
#include "emulator/options.hpp"
#include "comm/run_report.hpp"

namespace ranklab {

/// Like SimGrid's s4u::Engine: holds the options, and each run() builds a fresh fabric and
/// scheduler state, so several clusters can run one after another or side by side in one
/// process. run() returns when every rank has finished or failed, or the run was declared
/// deadlocked; it never hangs (the watchdog bounds what deadlock detection cannot see).
class Cluster {
 public:
  /// A rank program: called once per rank with that rank's world communicator.
  using RankProgram = std::function<void(Communicator&)>;

  /// `algorithm` is the world communicator's default for every collective whose options say
  /// `automatic` (and for groups made from it); `automatic` itself fails every rank with a
  /// UsageError. Throws UsageError for an impossible configuration (world size < 1, ...).
  explicit Cluster(ClusterOptions options, Algorithm algorithm = Algorithm::direct);

  /// Runs `program` once per rank. Rank failures are reported, not thrown.
  RunReport run(const RankProgram& program);

  const ClusterOptions& options() const { return options_; }
  Algorithm algorithm() const { return algorithm_; }

 private:
  ClusterOptions options_;
  Algorithm algorithm_;
};

/// The emulator as a Launcher: each run is a fresh Cluster with these options (its own:
/// threads, stacks, policy, send mode, faults, timeout, device), recording into memory when
/// LaunchOptions::record says so (then the options' own trace sink and config give way).
class EmulatorLauncher final : public Launcher {
 public:
  /// Throws UsageError for an impossible configuration, as Cluster does.
  explicit EmulatorLauncher(ClusterOptions options);

  int world_size() const override { return options_.world_size; }
  DeviceKind device() const override { return options_.device; }
  int local_ranks() const override { return options_.world_size; }
  const ClusterOptions& options() const { return options_; }

 protected:
  Launched launch(const LaunchOptions& options, const GatheringProgram& program,
                  bool gather) override;

 private:
  ClusterOptions options_;
};

}  // namespace ranklab
