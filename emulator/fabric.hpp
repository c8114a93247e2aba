// The in-memory fabric: point-to-point matching, native collectives, and the bookkeeping
// that lets it decide, exactly, when a run is deadlocked.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/fiber/condition_variable.hpp>

#include "emulator/detail/fabric_mutex.hpp"
#include "emulator/detail/fabric_state.hpp"
#include "emulator/detail/fault_injector.hpp"
#include "emulator/detail/fingerprint_book.hpp"
#include "emulator/detail/operation.hpp"
#include "emulator/detail/rank_home.hpp"
#include "emulator/detail/recorded_sites.hpp"
#include "emulator/detail/wait_graph.hpp"
#include "emulator/diagnosis/snapshot.hpp"
#include "comm/fingerprint.hpp"
#include "emulator/options.hpp"
#include "comm/run_report.hpp"
#include "emulator/request.hpp"

namespace ranklab {
namespace detail {
class LatentDeadlocks;
}

/// Shared by every rank of one run. All state is guarded by one fiber mutex, so the
/// deadlock check (every live rank blocked) is exact with any number of OS threads.
class Fabric {
 public:
  /// Each rank's slot and operation live in its home in `stacks` (detail/rank_home.hpp),
  /// which must outlive the fabric.
  Fabric(const ClusterOptions& options, StackArena& stacks);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  const ClusterOptions& options() const { return options_; }
  int world_size() const { return options_.world_size; }
  /// Read without the lock by every rank: it must not go through groups_, which new_group
  /// may reallocate on another thread.
  const Group& world() const { return *world_; }
  const Group& group(std::string_view kind, std::span<const int> global_ranks);

  // Posting. `rank` is the caller's global rank.
  Request isend(int rank, const Group& group, ConstBuffer data, int dst, int tag);
  Request irecv(int rank, const Group& group, MutableBuffer data, int src, int tag);
  Request icollective(int rank, const Group& group, const CollectiveArgs& args);
  /// Posts a collective and waits for it: icollective's work without a Request, so a
  /// blocking call allocates nothing and updates no atomic reference count. Throws as
  /// Request::wait does.
  void collective(int rank, const Group& group, const CollectiveArgs& args);

  // Fingerprints of the communicator's collectives (fabric_fingerprint.cpp).
  /// Posts `rank`'s fingerprint of its next collective on `group` and checks it at once
  /// against the members that posted theirs. If they differ, the rank waits there until
  /// the verdict (every member's call, exit 4) and throws MismatchError if it is the rank
  /// blamed, else PeerAbortedError; otherwise it never blocks. Returns the call's sequence
  /// number in the group; until end_collective the rank counts as inside that collective.
  std::uint64_t begin_collective(int rank, const Group& group,
                                 const CollectiveFingerprint& fingerprint);
  /// `rank` has finished (or abandoned) its part of the collective it began.
  void end_collective(int rank) noexcept;

  // Completion, called through Request.
  /// How long wait() waits.
  enum class WaitMode {
    /// Request::wait: until `op` completes (the deadline unused). Counts as blocked for the
    /// deadlock check; the watchdog bounds it; throws as Request::wait documents.
    indefinite,
    /// Request::wait_for: gives up at the deadline and returns false. Never counts as
    /// blocked: the rank wakes by itself, so it can still unblock the others.
    until_deadline,
  };
  /// Waits until `op` completes, or as `mode` says gives up at `deadline` (false).
  bool wait(detail::Operation& op, std::chrono::steady_clock::time_point deadline,
            WaitMode mode);
  bool test(detail::Operation& op);
  /// The owner saw `op` complete: advance its Lamport clock, rethrow the op's error.
  void observe(const detail::Operation& op);
  /// A Request handle is going away: close the operation, and if it is unfinished make it
  /// independent of the caller's buffers (buffer a rendezvous send, cancel a receive, wait
  /// for a collective).
  void release(const std::shared_ptr<detail::Operation>& op);
  /// Throws if the run has been aborted (deadlock, failure); called by yield(). A `polling`
  /// call (the program's own yield) counts toward settling a failure (note_poll); a delay
  /// fault's yields do not.
  void check_alive(int rank, bool polling = true);
  /// The cluster timeout, run by the Watchdog fiber until every rank has ended: every
  /// `tick`, a rank blocked in the same wait for longer than the timeout ends the run
  /// (exit 3, TimeoutError for that rank). Ranks' own waits are untimed, which keeps the
  /// clock and Boost's sleep queue off the blocking path.
  void run_watchdog(std::chrono::milliseconds tick);
  /// The owner is done with `op` (waited for it, or dropped its handle): it is no longer
  /// in flight for the trace's `in_flight` of later operations.
  void close(const detail::Operation& op);
  /// Replay: `rank`'s next operation gets rank_seq `seq` (>= the current one), so a replayed
  /// trace keeps its recorded numbering, gaps included.
  void set_next_seq(int rank, std::uint64_t seq);
  /// Where `rank`'s next operations are called from (comm/call_site.hpp), for its
  /// RankContext to set before it posts; null when the run records no call sites. Only the
  /// rank's own fiber writes it, and only its own operations read it.
  SourceSite* call_site_slot(int rank);

