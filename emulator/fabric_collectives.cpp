// Collective calls: every member posts its fingerprint into its group's next call slot
// (detail/call_window.hpp) and is checked at once against the first to post. A native
// collective is a rendezvous on that slot: the last member to arrive executes it and
// releases everyone. The communicator's point-to-point algorithms post through
// begin_collective (fabric_fingerprint.cpp) into the same slots, so native and
// point-to-point calls share one sequence per group and disagree loudly.
//
// A call whose members disagree never runs, and is not judged at the first disagreement
// (which member that is depends on who arrived first): every member waits at its post, and
// the call is judged once all of them have posted, or once the run can go no further (then
// those that never came are listed as missing). The calls that differ from the plurality's
// are blamed (comm/mismatch_table.hpp).
#include <algorithm>

#include "emulator/detail/collective_exec.hpp"
#include "comm/mismatch_table.hpp"
#include "emulator/detail/latent_deadlock.hpp"
#include "emulator/detail/payload_hashes.hpp"
#include "comm/errors.hpp"
#include "emulator/fabric.hpp"
#include "traces/hash.hpp"

namespace ranklab {

using detail::Operation;

Request Fabric::icollective(int rank, const Group& group, const CollectiveArgs& args) {
  Lock lock(mutex_, std::defer_lock);
  return Request(this, post_collective(lock, rank, group, args, /*blocking=*/false));
}

void Fabric::collective(int rank, const Group& group, const CollectiveArgs& args) {
  // One lock from posting to waking up. The operation stays the rank's (RankSlot::spare)
  // after the wait, even if it throws: a call slot of an aborted run may still list it.
  Lock lock(mutex_, std::defer_lock);
  Operation& op = *post_collective(lock, rank, group, args, /*blocking=*/true);
  // The last member to arrive ran the call: it has nothing to wait for.
  if (!op.done.load(std::memory_order_relaxed)) await(lock, op);
  note_waited(op, /*locked=*/true);
  close(op);
  observe(op);
}

void Fabric::hash_pending_collectives() {
  // A blocking call waits until the run ends (abort), and its pending event is recorded
  // after its rank has unwound: the hash is taken now, while every such caller is still in
  // its call, whether its members agree or not.
  for (const auto& state : group_states_) {
    for (const auto& slot : state->calls.slots()) detail::hash_pending_inputs(slot.ops);
  }
}

// Inline: icollective and collective run it, and a small collective is bound by it.
[[gnu::always_inline]] inline const std::shared_ptr<Operation>& Fabric::post_collective(
    Lock& lock, int rank, const Group& group, const CollectiveArgs& args, bool blocking) {
  const int me = group.group_rank(rank);
  RANKLAB_CHECK(me >= 0, "rank {}: {} on group {}, which it is not a member of", rank,
                to_string(args.op), group.name());
  const int size = group.size();
  const CollectiveSignature signature = make_signature(args, size, me);
  // A non-blocking call's buffer may go before the others arrive: hashed now.
  const std::uint64_t hash = tracing_ && !blocking ? payload_hash(args.input.as_bytes()) : 0;
  lock.lock();
  throw_if_aborted(rank);
  RankSlot& slot = *ranks_[static_cast<std::size_t>(rank)];
  const std::shared_ptr<Operation>& op = new_operation(slot, rank, args.op, group);
  op->coll_input = args.input.data;
  op->coll_output = args.output.data;
  op->signature = signature;
  op->hash = hash;
  op->hash_pending = blocking;  // read only when tracing
  if (tracing_) op->coll_input_bytes = args.input.as_bytes().size();  // for that late hash
  detail::CallCounters& counters = slot.counters_of(group.id());
  op->coll_seq = counters.collectives++;
  op->call_seq = counters.calls++;
  if (latent_) latent_->posted(*op);
  join_call(rank, me, group, size, op->call_seq, nullptr, op.get());
  return op;
}

std::uint64_t Fabric::post_call(Lock& lock, int rank, int me, const Group& group,
                                const detail::PostedCall& call) {
  const std::uint64_t seq = ranks_[static_cast<std::size_t>(rank)]->counters_of(group.id()).calls++;
  // A point-to-point algorithm would exchange messages of the wrong sizes, or wait forever:
  // a member that finds the call mismatched goes no further than its post.
  if (join_call(rank, me, group, group.size(), seq, &call, nullptr)) [[unlikely]] {
    park_at_post(lock, rank);
  }
  return seq;
}

void Fabric::park_at_post(Lock& lock, int rank) {
  RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  while (verdict_ == RunStatus::ok) {
    me.state = RankState::blocked;
    ++blocked_;
    ++progress_;
    check_for_deadlock();
    if (verdict_ == RunStatus::ok) {
      ++me.blocks;
      me.wakeup.wait(lock);
    }
    if (me.state == RankState::blocked) {
      me.state = RankState::running;
      --blocked_;
    }
  }
  throw_aborted(rank);
}

// Inline: a native call's post is specialised (call is null, op is not).
[[gnu::always_inline]] inline bool Fabric::join_call(int rank, int me, const Group& group,
                                                     int size, std::uint64_t seq,
                                                     const detail::PostedCall* call,
                                                     Operation* op) {
  detail::CallWindow& window = group_states_[group.id()]->calls;
  detail::CallSlot& slot = window.slot(seq, size);
  const auto i = static_cast<std::size_t>(me);
  if (op) {
    slot.ops[i] = op;  // its fingerprint (CallSlot::call)
  } else {
    if (slot.calls.empty()) slot.calls.resize(slot.ops.size());
    slot.calls[i] = *call;
  }
  // Every member's clock when it joined: the call's Lamport clock is one more (a native
  // call's), and a mismatch's failure has it, whatever the order they came in.
  slot.clock = std::max(slot.clock, op ? op->clock_at_post : ranks_[static_cast<std::size_t>(rank)]->lamport);
  ++slot.arrived;
  // Everyone who posted before agreed with the first poster (or the slot is marked), so
  // comparing with it is enough: O(1) per arrival, even with 65,536 members.
  if (slot.first < 0) {
    slot.first = me;
  } else if (const auto first = static_cast<std::size_t>(slot.first);
             !(op ? slot.agrees_with(first, *op) : slot.agrees_with(first, *call))) [[unlikely]] {
    // With several threads, members of the other thread may post before the verdict ends
    // the run: they must find the slot mismatched, not run it (CallSlot).
    slot.mismatched = true;
  }
  if (slot.arrived != size) return slot.mismatched;
  if (slot.mismatched) [[unlikely]] {
    judge_call(group, slot);
    return true;
  }
  // Members agree, so either all of them are native calls or none is.
  if (op) finish_collective(slot);
  window.retire_completed(size);
  return false;
}

void Fabric::judge_call(const Group& group, detail::CallSlot& slot) {
  // The table's rows, with the algorithms' names (the slot holds their indices).
  std::vector<std::optional<detail::MemberCall>> rows(slot.ops.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!slot.posted(i)) continue;
    const detail::PostedCall c = slot.call(i);
    rows[i] = detail::MemberCall{
        CollectiveFingerprint{c.signature, fingerprints_.algorithms[c.algorithm],
                              c.per_peer_counts},
        c.rank_seq, c.site};
  }
  auto verdict = std::make_unique<detail::MismatchVerdict>(
      detail::judge_mismatch(group, slot.seq, rows));
  slot.judged = true;
  // The failure is the first blamed rank's, which waits at its post (and ends with it, the
  // others cancelled). Its clock is the latest of the members' when they posted, the same
  // whatever the order they came in, so the root cause among several failures is too.
  const int blamed = verdict->blamed.front();
  RankSlot& culprit = *ranks_[static_cast<std::size_t>(blamed)];
  if (culprit.failure_noted) return;  // it failed of something else first
  auto error = std::make_exception_ptr(MismatchError(verdict->table));
  culprit.mismatch = std::move(verdict);
  note_failure(blamed, std::move(error), slot.clock);
}

void Fabric::judge_open_calls() {
  for (std::size_t id = 0; id < group_states_.size(); ++id) {
    for (detail::CallSlot* slot : group_states_[id]->calls.unjudged_mismatches()) {
      judge_call(*groups_[id], *slot);
    }
  }
}

void Fabric::abandon(const std::shared_ptr<Operation>& op) { abandoned_.push_back(op); }

void Fabric::finish_collective(detail::CallSlot& slot) {
  const CollectiveSignature& sig = slot.ops.front()->signature;
  if (tracing_) detail::hash_pending_inputs(slot.ops);
  detail::execute_collective(sig, slot.ops);
  // Every member's clock when it joined, so the value does not depend on arrival order;
  // each member's own clock advances when it observes the completion.
  const std::uint64_t clock = slot.clock + 1;
  for (Operation* m : slot.ops) {
    m->lamport = clock;
    complete(*m);
  }
}

}  // namespace ranklab
