// How a failing MPI job ends, as a failed emulator run ends: one report, printed by rank 0,
// and one exit code for the whole job. A process whose program failed (a mismatch it found,
// an exception) sends its report to rank 0, which is polling in some wait of its own
// (Runtime::progress checks for reports) or at the end of the run, prints it and ends the job
// with MPI_Abort: the other processes may be waiting for the failed one forever. Rank 0 may
// never poll (blocked in a plain MPI wait without --timeout-ms, or gone): then the failed
// process prints its report itself after a grace period and ends the job.
#pragma once

#include <string>

#include "collectives/mpi/detail/runtime.hpp"
#include "comm/run_report.hpp"

namespace ranklab::mpi_detail {

/// A failed run's report as the emulator's RunReport holds it: `status`, the root cause
/// `rank`, `details` (the table or the error) as the analysis's preamble, the `culprit`
/// (its kind, text and ranks), and `summary` (the result line).
RunReport failure_report(RunStatus status, int rank, const std::string& details,
                         Culprit culprit, const std::string& summary);

/// The report as it travels to rank 0 (Runtime::send_report), and back.
std::string encode_report(const RunReport& report);
RunReport decode_report(const std::string& text);

/// The report as text, as the emulator's ends: the details, "culprit (KIND): TEXT",
/// "result: SUMMARY".
std::string report_text(const RunReport& report);

/// Ends the job from a process whose program failed: rank 0 prints `report`, every process
/// ends, the job's exit status is `exit_code`.
[[noreturn]] void end_job(Runtime& runtime, int exit_code, const RunReport& report);

/// Prints `report` here (as the session renders it: MpiSession::set_report_renderer, else
/// report_text) and ends the job (rank 0, or a report nobody else will print).
[[noreturn]] void print_and_end_job(int exit_code, const RunReport& report);

/// Ends the job from a process that failed with the error another process reports (every
/// member of a mismatched collective finds it; one reports): waits for the job to end, and
/// ends it silently if it has not after the grace period.
[[noreturn]] void await_job_end(int exit_code);

/// Waits, polling for reports at rank 0, until every process has ended its program
/// (collective over the world); a report received meanwhile ends the job.
void await_programs_ended(Runtime& runtime);

}  // namespace ranklab::mpi_detail