  /// `rank` computed `work` (compute events, format 1.2, or an unlabelled amount): it goes
  /// on the rank's next operation in the trace, or on its last one when it ends. Nothing
  /// when not tracing.
  void compute(int rank, const ComputeWork& work);

  // Lifecycle, called by the cluster from each rank's fiber (fabric_failure.cpp says how
  // a failure settles the run).
  void rank_finished(int rank);
  void rank_failed(int rank, std::exception_ptr error);

  /// After every rank has ended: records pending operations, closes the trace, and
  /// returns the report.
  RunReport finish();

  // Fault injection (fabric_faults.cpp).
  /// Whether the run has a fault plan: with none, this is all a post pays.
  bool injects_faults() const { return faults_ != nullptr; }
  /// Called by `rank` before it posts its next operation (`describe` says which): throws
  /// RankKilledError if a kill fault hits it; returns how often to yield for a delay fault.
  std::uint64_t inject_before_post(int rank, const std::function<std::string()>& describe);
  /// The number `rank`'s next native collective on `group` gets (`all_reduce #k` in
  /// reports). Only the rank's own fiber may ask: it alone advances the number.
  std::int64_t next_collective_number(int rank, const Group& group) const;

 private:
  using RankState = detail::RankState;
  using RankSlot = detail::RankSlot;
  using Mailbox = detail::Mailbox;
  using GroupState = detail::GroupState;

  using Lock = detail::FabricLock;

  /// Hands the compute `rank` did after its last operation to the trace sink (under the lock).
  void flush_compute(int rank);

  /// The next operation of `rank` (whose slot is `slot`): its previous one rebuilt in place
  /// if nothing else holds it, else a new one. The reference is the rank's own
  /// (RankSlot::spare); a Request copies it. Inline: every post runs it.
  const std::shared_ptr<detail::Operation>& new_operation(RankSlot& slot, int rank, OpKind kind,
                                                          const Group& group);
  /// new_operation's spare when it cannot simply be reset: rebuilt, or made anew.
  void renew_operation(RankSlot& slot, int rank);
  /// Puts the new operation `op` on its owner's open list (tracing only).
  void trace_open(RankSlot& slot, detail::Operation& op);
  /// Posts `rank`'s native collective, taking `lock` (not yet held) once it has done what
  /// needs no lock; returns the rank's new operation, which is done if the rank was the
  /// last member to arrive.
  const std::shared_ptr<detail::Operation>& post_collective(Lock& lock, int rank,
                                                            const Group& group,
                                                            const CollectiveArgs& args,
                                                            bool blocking);
  /// The input hashes of the blocking collectives still waiting, as the run aborts.
  void hash_pending_collectives();
  void match_or_queue_send(const std::shared_ptr<detail::Operation>& send);
  void match_or_queue_recv(const std::shared_ptr<detail::Operation>& recv);
  void deliver(detail::Operation& send, detail::Operation& recv);
  std::string describe_pair_mismatch(const detail::Operation& send, const detail::Operation& recv,
                                     std::string_view reason) const;
  /// Posts `rank`'s (group rank `me`'s) fingerprint `call` of its next point-to-point
  /// collective call on `group` (join_call), and waits at its post while the call's members
  /// disagree (park_at_post); returns the call's sequence number in the group.
  std::uint64_t post_call(Lock& lock, int rank, int me, const Group& group,
                          const detail::PostedCall& call);
  /// Posts `rank`'s (group rank `me`'s) call `seq` on `group` (of `size` members), a native
  /// call's operation `op` (which is its own fingerprint) or a point-to-point call's
  /// fingerprint `call`, and checks it against the first member's: if they differ, the slot
  /// is marked and never runs. Once every member has posted, runs a native call, or judges
  /// a mismatched one (judge_call). Returns whether the members disagree.
  bool join_call(int rank, int me, const Group& group, int size, std::uint64_t seq,
                 const detail::PostedCall* call, detail::Operation* op);
  /// The verdict on `slot`, a call of `group` whose members disagree: the first rank it
  /// blames fails with MismatchError (noted while it waits at its post; the run ends once it
  /// settles), whose table lists every member's call and those that never came.
  void judge_call(const Group& group, detail::CallSlot& slot);
  /// The run can go no further: judges every call whose members disagree that is not judged
  /// yet (some never came).
  void judge_open_calls();
  /// `rank` posted a point-to-point call whose members disagree: it waits there, blocked,
  /// until the verdict ends the run, and then throws as a cancelled waiter does (the rank the
  /// verdict blames first, its MismatchError).
  [[noreturn]] void park_at_post(Lock& lock, int rank);
  /// Keeps `op`, which a call slot still lists, alive until the fabric goes: its owner is
  /// dropping it unfinished because the run is ending (the final report lists it pending).
  void abandon(const std::shared_ptr<detail::Operation>& op);
  void finish_collective(detail::CallSlot& slot);

