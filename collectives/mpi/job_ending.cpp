#include "collectives/mpi/detail/job_ending.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "collectives/mpi/mpi_session.hpp"

namespace ranklab::mpi_detail {
namespace {

// How long a failed process leaves rank 0 to print its report and end the job: rank 0 polls
// every few microseconds while it waits, but 8 processes may share 2 loaded CPUs.
constexpr std::chrono::seconds kGrace{5};

}  // namespace

RunReport failure_report(RunStatus status, int rank, const std::string& details,
                         Culprit culprit, const std::string& summary) {
  RunReport report;
  report.status = status;
  report.root_cause_rank = rank;
  report.summary = summary;
  report.analysis.preamble = details;
  report.culprit = std::move(culprit);
  report.details = fmt::format("{}\n{}\n", details, culprit_line(report.culprit));
  return report;
}

std::string encode_report(const RunReport& report) {
  return nlohmann::json{{"status", static_cast<int>(report.status)},
                        {"rank", report.root_cause_rank},
                        {"details", report.analysis.preamble},
                        {"kind", static_cast<int>(report.culprit.kind)},
                        {"culprit", report.culprit.text},
                        {"ranks", report.culprit.ranks},
                        {"summary", report.summary}}
      .dump();
}

RunReport decode_report(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  return failure_report(static_cast<RunStatus>(j.at("status").get<int>()),
                        j.at("rank").get<int>(), j.at("details").get<std::string>(),
                        {.kind = static_cast<CulpritKind>(j.at("kind").get<int>()),
                         .text = j.at("culprit").get<std::string>(),
                         .ranks = j.at("ranks").get<std::vector<int>>()},
                        j.at("summary").get<std::string>());
}

std::string report_text(const RunReport& report) {
  return fmt::format("{}result: {}\n", report.details, report.summary);
}

void print_and_end_job(int exit_code, const RunReport& report) {
  const auto& render = Runtime::instance().report_renderer();
  const std::string text = render ? render(report) : report_text(report);
  std::fflush(stdout);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  MpiSession::abort(exit_code);
}

void end_job(Runtime& runtime, int exit_code, const RunReport& report) {
  if (runtime.world_rank() == 0) print_and_end_job(exit_code, report);
  runtime.send_report(exit_code, encode_report(report));
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
    print_and_end_job(e.exit_code(), e.report());
  }
  check(code, [] { return std::string("the end of the run (MPI_Test)"); });
}

}  // namespace ranklab::mpi_detail
