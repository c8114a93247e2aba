// Native collectives: a rendezvous on the group's k-th collective slot. Every member posts
// its signature and buffers; a member whose signature disagrees fails the run at once; the
// last to arrive executes the collective and releases everyone.
#include <algorithm>
#include <map>

#include "emulator/detail/collective_exec.hpp"
#include "emulator/detail/mismatch_table.hpp"
#include "emulator/errors.hpp"
#include "emulator/fabric.hpp"
#include "traces/hash.hpp"

namespace ranklab {

using detail::Operation;

Request Fabric::icollective(int rank, const Group& group, const CollectiveArgs& args) {
  const int me = group.group_rank(rank);
  RANKLAB_CHECK(me >= 0, "rank {}: {} on group {}, which it is not a member of", rank,
                to_string(args.op), group.name());
  const CollectiveSignature signature = make_signature(args, group.size(), me);
  const std::uint64_t hash = tracing_ ? payload_hash(args.input.as_bytes()) : 0;
  Lock lock(mutex_);
  throw_if_aborted(rank);
  auto op = new_operation(rank, args.op, group);
  op->coll = args;
  op->signature = signature;
  op->hash = hash;
  auto& next = ranks_[static_cast<std::size_t>(rank)]->coll_seq;
  if (next.size() <= group.id()) next.resize(group.id() + 1, 0);
  op->coll_seq = next[group.id()]++;
  join_collective(op);
  return Request(this, std::move(op));
}

void Fabric::join_collective(const std::shared_ptr<Operation>& op) {
  const Group& group = *op->group;
  auto& slots = group_states_[group.id()]->slots;
  CollectiveSlot& slot = slots[op->coll_seq];
  if (slot.members.empty()) slot.members.resize(static_cast<std::size_t>(group.size()));
  slot.members[static_cast<std::size_t>(group.group_rank(op->rank))] = op;
  ++slot.arrived;
  check_signatures(slot, *op);
  if (slot.first == nullptr) slot.first = op.get();
  if (slot.arrived == group.size()) {
    finish_collective(slot);
    slots.erase(op->coll_seq);
  }
}


void Fabric::check_signatures(const CollectiveSlot& slot, const Operation& op) {
  // Everyone who arrived before agreed with the first arrival, so comparing with it is
  // enough (O(1) per arrival; a 65,536-rank collective must not be quadratic).
  if (slot.first == nullptr || slot.first->signature == op.signature) return;
  int culprit = -1;
  std::string table = detail::mismatch_table(
      *op.group, static_cast<std::uint64_t>(op.coll_seq), slot.members,
      [](const Operation& m) -> const CollectiveSignature& { return m.signature; }, culprit,
      mismatch_sentence_);
  mismatch_culprit_ = culprit;
  throw MismatchError(table);
}

void Fabric::finish_collective(CollectiveSlot& slot) {
  const CollectiveSignature& sig = slot.members.front()->signature;
  detail::execute_collective(sig, slot.members);
  // Every member's clock when it joined, so the value does not depend on arrival order;
  // each member's own clock advances when it observes the completion.
  std::uint64_t clock = 0;
  for (const auto& m : slot.members) clock = std::max(clock, m->clock_at_post);
  ++clock;
  for (const auto& m : slot.members) {
    m->lamport = clock;
    complete(*m);
  }
}

}  // namespace ranklab
