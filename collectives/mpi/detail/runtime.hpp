// The process-wide state of the MPI backend: one per MPI process, made by MpiSession. It
// holds the groups' communicators (one set per group name, as the emulator has one Group
// per name, so two Communicators over one group share their collective sequence) and the
// progress engine that advances staged collectives.
//
// Why a progress engine. MPI requires every member of a communicator to start its
// collectives in one order. A direct all_reduce is two MPI collectives with a reduction
// between them; the second can start only once the first has completed, which each member
// observes at a different moment. So second stages go to a communicator of their own and
// start strictly in call order (GroupState::awaiting_second), whichever member polls; and
// every wait of the process polls every staged collective, so a rank waiting on a message
// still lets its earlier non-blocking collective move on, as the emulator's rendezvous does.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/mpi/detail/collective_plan.hpp"
#include "collectives/mpi/detail/recorder.hpp"
#include "comm/run_report.hpp"

namespace ranklab::mpi_detail {

class StagedCollective;

/// One group's communicators as this process sees them. A non-member has none (rank -1).
struct GroupState {
  std::string name;
  std::vector<int> ranks;  ///< global ranks, in group order
  int rank = -1;           ///< this process's group rank
  MPI_Comm user = MPI_COMM_NULL;      ///< user point-to-point messages
  MPI_Comm internal = MPI_COMM_NULL;  ///< algorithms' messages (tags.hpp), native first stages
  MPI_Comm second = MPI_COMM_NULL;    ///< native second stages, in call order
  std::uint64_t next_sequence = 0;    ///< the group's collective calls so far
  std::deque<StagedCollective*> awaiting_second;  ///< staged calls whose second stage is due
  std::int64_t trace_index = -1;  ///< the group's index in this process's trace, once used

  GroupState() = default;
  GroupState(const GroupState&) = delete;
  GroupState& operator=(const GroupState&) = delete;
  ~GroupState();
};

/// A native collective in flight: its plan and how far it got. Never throws from advance();
/// a failed stage is kept for wait() to rethrow.
class StagedCollective {
 public:
  StagedCollective(std::shared_ptr<GroupState> group, std::unique_ptr<CollectivePlan> plan);
  StagedCollective(const StagedCollective&) = delete;
  StagedCollective& operator=(const StagedCollective&) = delete;
  ~StagedCollective();

  /// Moves on as far as it can without blocking; true once done (or failed).
  bool advance() noexcept;
  bool done() const { return stage_ == Stage::done; }
  /// Rethrows the failure of a done call.
  void rethrow() const;
  const std::string& what() const { return plan_->what; }

 private:
  enum class Stage { first, awaiting_second, second, done };
  void fail(int code) noexcept;
  void finish_local() noexcept;

  std::shared_ptr<GroupState> group_;
  std::unique_ptr<CollectivePlan> plan_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  Stage stage_ = Stage::first;
  std::exception_ptr error_;
};

class Runtime {
 public:
  Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  /// The session's runtime; throws UsageError when no MpiSession is open.
  static Runtime& instance();

  int world_rank() const { return world_->rank; }
  int world_size() const { return static_cast<int>(world_->ranks.size()); }
  const std::shared_ptr<GroupState>& world() const { return world_; }

  /// The group of `kind` over `global_ranks`, made on first use: MPI_Comm_create_group,
  /// collective over the members only (a non-member gets a state without communicators).
  std::shared_ptr<GroupState> group(std::string_view kind, std::span<const int> global_ranks);

  /// Starts `plan` as a staged call (its first stage is posted now, in call order).
  std::shared_ptr<StagedCollective> start(const std::shared_ptr<GroupState>& group,
                                          std::unique_ptr<CollectivePlan> plan);
  /// Runs `plan` to completion with blocking MPI calls. Only when idle(): a blocked process
  /// cannot advance other staged calls.
  void run_blocking(CollectivePlan& plan);

  /// Records every later operation of this process (MpiSession::record_trace).
  void start_recording();
  void stop_recording();
  /// The recorder, or null when not recording.
  Recorder* recorder() { return recorder_.get(); }
  /// `group`'s index in the recorder's trace.
  std::uint32_t trace_group(GroupState& group);
  /// A communicator over the world used only once the rank programs have ended.
  MPI_Comm end_comm() const { return end_comm_; }

