// The fabric's state as its post-mortem reads it (emulator/diagnosis/): taken once, under the
// lock, when a run ends badly.
#include <map>
#include <utility>

#include "emulator/detail/pending_op.hpp"
#include "emulator/fabric.hpp"

namespace ranklab {

diagnosis::PendingOp detail::pending_op(const Operation& op) {
  const bool send = op.kind == OpKind::send;
  return {.kind = op.kind,
          .rank = op.rank,
          .group = op.group,
          .peer = op.peer,
          .tag = op.tag,
          .dtype = send ? op.send_data.dtype : op.recv_data.dtype,
          .count = send ? op.send_data.count : op.recv_data.count,
          .signature = op.signature,
          .coll_seq = op.coll_seq,
          .rank_seq = op.rank_seq,
          .site = op.site,
          .done = op.done.load(std::memory_order_relaxed)};
}

diagnosis::FabricSnapshot Fabric::snapshot() const {
  diagnosis::FabricSnapshot out;
  out.ranks.resize(ranks_.size());
  out.unexpected.resize(ranks_.size());
  std::map<std::pair<std::uint32_t, std::uint64_t>, int> calls;  // (group, call slot) -> index
  const auto& inside = fingerprints_.inside;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankSlot& slot = *ranks_[r];
    diagnosis::RankView& view = out.ranks[r];
    view.state = slot.state;
    if (slot.waiting_on == nullptr) continue;
    const detail::Operation& op = *slot.waiting_on;
    view.waiting_on = static_cast<int>(out.ops.size());
    out.ops.push_back(detail::pending_op(op));
    if (r < inside.size()) view.inside = inside[r];
    if (!is_point_to_point(op.kind)) {
      const Group& g = *op.group;
      const auto [at, added] =
          calls.try_emplace({g.id(), op.call_seq}, static_cast<int>(out.calls.size()));
      out.ops.back().call = at->second;
      if (!added) continue;
      const detail::CallSlot* call = group_states_[g.id()]->calls.find(op.call_seq);
      diagnosis::CallState& state = out.calls.emplace_back();
      for (int i = 0; i < g.size(); ++i) {
        if (call == nullptr || !call->posted(static_cast<std::size_t>(i))) state.absent.push_back(i);
      }
    } else if (slot.state == RankState::blocked && op.kind == OpKind::recv) {
      for (const auto& send : ranks_[r]->mailbox.unexpected) {
        out.unexpected[r].push_back(static_cast<int>(out.ops.size()));
        out.ops.push_back(detail::pending_op(*send));
      }
    }
  }
  if (faults_) out.dropped = faults_->dropped();
  return out;
}

}  // namespace ranklab
