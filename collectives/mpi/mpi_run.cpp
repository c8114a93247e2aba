#include "collectives/mpi/mpi_run.hpp"

#include <chrono>

#include <fmt/format.h>

#include "collectives/mpi/detail/gather_strings.hpp"
#include "collectives/mpi/detail/job_ending.hpp"
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

// The program's failure other than a timeout: reported to rank 0, and the job ended. A
// message mismatch reads as the emulator's (both sides of the message, one line).
[[noreturn]] void end_on_failure(mpi_detail::Runtime& runtime, RunStatus status,
                                 const std::string& error) {
  const int rank = runtime.world_rank();
  RunReport report;
  if (status == RunStatus::mismatch && error.starts_with("message mismatch")) {
    report = mpi_detail::failure_report(status, rank, error,
                                        {.kind = CulpritKind::message_mismatch, .text = error,
                                         .ranks = {rank}},
                                        error);
  } else {
    // A mismatch other than a user message's is between a collective's members (their
    // algorithm's messages disagree).
    report = mpi_detail::failure_report(
        status, rank, fmt::format("rank {} on {} failed: {}", rank, MpiSession::host(), error),
        {.kind = status == RunStatus::mismatch ? CulpritKind::collective_mismatch
                                               : CulpritKind::rank_failure,
         .text = fmt::format("rank {} failed first: {}", rank, error),
         .ranks = {rank}},
        fmt::format("rank {} failed: {}", rank, error));
  }
  mpi_detail::end_job(runtime, exit_code(status), report);
}

// A mismatch every member of the call found: its reporter (the group's rank 0) has the
// emulator's report of it sent to rank 0; rank 0, when a member, prints its own at once.
[[noreturn]] void end_on_collective_mismatch(mpi_detail::Runtime& runtime,
                                             const CollectiveMismatchError& e) {
  // The root cause is the odd member, as on the emulator (the reporter only prints it).
  const int root = e.blamed().empty() ? runtime.world_rank() : e.blamed().front();
  const RunReport report = mpi_detail::failure_report(
      RunStatus::mismatch, root, e.what(),
      {.kind = CulpritKind::collective_mismatch, .text = e.sentence(), .ranks = e.blamed()},
      e.summary());
  const int code = exit_code(RunStatus::mismatch);
  if (runtime.world_rank() == 0) mpi_detail::print_and_end_job(code, report);
  if (e.reporter()) mpi_detail::end_job(runtime, code, report);
  mpi_detail::await_job_end(code);
}

Ending run_program(MpiSession& session, const MpiRunOptions& options,
                   const std::function<void(Communicator&)>& program) {
  mpi_detail::Runtime& runtime = mpi_detail::Runtime::instance();
  try {
    Communicator world = session.world(options.algorithm);
    program(world);
    return {};
  } catch (const ReportedFailure& e) {
    // Rank 0, told while it waited: another process's program failed.
    mpi_detail::print_and_end_job(e.exit_code(), e.report());
  } catch (const TimeoutError& e) {
    return {RankOutcome::State::deadlocked, RunStatus::deadlock, e.what()};
  } catch (const CollectiveMismatchError& e) {
    end_on_collective_mismatch(runtime, e);
  } catch (const MismatchError& e) {
    end_on_failure(runtime, RunStatus::mismatch, e.what());
  } catch (const std::exception& e) {
    end_on_failure(runtime, RunStatus::rank_failed, e.what());
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
  // Each ending names its rank, its call and the call's site ("rank 3 waited more than
  // 1000 ms in send to rank 1 ..."), as the emulator's watchdog does; the culprit line says
  // "watchdog" once, in its kind.
  report.summary = fmt::format("watchdog: {}", first);
  report.culprit = {CulpritKind::watchdog, first, {report.root_cause_rank}};
  std::string& endings_text = report.analysis.preamble;
  for (const std::string& ending : endings) {
    if (!ending.empty()) endings_text += ending + "\n";
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
  // Only timeouts get here with a failure. Another process may still fail and report it:
  // rank 0 keeps polling for reports until every program has ended.
  mpi_detail::await_programs_ended(runtime);
  // Every process is out of its waits, so the end of the run can communicate (on a
  // communicator no program message can be left on).
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

Launched MpiLauncher::launch(const LaunchOptions& options, const GatheringProgram& program,
                             bool gather) {
  MpiRunOptions run_options{.algorithm = options.algorithm, .record = options.record};
  if (options.record) {
    run_options.trace_config = options.trace_config;
    run_options.trace_config["backend"] = "mpi";
    run_options.trace_config["hosts"] = job_hosts();
    if (session_.options().library_collectives) run_options.trace_config["algorithm"] = "mpi";
  }
  std::string mine;
  const auto start = std::chrono::steady_clock::now();
  MpiRun run = run_on_mpi(session_, run_options, [&](Communicator& world) {
    mine = program(world);
  });
  Launched out;
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count();
  // Every process is out of its program: the results travel on the end's own communicator.
  if (gather) out.results = gather_to_rank0(mine);
  out.report = std::move(run.report);
  out.trace = std::move(run.trace);
  out.has_results = session_.rank() == 0;
  return out;
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