  /// `op` is done: recorded, and its owner woken if it waits for it. Inline: every
  /// member of every collective completes here.
  void complete(detail::Operation& op);
  /// wait()'s wait, with `lock` held, for `op` (not done when called): until it completes, or
  /// with `indefinite` false until `deadline` (then false). An indefinite wait counts as
  /// blocked for the deadlock check and throws as Request::wait documents.
  bool await(Lock& lock, detail::Operation& op,
             std::chrono::steady_clock::time_point deadline =
                 std::chrono::steady_clock::time_point::max(),
             bool indefinite = true);
  /// Records `op` as it ends (completed, or pending at the run's end); `compute` is its
  /// compute, moved out of an op that is done with it, or a copy. Inline, below.
  void record(const detail::Operation& op, OpStatus status, ComputeWork&& compute);
  /// record() with a trace sink: the TraceEvent too, and the ring's entry unless the sink
  /// keeps every event (own_recent_).
  void record_traced(const detail::Operation& op, OpStatus status, ComputeWork&& compute);
  /// Inline: every post and wait asks; only an aborted run goes on to throw_aborted.
  void throw_if_aborted(int rank) const {
    if (verdict_ != RunStatus::ok) [[unlikely]] throw_aborted(rank);
  }
  [[noreturn]] void throw_aborted(int rank) const;
  void abort(RunStatus status, int root_rank, std::exception_ptr cause, std::string summary,
             FailureAnalysis analysis);
  /// Called whenever a rank blocks or ends: declares a deadlock when every live rank is
  /// blocked, or, with a failure settling, the failure once no live rank can progress.
  /// Inline: every block asks, and all but the last blocking rank are done here.
  void check_for_deadlock() {
    if (verdict_ != RunStatus::ok) return;
    if (failure_pending_ || (live_ != 0 && blocked_ == live_)) [[unlikely]] settle_or_declare();
  }
  /// check_for_deadlock's verdict, once a failure is settling or every live rank is blocked.
  void settle_or_declare();
  // Settling a failure (fabric_failure.cpp).
  /// `rank` is failing with `error` (its own, not a cancellation): remembered, and the run's
  /// verdict waits until the other ranks have done what they still can. `failed_at` is its
  /// Lamport clock then, the rank's own unless given (a mismatch's: its call's).
  void note_failure(int rank, std::exception_ptr error,
                    std::optional<std::uint64_t> failed_at = std::nullopt);
  /// Every live rank is blocked, or stalled in polls, with a failure settling.
  bool settled() const;
  /// A poll by `rank` that found nothing done: with a failure settling, two polls with no
  /// progress of the run in between count the rank as stalled (and may settle the run).
  void note_poll(int rank);
  /// The verdict of a settled failure: the root cause is the failed rank with the smallest
  /// Lamport clock at its failure (then the lowest rank), whatever thread got there first.
  void declare_failure();
  /// `rank` has waited in its operation longer than the timeout.
  void declare_watchdog(int rank);

  /// A drop or corrupt fault on a new send; true if it was dropped (and is complete).
  bool inject_on_send(detail::Operation& send);
  /// Applies the corrupt fault of `send` to what `recv` just received.
  void corrupt_delivery(const detail::Operation& send, detail::Operation& recv);
  /// "inside all_reduce #0 of world via ring", or empty if `rank` is in no collective.
  std::string where_inside(int rank) const;

