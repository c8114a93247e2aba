// The Open MPI backend's entry point. One MpiSession per process brackets MPI_Init and
// MPI_Finalize; its world() is a Communicator over MPI_COMM_WORLD on which every
// Communicator call works, groups (new_group, split) being MPI communicators. Point-to-point
// algorithms (ring, tree, ...) run unchanged over MPI messages, so their results are bitwise
// the emulator's; `direct` collectives reduce in ascending group rank like the emulator's
// fabric, and MpiOptions::library_collectives calls MPI's own instead.
//
// Where the backends differ (README, "Running on Open MPI"): MPI blocks where the emulator
// would declare a deadlock, which MpiOptions::timeout turns into TimeoutError, and collectives
// are checked only with MpiOptions::check_collectives. Messages are checked as the fabric
// checks them: each carries its sender's side (detail/wire_message.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "collectives/backend.hpp"
#include "collectives/communicator.hpp"
#include "collectives/mpi/mpi_options.hpp"
#include "comm/run_report.hpp"
#include "traces/event.hpp"

namespace ranklab {

namespace mpi_detail {
class Runtime;
}

class MpiSession {
 public:
  /// MPI_Init_thread (MPI_THREAD_FUNNELED: only the main thread calls MPI; oneTBB's workers
  /// only reduce). Throws Error if MPI cannot start.
  MpiSession(int& argc, char**& argv, const MpiOptions& options = {});
  /// The same without the command line (Open MPI takes its settings from mpirun).
  explicit MpiSession(const MpiOptions& options);
  /// Frees the groups' communicators, then MPI_Finalize.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const;  ///< in MPI_COMM_WORLD
  int size() const;
  /// MPI_Get_processor_name: the host this process runs on.
  static std::string host();
  const MpiOptions& options() const { return options_; }

  /// The world as a Communicator whose `automatic` collectives run `algorithm`, with the
  /// session's options.
  Communicator world(Algorithm algorithm = Algorithm::direct) const;

  /// Records every later operation of this process for trace_of_job (as the emulator's
  /// fabric does when a trace sink is set), numbering them, and every group's collectives,
  /// from 0. Every process calls it at the same point with nothing in flight: recorded
  /// messages carry a header, and the collectives' tags derive from their numbers.
  void record_trace();
  /// Collective over the world, once the rank programs have ended: the job's trace at
  /// rank 0 (every process's events, `config` in the header), an empty Trace elsewhere.
  /// Ends the recording.
  Trace trace_of_job(const nlohmann::json& config);

  /// How a report that ends the job with MPI_Abort (a mismatch, a failed rank: exit 4 or 5)
  /// is printed: `render` gives the text for what the failed process found (status,
  /// culprit, details, summary). Without one: the emulator's lines, the details, then
  /// "culprit (KIND): ..." and "result: ...". Every process sets the same.
  void set_report_renderer(std::function<std::string(const RunReport&)> render);

  /// Ends every process of the job with `exit_code` (MPI_Abort), for a process whose rank
  /// program failed: the others would otherwise wait for it forever.
  [[noreturn]] static void abort(int exit_code);

 private:
  MpiOptions options_;
  std::unique_ptr<mpi_detail::Runtime> runtime_;
};

/// The backend of the world of the open session with `options` (MpiSession::world uses the
/// session's); groups made from it inherit them.
std::shared_ptr<Backend> make_mpi_backend(const MpiOptions& options);

}  // namespace ranklab
