// Point-to-point matching, waiting, and the run's lifecycle. Collectives are in
// fabric_collectives.cpp, the final report in fabric_report.cpp; the deadlock analysis reads
// the fabric's snapshot (fabric_snapshot.cpp) in emulator/diagnosis/.
#include "emulator/fabric.hpp"

#include <algorithm>
#include <cstring>

#include "emulator/detail/copy_bytes.hpp"
#include "emulator/detail/fabric_state.hpp"
#include "emulator/detail/latent_deadlock.hpp"
#include "emulator/diagnosis/analysis.hpp"
#include "emulator/diagnosis/collective_order.hpp"
#include "emulator/diagnosis/describe.hpp"
#include "emulator/diagnosis/detectors.hpp"
#include "emulator/diagnosis/wait_for.hpp"
#include "comm/errors.hpp"
#include "comm/message_mismatch.hpp"
#include "traces/hash.hpp"

namespace ranklab {

using detail::Operation;

Fabric::Fabric(const ClusterOptions& options, StackArena& stacks)
    : options_(options),
      tracing_(options.trace_sink != nullptr),
      own_recent_(!tracing_ || !options.trace_sink->keeps_events()),
      mutex_(std::min(options.threads, options.world_size) > 1),
      stacks_(stacks) {
  const int n = options_.world_size;
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  groups_.push_back(std::make_unique<Group>(0, "world", std::move(all)));
  world_ = groups_.front().get();
  groups_by_name_.emplace("world", groups_.front().get());
  group_states_.push_back(std::make_unique<GroupState>());
  ranks_.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    // Default-initialised: only its flag is set, the rooms are raw bytes (no 1 KiB memset).
    auto* home = ::new (static_cast<void*>(stacks.home(static_cast<std::size_t>(r))))
        detail::RankHome;
    ranks_.emplace_back(home->construct_slot());
  }
  live_ = n;
  if (!options_.faults.empty()) {
    faults_ = std::make_unique<detail::FaultInjector>(options_.faults, n);
  }
  // Faults leave the check on: it judges the run as it happened. A kill fails the run (the
  // check judges only runs that ended ok), a dropped message never reaches it (its receive,
  // if any, waits: a deadlock), a delay changes only the schedule, a corruption only bits.
  if (options_.find_latent_deadlocks && options_.send_mode.kind != SendMode::Kind::rendezvous) {
    latent_ = std::make_unique<detail::LatentDeadlocks>(n);
  }
}

Fabric::~Fabric() = default;

const Group& Fabric::group(std::string_view kind, std::span<const int> global_ranks) {
  std::string name = Group::make_name(kind, global_ranks);
  Lock lock(mutex_);
  // A group found by name was checked when it was made.
  if (auto it = groups_by_name_.find(name); it != groups_by_name_.end()) return *it->second;
  Group::check_members(kind, global_ranks, world_size());
  const auto id = static_cast<std::uint32_t>(groups_.size());
  groups_.push_back(std::make_unique<Group>(
      id, name, std::vector<int>(global_ranks.begin(), global_ranks.end())));
  group_states_.push_back(std::make_unique<GroupState>());
  const Group& created = *groups_.back();
  groups_by_name_.emplace(std::move(name), &created);
  return created;
}

void Fabric::renew_operation(RankSlot& slot, int rank) {
  std::shared_ptr<Operation>& spare = slot.spare;
  if (spare && spare.use_count() == 1) {
    std::destroy_at(spare.get());
    std::construct_at(spare.get());
  } else {
    // In the rank's home while its room is free: no malloc, no memory beyond the stack page.
    spare = std::allocate_shared<Operation>(
        detail::HomeAllocator<Operation>(detail::home_of(stacks_, rank)));
  }
  spare->owner = &slot;
}

void Fabric::trace_open(RankSlot& slot, Operation& op) {
  op.in_flight.assign(slot.open.begin(), slot.open.end());
  slot.open.push_back(op.rank_seq);
  op.compute = std::move(slot.compute);
  slot.compute = {};
}

void Fabric::compute(int rank, const ComputeWork& work) {
  if (!tracing_) return;  // nothing reads it but the trace
  ranks_[static_cast<std::size_t>(rank)]->compute.add(work);
}

void Fabric::flush_compute(int rank) {
  ComputeWork& work = ranks_[static_cast<std::size_t>(rank)]->compute;
  if (options_.trace_sink && !work.empty()) options_.trace_sink->record_compute_after(rank, work);
  work = {};
}

