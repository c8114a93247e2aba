#include "collectives/mpi/mpi_session.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/detail/runtime.hpp"
#include "collectives/mpi/detail/trace_gather.hpp"
#include "comm/errors.hpp"

namespace ranklab {

namespace {

void init_mpi(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  mpi_detail::check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided),
                    [] { return std::string("MPI_Init_thread"); });
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv, const MpiOptions& options) : options_(options) {
  init_mpi(&argc, &argv);
  runtime_ = std::make_unique<mpi_detail::Runtime>();
}

MpiSession::MpiSession(const MpiOptions& options) : options_(options) {
  init_mpi(nullptr, nullptr);
  runtime_ = std::make_unique<mpi_detail::Runtime>();
}

MpiSession::~MpiSession() {
  runtime_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int MpiSession::rank() const { return runtime_->world_rank(); }
int MpiSession::size() const { return runtime_->world_size(); }

std::string MpiSession::host() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(length));
}

Communicator MpiSession::world(Algorithm algorithm) const {
  return Communicator(make_mpi_backend(options_), algorithm);
}

void MpiSession::set_report_renderer(std::function<std::string(const RunReport&)> render) {
  runtime_->set_report_renderer(std::move(render));
}

void MpiSession::record_trace() { runtime_->start_recording(); }

Trace MpiSession::trace_of_job(const nlohmann::json& config) {
  Trace trace = mpi_detail::gather_trace(*runtime_, config);
  runtime_->stop_recording();
  return trace;
}

void MpiSession::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace ranklab