  /// Keeps an abandoned send's buffer alive until the session ends (MPI may still read it).
  void keep_until_end(std::vector<std::byte> buffer) { orphans_.push_back(std::move(buffer)); }

  /// Numbers this process's next operation when not recording (the recorder numbers them
  /// otherwise): the `op #` a mismatch report names, as the emulator's rank_seq.
  std::uint64_t count_operation() { return next_operation_++; }
  /// The number this process's next operation gets (recording or not).
  std::uint64_t next_operation() const {
    return recorder_ ? recorder_->next_rank_seq() : next_operation_;
  }

  /// A failing process's report to rank 0 (job_ending.cpp): `report` is what rank 0 prints,
  /// `exit_code` what the job ends with. Non-blocking; the request is kept for report_sent().
  void send_report(int exit_code, const std::string& report);
  /// Whether the report of send_report has left this process (an MPI test).
  bool report_sent();
  /// At rank 0: throws ReportedFailure if another process sent its report. Every poll of
  /// every wait calls it (progress()), so rank 0 learns of a failure while it waits.
  void check_reports();

  /// How a report that ends the job is printed (MpiSession::set_report_renderer); empty:
  /// as text (job_ending.hpp).
  using ReportRenderer = std::function<std::string(const RunReport&)>;
  void set_report_renderer(ReportRenderer render) { report_renderer_ = std::move(render); }
  const ReportRenderer& report_renderer() const { return report_renderer_; }

  /// Advances every staged call; drops the finished ones. At rank 0, check_reports() first.
  void progress();
  /// Whether no staged call is in flight.
  bool idle() const { return staged_.empty(); }

  /// Polls `done` (which must call an MPI test) until it is true, running progress()
  /// between polls. Throws TimeoutError naming this rank and `what()` (the call, without
  /// the rank) after `timeout` (0: never).
  ///
  /// How a wait spends the CPU: it spins kSpinPolls polls first (a message between
  /// processes on one node takes microseconds), then naps kNap between polls. Ranks often
  /// share cores (8 processes on a 2-core machine, or a node running other work): a wait
  /// that spins, or only yields as MPI's own blocking waits do, keeps competing for the CPU
  /// with the rank it waits for, where a napping one gives it away and the scheduler wakes
  /// it promptly. On the seed step with 8 processes on 2 loaded CPUs (load 14-17), napping
  /// took the median step from ~26 ms (spinning and yielding) to ~4 ms (bench/RESULTS.md).
  template <typename Done, typename What>
  void wait_until(Done&& done, What&& what, std::chrono::milliseconds timeout) {
    if (done()) return;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned polls = 1; !done(); ++polls) {
      progress();
      if (polls >= kSpinPolls && pause_timed_out(start, timeout)) {
        throw_timeout(world_rank(), what(), timeout);
      }
    }
  }

 private:
  static constexpr unsigned kSpinPolls = 64;
  static constexpr std::chrono::microseconds kNap{20};
  /// Gives the CPU away (a nap), then says whether the wait is over time.
  static bool pause_timed_out(std::chrono::steady_clock::time_point start,
                              std::chrono::milliseconds timeout);
  /// "rank 1 waited more than 1000 ms in WHAT", the emulator's watchdog's words.
  [[noreturn]] static void throw_timeout(int rank, const std::string& what,
                                         std::chrono::milliseconds timeout);

  MPI_Comm groups_comm_ = MPI_COMM_NULL;  ///< where MPI_Comm_create_group runs
  MPI_Comm end_comm_ = MPI_COMM_NULL;     ///< end of run: outcomes and traces
  MPI_Comm report_comm_ = MPI_COMM_NULL;  ///< failing processes' reports to rank 0
  std::vector<char> report_;               ///< this process's report, while it is sent
  MPI_Request report_request_ = MPI_REQUEST_NULL;
  std::uint64_t next_operation_ = 0;
  std::unique_ptr<Recorder> recorder_;
  std::vector<std::vector<std::byte>> orphans_;
  std::shared_ptr<GroupState> world_;
  std::map<std::string, std::shared_ptr<GroupState>, std::less<>> groups_;
  std::vector<std::shared_ptr<StagedCollective>> staged_;  ///< in call order
  ReportRenderer report_renderer_;
};

/// Frees `*comm` unless it is null.
void free_comm(MPI_Comm* comm) noexcept;

}  // namespace ranklab::mpi_detail
