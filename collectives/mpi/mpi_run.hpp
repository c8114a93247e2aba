// One rank program run on the MPI job, ended the way the emulator's Cluster::run ends a run:
// with a RunReport (complete at rank 0) and, when recording, the job's trace.
//
// How a run ends on real processes:
//   - every rank returns: exit 0 (or what the program's own checks say);
//   - a wait outlives MpiOptions::timeout: TimeoutError ends it; every blocked process
//     ends its program that way, then all of them hand their outcome and their events,
//     the pending operations included, to rank 0 (status deadlock, exit 3), which can write
//     the trace for `ranklab replay` to diagnose on the emulator;
//   - a rank throws anything else (a mismatch, a failed check, a bug): the others may be
//     waiting for it forever, so it sends its report to rank 0, which prints it with the
//     emulator's culprit line and ends the job with MPI_Abort (exit 4 for a mismatch, 5
//     otherwise; detail/job_ending.hpp). No trace is written then.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "collectives/communicator.hpp"
#include "collectives/launcher.hpp"
#include "collectives/mpi/mpi_session.hpp"
#include "comm/run_report.hpp"
#include "traces/event.hpp"

namespace ranklab {

struct MpiRun {
  RunReport report;  ///< at rank 0; elsewhere only status and this rank's outcome
  Trace trace;       ///< at rank 0, when recording
};

struct MpiRunOptions {
  Algorithm algorithm = Algorithm::direct;  ///< the world's default (--algo)
  bool record = false;                      ///< trace the run (MpiSession::record_trace)
  nlohmann::json trace_config = nlohmann::json::object();  ///< the trace header's config
};

/// Runs `program` with this process's world Communicator (the session's options). Returns
/// on every process once all have ended (collective over the world), unless a rank threw
/// something other than TimeoutError: then the job ends with MPI_Abort.
MpiRun run_on_mpi(MpiSession& session, const MpiRunOptions& options,
                  const std::function<void(Communicator&)>& program);

/// The MPI job as a Launcher: every process runs its own rank (the session's options are
/// this launcher's own: eager size, timeout, --check-collectives, the library's collectives).
/// A recorded trace's header names the backend (mpi) and the hosts, and the algorithm `mpi`
/// where the library's own collectives run. Collective over the world, as run_on_mpi is;
/// only rank 0 has results (the others get Launched::has_results false).
class MpiLauncher final : public Launcher {
 public:
  explicit MpiLauncher(MpiSession& session) : session_(session) {}

  int world_size() const override { return session_.size(); }
  DeviceKind device() const override { return session_.options().device; }
  int local_ranks() const override { return 1; }

 protected:
  Launched launch(const LaunchOptions& options, const GatheringProgram& program,
                  bool gather) override;

 private:
  MpiSession& session_;
};

/// The hosts of the job's processes, by rank, at rank 0 (collective over the world).
std::vector<std::string> job_hosts();

/// Every process's `mine`, by rank, at rank 0 (empty elsewhere). Collective over the world,
/// on a communicator of its own: for results once the rank programs have ended.
std::vector<std::string> gather_to_rank0(const std::string& mine);

/// Rank 0's `value`, on every process (collective): the exit code all processes return.
int broadcast_from_rank0(int value);

}  // namespace ranklab
