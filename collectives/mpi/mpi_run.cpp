#include "collectives/mpi/mpi_run.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "collectives/mpi/detail/gather_strings.hpp"
#include "collectives/mpi/detail/runtime.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "comm/errors.hpp"

namespace ranklab {
namespace {

// How this process's program ended.
struct Ending {
  RankOutcome::State state = RankOutcome::State::finished;
  RunStatus status = RunStatus::ok;
  std::string error;
};

// The program's failure other than a timeout: printed, and the job ended.
[[noreturn]] void abort_job(int rank, RunStatus status, const std::string& error) {
  const std::string host = MpiSession::host();
  std::fflush(stdout);
  std::fprintf(stdout, "rank %d on %s failed: %s\nculprit (%s): rank %d failed first: %s\n"
               "result: rank %d failed: %s\n",
               rank, host.c_str(), error.c_str(),
               status == RunStatus::mismatch ? "mismatch" : "rank-failure", rank, error.c_str(),
               rank, error.c_str());
  std::fflush(stdout);
  MpiSession::abort(exit_code(status));
}

// A mismatch every member of the call found: its reporter prints the emulator's report of
// it, the others leave it the time to before they end the job.
[[noreturn]] void abort_on_collective_mismatch(const CollectiveMismatchError& e) {
  if (e.reporter()) {
    const std::string table = e.what();
    std::fflush(stdout);
    std::fprintf(stdout, "%s\nculprit (collective-mismatch): %s\nresult: %s\n", table.c_str(),
                 e.sentence().c_str(), table.substr(0, table.find('\n')).c_str());
    std::fflush(stdout);
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  MpiSession::abort(exit_code(RunStatus::mismatch));
}

Ending run_program(MpiSession& session, const MpiRunOptions& options,
                   const std::function<void(Communicator&)>& program) {
  try {
    Communicator world = session.world(options.algorithm);
    program(world);
    return {};
  } catch (const TimeoutError& e) {
    return {RankOutcome::State::deadlocked, RunStatus::deadlock, e.what()};
  } catch (const CollectiveMismatchError& e) {
    abort_on_collective_mismatch(e);
  } catch (const MismatchError& e) {
    abort_job(session.rank(), RunStatus::mismatch, e.what());
  } catch (const std::exception& e) {
    abort_job(session.rank(), RunStatus::rank_failed, e.what());
  }
}

// Rank 0's report from every process's ending.
RunReport make_report(const std::vector<std::string>& endings) {
  RunReport report;
  std::string first;
  for (std::size_t r = 0; r < endings.size(); ++r) {
    RankOutcome outcome;
    if (!endings[r].empty()) {
      outcome.state = RankOutcome::State::deadlocked;
      outcome.error = endings[r];
      if (report.status == RunStatus::ok) {
        report.status = RunStatus::deadlock;
        report.root_cause_rank = static_cast<int>(r);
        first = endings[r];
      }
    }
    report.ranks.push_back(std::move(outcome));
  }
  if (report.ok()) {
    report.summary = fmt::format("ok: {} finished", plural(endings.size(), "rank"));
    return report;
  }
  report.summary = fmt::format("watchdog: {}", first);
  report.culprit = {"watchdog", report.summary, {report.root_cause_rank}};
  std::string& endings_text = report.analysis.preamble;
  for (std::size_t r = 0; r < endings.size(); ++r) {
    if (!endings[r].empty()) endings_text += fmt::format("rank {}: {}\n", r, without_rank_prefix(static_cast<int>(r), endings[r]));
  }
  endings_text +=
      "replay the trace on the emulator (ranklab replay TRACE) for the wait-for cycle and "
      "the culprit";
  report.render_details();
  return report;
}

}  // namespace

MpiRun run_on_mpi(MpiSession& session, const MpiRunOptions& options,
                  const std::function<void(Communicator&)>& program) {
  mpi_detail::Runtime& runtime = mpi_detail::Runtime::instance();
  if (options.record) session.record_trace();
  const Ending ending = run_program(session, options, program);
  // Only timeouts get here with a failure: every process is out of its waits, so the end
  // of the run can communicate (on a communicator no program message can be left on).
  const std::vector<std::string> endings = mpi_detail::gather_strings(runtime, ending.error);
  MpiRun run;
  if (options.record) run.trace = session.trace_of_job(options.trace_config);
  if (session.rank() == 0) {
    run.report = make_report(endings);
  } else {
    run.report.status = ending.status;
    run.report.ranks.resize(static_cast<std::size_t>(session.size()));
    run.report.ranks[static_cast<std::size_t>(session.rank())] = {ending.state, ending.error};
  }
  // Every process learns the verdict, so that all exit with the same code.
  run.report.status =
      static_cast<RunStatus>(broadcast_from_rank0(static_cast<int>(run.report.status)));
  return run;
}

std::vector<std::string> job_hosts() { return gather_to_rank0(MpiSession::host()); }

std::vector<std::string> gather_to_rank0(const std::string& mine) {
  return mpi_detail::gather_strings(mpi_detail::Runtime::instance(), mine);
}

int broadcast_from_rank0(int value) {
  MPI_Bcast(&value, 1, MPI_INT, 0, mpi_detail::Runtime::instance().end_comm());
  return value;
}

}  // namespace ranklab
