// Collective calls: every member posts its fingerprint into its group's next call slot
// (detail/call_window.hpp) and is checked at once against the first to post; a member whose
// call disagrees fails the run. A native collective is a rendezvous on that slot: the last
// member to arrive executes it and releases everyone. The communicator's point-to-point
// algorithms post through begin_collective (fabric_fingerprint.cpp) into the same slots, so
// native and point-to-point calls share one sequence per group and disagree loudly.
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
  // its call. (A call that disagrees throws earlier and takes its own: post_call.)
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

std::uint64_t Fabric::post_call(int rank, int me, const Group& group,
                                const detail::PostedCall& call) {
  const std::uint64_t seq = ranks_[static_cast<std::size_t>(rank)]->counters_of(group.id()).calls++;
  join_call(rank, me, group, group.size(), seq, &call, nullptr);
  return seq;
}

// Inline: a native call's post is specialised (call is null, op is not).
[[gnu::always_inline]] inline void Fabric::join_call(int rank, int me, const Group& group,
                                                     int size, std::uint64_t seq,
                                                     const detail::PostedCall* call,
                                                     Operation* op) {
  detail::CallWindow& window = group_states_[group.id()]->calls;
  detail::CallSlot& slot = window.slot(seq, size);
  const auto i = static_cast<std::size_t>(me);
  if (op) {
    slot.ops[i] = op;  // its fingerprint (CallSlot::call)
    slot.clock = std::max(slot.clock, op->clock_at_post);
  } else {
    if (slot.calls.empty()) slot.calls.resize(slot.ops.size());
    slot.calls[i] = *call;
  }
  ++slot.arrived;
  // Everyone who posted before agreed with the first poster (or the slot is marked), so
  // comparing with it is enough: O(1) per arrival, even with 65,536 members.
  if (slot.first < 0) {
    slot.first = me;
  } else if (const auto first = static_cast<std::size_t>(slot.first);
             !(op ? slot.agrees_with(first, *op) : slot.agrees_with(first, *call))) [[unlikely]] {
    // With several threads, members of the other thread may post before this member's
    // failure ends the run: they must find the slot failed, not run it (CallSlot).
    slot.mismatched = true;
    if (op) {
      // The caller unwinds before it gets a Request. It ends stuck in this call as much as
      // the members that wait in it: which of them noticed depends on who posted first, so
      // the trace marks every member's pending call the same way (blocked).
      op->blocked_at_end = true;
      if (tracing_) detail::hash_pending_input(*op);  // before its caller unwinds
      abandon(ranks_[static_cast<std::size_t>(rank)]->spare);
    }
    throw_call_mismatch(rank, group, seq, slot);
  }
  if (slot.complete(size)) {
    // Members agree, so either all of them are native calls or none is.
    if (op) finish_collective(slot);
    window.retire_completed(size);
  }
}

void Fabric::throw_call_mismatch(int rank, const Group& group, std::uint64_t seq,
                                 const detail::CallSlot& slot) {
  // The table's rows, with the algorithms' names (the slot holds their indices).
  std::vector<std::optional<detail::PostedFingerprint>> rows(slot.ops.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!slot.posted(i)) continue;
    const detail::PostedCall c = slot.call(i);
    rows[i] = detail::PostedFingerprint{
        CollectiveFingerprint{c.signature, fingerprints_.algorithms[c.algorithm],
                              c.per_peer_counts},
        c.rank_seq, c.site};
  }
  // Kept with the rank that noticed: its failure may become the run's verdict later.
  detail::RankSlot& me = *ranks_[static_cast<std::size_t>(rank)];
  std::string table = detail::mismatch_table(
      group, seq, rows,
      [](const detail::PostedFingerprint& m) -> const CollectiveFingerprint& {
        return m.fingerprint;
      },
      me.mismatch_culprit, me.mismatch_sentence);
  throw MismatchError(std::move(table));
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
