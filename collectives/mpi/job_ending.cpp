#include "collectives/mpi/detail/job_ending.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "collectives/mpi/mpi_session.hpp"

namespace ranklab::mpi_detail {
namespace {

// How long a failed process leaves rank 0 to print its report and end the job: rank 0 polls
// every few microseconds while it waits, but 8 processes may share 2 loaded CPUs.
constexpr std::chrono::seconds kGrace{5};

}  // namespace

std::string failure_report(const std::string& details, const std::string& kind,
                           const std::string& culprit, const std::string& summary) {
  return fmt::format("{}\nculprit ({}): {}\nresult: {}\n", details, kind, culprit, summary);
}

void print_and_end_job(int exit_code, const std::string& report) {
  std::fflush(stdout);
  std::fputs(report.c_str(), stdout);
  std::fflush(stdout);
  MpiSession::abort(exit_code);
}

void end_job(Runtime& runtime, int exit_code, const std::string& report) {
  if (runtime.world_rank() == 0) print_and_end_job(exit_code, report);
  runtime.send_report(exit_code, report);
  const auto deadline = std::chrono::steady_clock::now() + kGrace;
  while (std::chrono::steady_clock::now() < deadline) {
    runtime.report_sent();  // an MPI test: lets a large report go out
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  print_and_end_job(exit_code, report);
}

void await_job_end(int exit_code) {
  std::this_thread::sleep_for(2 * kGrace);
  MpiSession::abort(exit_code);
}

void await_programs_ended(Runtime& runtime) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(runtime.end_comm(), &request),
        [] { return std::string("the end of the run (MPI_Ibarrier)"); });
  int code = MPI_SUCCESS;
  try {
    // progress() checks for reports at rank 0.
    runtime.wait_until(
        [&] {
          int done = 0;
          code = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
          return code != MPI_SUCCESS || done != 0;
        },
        [] { return std::string(); }, std::chrono::milliseconds(0));
  } catch (const ReportedFailure& e) {
    print_and_end_job(e.exit_code(), e.what());
  }
  check(code, [] { return std::string("the end of the run (MPI_Test)"); });
}

}  // namespace ranklab::mpi_detail