SourceSite* Fabric::call_site_slot(int rank) {
  return options_.call_sites ? &ranks_[static_cast<std::size_t>(rank)]->site : nullptr;
}

void Fabric::set_next_seq(int rank, std::uint64_t seq) {
  Lock lock(mutex_);
  auto& next = ranks_[static_cast<std::size_t>(rank)]->next_seq;
  RANKLAB_CHECK(seq >= next, "rank {}: cannot number an operation {} after {}", rank, seq, next);
  next = seq;
}

Request Fabric::isend(int rank, const Group& group, ConstBuffer data, int dst, int tag) {
  RANKLAB_CHECK(group.contains(rank), "rank {}: send on group {}, which it is not a member of",
                rank, group.name());
  RANKLAB_CHECK(dst >= 0 && dst < group.size(),
                "rank {}: send to rank {} of group {}, which has {} ranks", rank, dst,
                group.name(), group.size());
  RANKLAB_CHECK(tag >= 0, "rank {}: send with negative tag {}", rank, tag);
  RANKLAB_CHECK(data.data != nullptr || data.count == 0, "rank {}: send of a null buffer", rank);
  const std::uint64_t hash = tracing_ ? payload_hash(data.as_bytes()) : 0;
  Lock lock(mutex_);
  throw_if_aborted(rank);
  std::shared_ptr<Operation> op =
      new_operation(*ranks_[static_cast<std::size_t>(rank)], rank, OpKind::send, group);
  op->peer = dst;
  op->tag = tag;
  op->send_data = data;
  op->hash = hash;
  op->msg = MessageId{rank, op->rank_seq};
  op->lamport = ++ranks_[static_cast<std::size_t>(rank)]->lamport;
  if (faults_ && inject_on_send(*op)) [[unlikely]] {
    return Request(this, std::move(op));  // dropped: complete for its sender, never delivered
  }
  if (latent_) latent_->posted(*op);
  match_or_queue_send(op);
  return Request(this, std::move(op));
}

Request Fabric::irecv(int rank, const Group& group, MutableBuffer data, int src, int tag) {
  RANKLAB_CHECK(group.contains(rank), "rank {}: recv on group {}, which it is not a member of",
                rank, group.name());
  RANKLAB_CHECK(src == kAnySource || (src >= 0 && src < group.size()),
                "rank {}: recv from rank {} of group {}, which has {} ranks", rank, src,
                group.name(), group.size());
  RANKLAB_CHECK(tag >= 0 || tag == kAnyTag, "rank {}: recv with negative tag {}", rank, tag);
  RANKLAB_CHECK(data.data != nullptr || data.count == 0, "rank {}: recv into a null buffer", rank);
  Lock lock(mutex_);
  throw_if_aborted(rank);
  std::shared_ptr<Operation> op =
      new_operation(*ranks_[static_cast<std::size_t>(rank)], rank, OpKind::recv, group);
  op->peer = src;
  op->tag = tag;
  op->recv_data = data;
  if (latent_) latent_->posted(*op);
  match_or_queue_recv(op);
  return Request(this, std::move(op));
}

namespace {

bool matches(const Operation& recv, const Operation& send) {
  if (recv.group != send.group) return false;
  // A wildcard tag stands for user tags only: it must never take a collective's message.
  if (recv.tag == kAnyTag ? send.tag >= kFirstReservedTag : recv.tag != send.tag) return false;
  return recv.peer == kAnySource || recv.group->global_rank(recv.peer) == send.rank;
}

// Removes and returns the first entry of `queue` for which `pred` holds: the FIFO scan that
// gives MPI's non-overtaking order per (group, source, tag).
template <typename Pred>
std::shared_ptr<Operation> take_first(std::vector<std::shared_ptr<Operation>>& queue, Pred pred) {
  auto it = std::find_if(queue.begin(), queue.end(), [&](const auto& op) { return pred(*op); });
  if (it == queue.end()) return nullptr;
  auto found = std::move(*it);
  queue.erase(it);
  return found;
}

}  // namespace