  // The post-mortem (emulator/diagnosis/ reads the snapshot; fabric_report.cpp adds what
  // only the fabric has: the timeout, errors and recent events).
  /// What the post-mortem reads (fabric_snapshot.cpp).
  diagnosis::FabricSnapshot snapshot() const;
  /// A deadlock's analysis (a watchdog's if `watchdog_rank` >= 0), last events included.
  FailureAnalysis deadlock_analysis(const diagnosis::FabricSnapshot& snapshot,
                                    const detail::WaitGraph& graph, int watchdog_rank) const;
  FailureAnalysis failure_analysis(int root_rank) const;
  RankEvents recent_events(int rank) const;
  /// `rank`'s latest RecentEvents::kCapacity operations by op number, lowest first: from its
  /// ring, or from the trace sink when that keeps every event (own_recent_ false).
  std::vector<TraceEvent> recent_of(int rank) const;
  std::vector<const detail::Operation*> pending_operations() const;
  TraceHeader trace_header() const;

  ClusterOptions options_;
  bool tracing_;
  /// Each rank keeps a ring of its recent events for reports (RankSlot::recent), unless the
  /// trace sink keeps every event anyway (TraceSink::keeps_events): then the reports read
  /// the sink.
  bool own_recent_;
  TraceEvent recorded_;  ///< the event record_traced() hands the sink (under the lock)
  detail::RecordedSites recorded_sites_;  ///< one CallSite per distinct site (under the lock)
  mutable detail::FabricMutex mutex_;

  std::vector<std::unique_ptr<Group>> groups_;  // groups_[id]; [0] is world
  const Group* world_ = nullptr;                 // groups_[0], fixed at construction
  std::unordered_map<std::string, const Group*> groups_by_name_;
  std::vector<std::unique_ptr<GroupState>> group_states_;  // by group id

  StackArena& stacks_;  // holds each rank's detail::RankHome
  std::vector<std::unique_ptr<RankSlot, detail::HomeSlotDeleter>> ranks_;  // in their homes
  int live_ = 0;
  boost::fibers::condition_variable_any all_ended_;  // notified when live_ reaches 0
  int blocked_ = 0;
  /// Failures settle: a rank's failure does not end the run at once (other ranks would
  /// stop wherever the scheduler had them, and threads would change the trace); the verdict
  /// comes once no live rank can do more (settled()).
  bool failure_pending_ = false;
  /// The failed rank that is the root cause so far, and its exception: only that one is
  /// kept (with every rank failing of std::bad_alloc, keeping each would exhaust the
  /// runtime's emergency pool for exceptions, and the next throw would terminate).
  int root_candidate_ = -1;
  std::exception_ptr root_candidate_error_;
  /// Counts posts, completions, blocks and rank ends: polls that see it unchanged have
  /// nothing to wait for. stalled_ ranks polled twice in epoch stalled_epoch_.
  std::uint64_t progress_ = 0;
  std::uint64_t stalled_epoch_ = ~std::uint64_t{0};
  int stalled_ = 0;

