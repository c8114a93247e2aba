// What starts a rank program on N ranks, whatever runs them: the emulator's fibers
// (EmulatorLauncher, collectives/cluster.hpp), the processes of an MPI job (MpiLauncher,
// collectives/mpi/mpi_run.hpp), and any later backend. A caller that runs its program
// through this interface runs the same program, with the same options and the same result,
// on every one of them: a rank program is a function of a Communicator& (DESIGN.md §3).
//
// The options every launcher takes are LaunchOptions, given to each run; what only one
// backend has (the emulator's threads, stacks, policy and faults; the MPI session's
// processes and --check-collectives) is that launcher's own, given when it is made.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/communicator.hpp"
#include "collectives/options.hpp"
#include "comm/device.hpp"
#include "comm/run_report.hpp"
#include "traces/event.hpp"

namespace ranklab {

/// The options of one run that mean the same on every launcher.
struct LaunchOptions {
  Algorithm algorithm = Algorithm::direct;  ///< the world's default (--algo)
  bool record = false;                      ///< record the run's trace (Launched::trace)
  /// The trace header's config; a launcher adds what only it knows (MPI: backend, hosts).
  nlohmann::json trace_config = nlohmann::json::object();
};

/// What one run gave. Where the ranks run in several processes, only the process that
/// reports (MPI's rank 0) holds everything; the others hold `has_results == false`, their own
/// rank's outcome in `report` and the run's status (the same on every process).
struct Launched {
  RunReport report;
  Trace trace;  ///< when LaunchOptions::record, where has_results
  /// Each rank's bytes, by global rank, where the program returns some (run_gathering) and
  /// has_results; a rank that failed gave none (empty).
  std::vector<std::string> results;
  bool has_results = true;
  double ms = 0.0;  ///< the run's wall time, start-up included, milliseconds
};

class Launcher {
 public:
  /// A rank program: called once per rank with that rank's world communicator.
  using Program = std::function<void(Communicator&)>;
  /// One that hands back its rank's results as bytes (encoded as it likes), gathered by rank.
  using GatheringProgram = std::function<std::string(Communicator&)>;

  virtual ~Launcher() = default;

  /// The number of ranks a run has.
  virtual int world_size() const = 0;
  /// The device the ranks' buffers live on (cpu: the host).
  virtual DeviceKind device() const = 0;
  /// How many of the ranks run in this process: all of them on the emulator, one on each
  /// MPI process. (What a program shares between its ranks is shared this many ways.)
  virtual int local_ranks() const = 0;

  /// Runs `program` once per rank. Rank failures are reported (Launched::report), not
  /// thrown; a launcher may end the whole job on one instead (MPI: a failure other than a
  /// timeout ends the job with MPI_Abort). Throws UsageError for a configuration that
  /// cannot run, before any rank starts.
  Launched run(const LaunchOptions& options, const Program& program) {
    return launch(options, [&program](Communicator& world) {
      program(world);
      return std::string();
    }, /*gather=*/false);
  }
  /// The same, with every rank's returned bytes in Launched::results.
  Launched run_gathering(const LaunchOptions& options, const GatheringProgram& program) {
    return launch(options, program, /*gather=*/true);
  }

 protected:
  /// The run itself: `gather` says whether the program's bytes are kept (by rank).
  virtual Launched launch(const LaunchOptions& options, const GatheringProgram& program,
                          bool gather) = 0;
};

}  // namespace ranklab