void Fabric::match_or_queue_send(const std::shared_ptr<Operation>& send) {
  const int dst = send->group->global_rank(send->peer);
  Mailbox& box = ranks_[static_cast<std::size_t>(dst)]->mailbox;
  if (auto recv = take_first(box.receives, [&](const Operation& r) { return matches(r, *send); })) {
    deliver(*send, *recv);
    return;
  }
  if (options_.send_mode.buffers(send->send_data.bytes())) {
    // Eager: the payload is copied now, so the send completes without a receiver.
    const auto bytes = send->send_data.as_bytes();
    send->eager_copy.assign(bytes.begin(), bytes.end());
    send->send_data.data = send->eager_copy.data();
    complete(*send);
  }
  box.unexpected.push_back(send);
}

void Fabric::match_or_queue_recv(const std::shared_ptr<Operation>& recv) {
  Mailbox& box = ranks_[static_cast<std::size_t>(recv->rank)]->mailbox;
  if (auto send =
          take_first(box.unexpected, [&](const Operation& s) { return matches(*recv, s); })) {
    deliver(*send, *recv);
    return;
  }
  box.receives.push_back(recv);
}

std::string Fabric::describe_pair_mismatch(const Operation& send, const Operation& recv,
                                           std::string_view reason) const {
  const Group& g = *send.group;
  return describe_message_mismatch(
      g.name(), {send.rank, send.rank_seq, send.send_data.count, send.send_data.dtype}, send.tag,
      {recv.rank, recv.rank_seq, recv.recv_data.count, recv.recv_data.dtype},
      recv.peer == kAnySource ? kAnySource : g.global_rank(recv.peer), recv.tag, reason);
}

void Fabric::deliver(Operation& send, Operation& recv) {
  if (latent_) latent_->matched(send, recv);
  send.matched = recv.matched = true;
  const char* reason = message_mismatch_reason({.count = send.send_data.count,
                                                .dtype = send.send_data.dtype},
                                               {.count = recv.recv_data.count,
                                                .dtype = recv.recv_data.dtype});
  if (reason != nullptr) {
    auto error = std::make_exception_ptr(MismatchError(describe_pair_mismatch(send, recv, reason)));
    recv.error = error;
    if (!send.done) send.error = error;
  } else {
    detail::copy_bytes(static_cast<std::byte*>(recv.recv_data.data),
                       static_cast<const std::byte*>(send.send_data.data), send.send_data.bytes());
  }
  recv.status = RecvStatus{send.group->group_rank(send.rank), send.tag, send.send_data.count};
  recv.msg = send.msg;
  recv.hash = send.hash;
  if (send.corrupt && reason == nullptr) [[unlikely]] corrupt_delivery(send, recv);
  // The receiver's clock itself advances when it observes the completion (observe()).
  recv.lamport = std::max(recv.clock_at_post, send.lamport) + 1;
  if (!send.done) complete(send);
  complete(recv);
}

void Fabric::latent_waited(const Operation& op, bool locked) {
  if (locked) {
    latent_->waited(op);
    return;
  }
  Lock lock(mutex_);
  latent_->waited(op);
}

bool Fabric::wait(Operation& op, std::chrono::steady_clock::time_point deadline, WaitMode mode) {
  if (op.done.load(std::memory_order_acquire)) {
    note_waited(op, /*locked=*/false);
  } else {
    Lock lock(mutex_);
    // Only an indefinite wait counts as blocked: a rank in wait_for will wake up by itself,
    // so it can still unblock the others.
    if (!await(lock, op, deadline, /*indefinite=*/mode == WaitMode::indefinite)) return false;
    note_waited(op, /*locked=*/true);
  }
  // Without the lock: only the owner's fiber touches its open list and its clock.
  close(op);
  observe(op);
  return true;
}

bool Fabric::test(Operation& op) {
  if (!op.done.load(std::memory_order_acquire)) {
    Lock lock(mutex_);
    if (!op.done.load(std::memory_order_relaxed)) {
      note_poll(op.rank);
      throw_if_aborted(op.rank);
      return false;
    }
  }
  observe(op);
  return true;
}

void Fabric::check_alive(int rank, bool polling) {
  Lock lock(mutex_);
  if (polling) note_poll(rank);
  throw_if_aborted(rank);
}