  // The verdict: set once, by whoever first sees the run end abnormally.
  RunStatus verdict_ = RunStatus::ok;
  int root_rank_ = -1;
  std::exception_ptr root_cause_;
  std::string summary_;
  FailureAnalysis analysis_;
  bool watchdog_fired_ = false;  // the verdict came from declare_watchdog
  Culprit culprit_;            // set with the verdict
  WaitForGraph wait_graph_;    // set when the verdict is reached with ranks blocked
  detail::FingerprintBook fingerprints_;
  std::unique_ptr<detail::FaultInjector> faults_;  // null without a fault plan
  /// Runs beside an eager run to find what only buffering let finish; null when off.
  std::unique_ptr<detail::LatentDeadlocks> latent_;
  /// The owner waited for `op` and saw it complete (a successful test is no wait: the
  /// program may have polled on): tells latent_ (with the lock held, or taking it).
  void note_waited(const detail::Operation& op, bool locked);
  void latent_waited(const detail::Operation& op, bool locked);  ///< note_waited's telling
  /// Unfinished collective operations whose owners let go (abandon()).
  std::vector<std::shared_ptr<detail::Operation>> abandoned_;
};

// Inline: every completed operation is recorded (complete()); untraced, that is one compact
// entry in its rank's ring (detail/recent_events.hpp), its TraceEvent built only for a
// trace sink or when a report asks (recent_of).
inline void Fabric::record(const detail::Operation& op, OpStatus status, ComputeWork&& compute) {
  if (tracing_) [[unlikely]] return record_traced(op, status, std::move(compute));
  op.owner->recent.next(op.rank_seq).assign(op, status);
}

// The posting and completion path of every operation, inline (fabric.cpp and
// fabric_collectives.cpp run it; a small collective is bound by it).

inline const std::shared_ptr<detail::Operation>& Fabric::new_operation(RankSlot& slot, int rank,
                                                                       OpKind kind,
                                                                       const Group& group) {
  // The rank's previous operation is rebuilt in place once nothing else holds it (the usual
  // case: its Request is gone), which takes malloc and free off every call. Only this rank's
  // fiber posts its operations, so nobody can take a new reference while we look.
  std::shared_ptr<detail::Operation>& spare = slot.spare;
  if (spare && spare.use_count() == 1 && !is_point_to_point(kind) &&
      !is_point_to_point(spare->kind) && !spare->error) [[likely]] {
    // A collective after a collective: the point-to-point fields it never touched still
    // hold their defaults, and every other field is set again below and by
    // post_collective, except those its completion and wait changed. Rebuilding all
    // 424 bytes was a tenth of an 8-rank all_reduce of one float (bench/RESULTS.md).
    spare->done.store(false, std::memory_order_relaxed);
    spare->lamport = 0;
    spare->blocked_at_end = false;
  } else {
    renew_operation(slot, rank);
  }
  detail::Operation& op = *spare;
  op.kind = kind;
  op.rank = rank;
  op.rank_seq = slot.next_seq++;
  op.group = &group;
  op.site = slot.site;
  op.clock_at_post = slot.lamport;
  ++progress_;
  if (tracing_) trace_open(slot, op);
  return spare;
}

inline void Fabric::complete(detail::Operation& op) {
  op.done.store(true, std::memory_order_release);
  ++progress_;
  record(op, OpStatus::completed, std::move(op.compute));
  RankSlot& owner = *op.owner;
  if (owner.waiting_on == &op) {
    if (owner.state == detail::RankState::blocked) {
      owner.state = detail::RankState::running;
      --blocked_;
    }
    owner.wakeup.notify();
  }
}

[[gnu::always_inline]] inline bool Fabric::await(Lock& lock, detail::Operation& op,
                                                 std::chrono::steady_clock::time_point deadline,
                                                 bool indefinite) {
  RankSlot& me = *op.owner;
  while (!op.done.load(std::memory_order_relaxed)) {
    op.blocked_at_end = verdict_ != RunStatus::ok;
    throw_if_aborted(op.rank);
    me.waiting_on = &op;
    if (indefinite) {
      me.state = detail::RankState::blocked;
      ++blocked_;
      ++progress_;  // a poller stalled before this counts again only once it polls again
      check_for_deadlock();
    }
    bool timed_out = false;
    if (verdict_ == RunStatus::ok && !op.done.load(std::memory_order_relaxed)) {
      if (indefinite) {
        // Untimed: a timed wait goes through Boost's sleep queue and the clock on every
        // block. The run's Watchdog fiber ends waits longer than the cluster timeout.
        ++me.blocks;
        me.wakeup.wait(lock);
      } else {
        timed_out = !me.wakeup.wait_until(lock, deadline);
      }
    }
    if (me.state == detail::RankState::blocked) {
      me.state = detail::RankState::running;
      --blocked_;
    }
    me.waiting_on = nullptr;
    if (timed_out && !op.done.load(std::memory_order_relaxed) && verdict_ == RunStatus::ok) {
      note_poll(op.rank);
      if (verdict_ == RunStatus::ok) return false;
      continue;  // the poll settled a failure: throw as every waiter does
    }
    if (watchdog_fired_ && root_rank_ == op.rank && !op.done.load(std::memory_order_relaxed)) {
      op.blocked_at_end = true;
      std::rethrow_exception(root_cause_);  // the rank that waited gets the TimeoutError
    }
  }
  return true;
}

inline void Fabric::close(const detail::Operation& op) {
  if (!tracing_) return;
  auto& open = op.owner->open;
  if (const auto it = std::find(open.begin(), open.end(), op.rank_seq); it != open.end()) {
    open.erase(it);
  }
}

inline void Fabric::observe(const detail::Operation& op) {
  // Only the owner's fiber reads or writes its clock, and a rank never changes thread.
  auto& clock = op.owner->lamport;
  clock = std::max(clock, op.lamport);
  if (op.error) std::rethrow_exception(op.error);
}

inline void Fabric::note_waited(const detail::Operation& op, bool locked) {
  if (latent_) [[unlikely]] latent_waited(op, locked);
}

}  // namespace ranklab