void Fabric::release(const std::shared_ptr<Operation>& handle) {
  Operation& op = *handle;
  close(op);
  if (op.done.load(std::memory_order_acquire)) return;
  if (op.kind != OpKind::send && op.kind != OpKind::recv) {
    // The other members will write into this rank's buffers: wait for them, as
    // std::future's destructor does for std::async.
    try {
      wait(op, std::chrono::steady_clock::time_point::max(), WaitMode::indefinite);
    } catch (...) {  // the run is ending; its report has the reason
      Lock lock(mutex_);
      if (!op.done.load(std::memory_order_relaxed)) abandon(handle);  // its slot lists it
    }
    return;
  }
  Lock lock(mutex_);
  if (verdict_ != RunStatus::ok || op.done.load(std::memory_order_relaxed)) return;
  if (op.kind == OpKind::send) {
    // Nobody will wait for this send: keep its payload, since the buffer may go away.
    const auto bytes = op.send_data.as_bytes();
    op.eager_copy.assign(bytes.begin(), bytes.end());
    op.send_data.data = op.eager_copy.data();
    return;
  }
  // A receive nobody waits for can only write into a dead buffer: cancel it, and let the
  // trace show it as never completed.
  auto& receives = ranks_[static_cast<std::size_t>(op.rank)]->mailbox.receives;
  std::erase_if(receives, [&](const auto& r) { return r.get() == &op; });
  record(op, OpStatus::pending, std::move(op.compute));
}

void Fabric::throw_aborted(int rank) const {
  // The rank a collective's verdict blames first waited at its post: it ends with the
  // mismatch itself, as the rank that failed.
  if (rank == root_rank_ && ranks_[static_cast<std::size_t>(rank)]->mismatch) {
    std::rethrow_exception(root_cause_);
  }
  if (verdict_ == RunStatus::deadlock) {
    throw DeadlockError(fmt::format("rank {}: {}", rank, summary_));
  }
  throw PeerAbortedError(fmt::format("rank {}: cancelled: {}", rank, summary_));
}

void Fabric::abort(RunStatus status, int root_rank, std::exception_ptr cause, std::string summary,
                   FailureAnalysis analysis) {
  if (tracing_) hash_pending_collectives();  // while their callers' buffers still exist
  verdict_ = status;
  root_rank_ = root_rank;
  root_cause_ = std::move(cause);
  summary_ = std::move(summary);
  analysis_ = std::move(analysis);
  for (auto& slot : ranks_) {
    // A rank waits in an operation, or, blocked in none, at the post of a mismatched call
    // (park_at_post).
    const bool waits = slot->waiting_on != nullptr || slot->state == RankState::blocked;
    if (slot->state == RankState::blocked) {
      slot->state = RankState::running;
      --blocked_;
    }
    if (waits) slot->wakeup.notify();
  }
}

void Fabric::rank_finished(int rank) {
  Lock lock(mutex_);
  flush_compute(rank);
  ranks_[static_cast<std::size_t>(rank)]->state = RankState::finished;
  ++progress_;
  if (--live_ == 0) all_ended_.notify_all();
  check_for_deadlock();
}

void Fabric::settle_or_declare() {
  if (failure_pending_ && !settled()) return;
  // The run can go no further: a call whose members disagree is judged now, those that
  // never came listed as missing (its members wait at their posts until then).
  judge_open_calls();
  if (failure_pending_) {
    declare_failure();
    return;
  }
  const diagnosis::FabricSnapshot snap = snapshot();
  const detail::WaitGraph graph = diagnosis::build_wait_graph(snap);
  wait_graph_ = diagnosis::draw_wait_graph(snap, graph);
  FailureAnalysis analysis = deadlock_analysis(snap, graph, /*watchdog_rank=*/-1);
  if (auto order = diagnosis::find_collective_order(snap, graph)) {
    // Collectives of two groups called in opposite orders: a mismatch (exit 4).
    culprit_ = std::move(order->culprit);
    analysis.preamble = order->table;
    abort(RunStatus::mismatch, culprit_.ranks.front(),
          std::make_exception_ptr(MismatchError(order->table)), std::move(order->summary),
          std::move(analysis));
    return;
  }
  culprit_ = diagnosis::diagnose_deadlock(snap, graph);
  abort(RunStatus::deadlock, -1, nullptr, diagnosis::deadlock_summary(snap, graph),
        std::move(analysis));
}

void Fabric::run_watchdog(std::chrono::milliseconds tick) {
  Lock lock(mutex_);
  while (live_ > 0) {
    all_ended_.wait_for(lock, tick);
    if (live_ == 0 || verdict_ != RunStatus::ok) continue;
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      RankSlot& slot = *ranks_[r];
      if (slot.state != RankState::blocked || slot.waiting_on == nullptr) continue;
      if (slot.watched_block != slot.blocks) {  // a block the watchdog has not timed yet
        slot.watched_block = slot.blocks;
        slot.watched_since = now;
      } else if (now - slot.watched_since >= options_.timeout) {
        declare_watchdog(static_cast<int>(r));
        break;
      }
    }
  }
}

void Fabric::declare_watchdog(int rank) {
  judge_open_calls();  // the run goes no further: a call whose members disagree is the cause
  if (failure_pending_) {  // a rank still runs, but the others wait for the failed one
    declare_failure();
    return;
  }
  watchdog_fired_ = true;
  const diagnosis::FabricSnapshot snap = snapshot();
  const detail::WaitGraph graph = diagnosis::build_wait_graph(snap);
  wait_graph_ = diagnosis::draw_wait_graph(snap, graph);
  const diagnosis::PendingOp& waiting = *snap.waiting_on(rank);
  const std::string waited = fmt::format("rank {} waited more than {} ms in {}", rank,
                                         options_.timeout.count(),
                                         diagnosis::describe_pending(waiting));
  std::string summary = "watchdog: " + waited;
  // The culprit line says "watchdog" once, in its kind: "culprit (watchdog): rank 1 waited".
  culprit_ = diagnosis::naming({CulpritKind::watchdog, waited, {rank}}, {&waiting});
  FailureAnalysis analysis = deadlock_analysis(snap, graph, rank);
  auto cause = std::make_exception_ptr(TimeoutError(summary));
  abort(RunStatus::deadlock, rank, cause, std::move(summary), std::move(analysis));
}

}  // namespace ranklab

namespace ranklab {

void Fabric::record_traced(const Operation& op, OpStatus status, ComputeWork&& compute) {
  // The event is built from the entry (expand), the one way there is from an operation to
  // its event. For a sink that keeps every event (the reports read it) the entry is a local
  // one, which the compiler keeps in registers.
  const auto to_sink = [&](const detail::RecentEvent& r) __attribute__((always_inline)) {
    // recorded_ is a scratch slot, filled in place: every field the fabric sets is assigned
    // on every call (expand(), then what only tracing fills); the others (time) it never
    // sets.
    TraceEvent& e = recorded_;
    r.expand(e, op.rank, recorded_sites_.get(op.site));
    e.has_hash =
        op.kind != OpKind::barrier && (status == OpStatus::completed || op.kind != OpKind::recv);
    e.hash = e.has_hash ? op.hash : 0;
    e.in_flight = op.in_flight;
    e.compute = std::move(compute);
  };
  if (own_recent_) {
    detail::RecentEvent& r = ranks_[static_cast<std::size_t>(op.rank)]->recent.next(op.rank_seq);
    r.assign(op, status);
    to_sink(r);
    options_.trace_sink->record(recorded_);  // recorded_ keeps its vectors' capacity
  } else {
    detail::RecentEvent r;
    r.assign(op, status);
    to_sink(r);
    // A sink that keeps every event takes recorded_'s vectors and site instead of copying
    // them.
    options_.trace_sink->record_moved(std::move(recorded_));
  }
}

std::vector<TraceEvent> Fabric::recent_of(int rank) const {
  if (own_recent_) {
    std::vector<TraceEvent> out;
    for (const detail::RecentEvent& r : ranks_[static_cast<std::size_t>(rank)]->recent.snapshot()) {
      r.expand(out.emplace_back(), rank, to_call_site(r.site));
    }
    return out;
  }
  // The latest by op number, as the ring keeps them (not the last recorded: see there).
  const std::span<const TraceEvent> all = options_.trace_sink->recorded(rank);
  std::vector<const TraceEvent*> by_seq;
  for (const TraceEvent& e : all) by_seq.push_back(&e);
  const std::size_t n = std::min(all.size(), detail::RecentEvents::kCapacity);
  const auto latest = by_seq.end() - static_cast<std::ptrdiff_t>(n);
  const auto by_number = [](const TraceEvent* a, const TraceEvent* b) {
    return a->rank_seq < b->rank_seq;
  };
  std::nth_element(by_seq.begin(), latest, by_seq.end(), by_number);
  std::sort(latest, by_seq.end(), by_number);
  std::vector<TraceEvent> out;
  for (auto it = latest; it != by_seq.end(); ++it) out.push_back(**it);
  return out;
}

}  // namespace ranklab
