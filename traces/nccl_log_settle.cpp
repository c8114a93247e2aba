// Which operations of an NCCL log never completed (rules in traces/nccl_log.hpp). NCCL prints
// an operation when the program enqueues it, so a hung job's logs go on past the operation
// each rank is stuck in; what cannot have completed follows from the others' logs: a
// collective a member never enqueued or enqueued differently, a message without its partner,
// and from there everything that waited for them.
#include <unordered_map>

#include "traces/detail/nccl_log_import.hpp"

namespace ranklab::detail::nccl {
namespace {

struct OpRef {
  std::uint32_t device = 0;
  std::uint32_t index = 0;
};

/// The sends and receives of one (communicator, sender, receiver), in order: NCCL matches
/// them by position.
struct Channel {
  std::vector<std::uint32_t> sends;  ///< op indices on the sender's device
  std::vector<std::uint32_t> recvs;  ///< on the receiver's
};

class Settler {
 public:
  explicit Settler(const Logs& logs) : logs_(logs) {
    pending_.resize(logs.devices.size());
    position_.resize(logs.devices.size());
    collectives_.resize(logs.identities.size());
    for (std::size_t g = 0; g < logs.identities.size(); ++g) {
      collectives_[g].resize(logs.identities[g].members.size());
    }
    for (std::uint32_t d = 0; d < logs.devices.size(); ++d) index_device(d);
  }

  std::vector<std::vector<bool>> settle() {
    seed_collectives();
    seed_messages();
    while (!work_.empty()) {
      const OpRef ref = work_.back();
      work_.pop_back();
      spread(ref);
    }
    return std::move(pending_);
  }

 private:
  const Op& op(OpRef ref) const { return logs_.devices[ref.device].ops[ref.index]; }
  const CommRecord& record(OpRef ref) const { return logs_.records[op(ref).record]; }

  static std::uint64_t channel_key(std::uint32_t identity, int from, int to) {
    return (std::uint64_t{identity} << 42) | (static_cast<std::uint64_t>(from) << 21) |
           static_cast<std::uint64_t>(to);
  }

  void index_device(std::uint32_t d) {
    const std::vector<Op>& ops = logs_.devices[d].ops;
    pending_[d].assign(ops.size(), false);
    position_[d].resize(ops.size());
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      const CommRecord& r = logs_.records[ops[i].record];
      std::vector<std::uint32_t>* list = nullptr;
      if (ops[i].kind == OpKind::send) {
        list = &channels_[channel_key(r.identity, r.rank, ops[i].root)].sends;
      } else if (ops[i].kind == OpKind::recv) {
        list = &channels_[channel_key(r.identity, ops[i].root, r.rank)].recvs;
      } else {
        list = &collectives_[r.identity][static_cast<std::size_t>(r.rank)];
      }
      position_[d][i] = static_cast<std::uint32_t>(list->size());
      list->push_back(i);
    }
  }

  static bool same_call(const Op& a, const Op& b) {
    if (a.kind != b.kind || a.dtype != b.dtype || a.count != b.count) return false;
    if (takes_reduce_op(a.kind) && a.reduce != b.reduce) return false;
    return !takes_root(a.kind) || a.root == b.root;
  }

  /// The k-th collective of a communicator: not completed where a member never enqueued it
  /// or the members' calls differ.
  void seed_collectives() {
    for (std::uint32_t g = 0; g < logs_.identities.size(); ++g) {
      const auto& by_rank = collectives_[g];
      std::size_t longest = 0, shortest = SIZE_MAX;
      for (const auto& list : by_rank) {
        longest = std::max(longest, list.size());
        shortest = std::min(shortest, list.size());
      }
      const std::vector<int>& members = logs_.identities[g].members;
      for (std::size_t k = 0; k < longest; ++k) {
        bool complete = k < shortest;
        for (std::size_t m = 1; complete && m < by_rank.size(); ++m) {
          complete = same_call(op(at(members, 0, by_rank[0][k])), op(at(members, m, by_rank[m][k])));
        }
        if (complete) continue;
        for (std::size_t m = 0; m < by_rank.size(); ++m) {
          if (k < by_rank[m].size()) mark(at(members, m, by_rank[m][k]));
        }
      }
    }
  }

  static OpRef at(const std::vector<int>& members, std::size_t rank, std::uint32_t index) {
    return {static_cast<std::uint32_t>(members[rank]), index};
  }

  /// A message without its partner never completed.
  void seed_messages() {
    for (const auto& [key, channel] : channels_) {
      const auto identity = static_cast<std::uint32_t>(key >> 42);
      const int from = static_cast<int>((key >> 21) & ((1u << 21) - 1));
      const int to = static_cast<int>(key & ((1u << 21) - 1));
      const std::vector<int>& members = logs_.identities[identity].members;
      for (std::size_t k = channel.recvs.size(); k < channel.sends.size(); ++k) {
        mark(at(members, static_cast<std::size_t>(from), channel.sends[k]));
      }
      for (std::size_t k = channel.sends.size(); k < channel.recvs.size(); ++k) {
        mark(at(members, static_cast<std::size_t>(to), channel.recvs[k]));
      }
    }
  }

  void mark(OpRef ref) {
    auto&& flag = pending_[ref.device][ref.index];
    if (flag) return;
    flag = true;
    work_.push_back(ref);
  }

  /// What waited for `ref`: the rank's next operation on its communicator, its NCCL group,
  /// and its partners.
  void spread(OpRef ref) {
    const Op& o = op(ref);
    const CommRecord& r = record(ref);
    const std::vector<Op>& ops = logs_.devices[ref.device].ops;
    for (std::uint32_t j = ref.index + 1; j < ops.size(); ++j) {
      if (logs_.records[ops[j].record].identity == r.identity) {
        mark({ref.device, j});
        break;
      }
    }
    if (ref.index > 0) {
      const Op& before = ops[ref.index - 1];
      if (before.record == o.record && before.op_count == o.op_count) mark({ref.device, ref.index - 1});
    }
    const std::vector<int>& members = logs_.identities[r.identity].members;
    const std::uint32_t k = position_[ref.device][ref.index];
    if (!is_point_to_point(o.kind)) {
      for (std::size_t m = 0; m < members.size(); ++m) {
        const auto& list = collectives_[r.identity][m];
        if (k < list.size()) mark(at(members, m, list[k]));
      }
      return;
    }
    const bool send = o.kind == OpKind::send;
    const auto channel = channels_.find(send ? channel_key(r.identity, r.rank, o.root)
                                             : channel_key(r.identity, o.root, r.rank));
    const auto& partners = send ? channel->second.recvs : channel->second.sends;
    if (k < partners.size()) mark(at(members, static_cast<std::size_t>(o.root), partners[k]));
  }

  const Logs& logs_;
  std::vector<std::vector<bool>> pending_;
  std::vector<std::vector<std::uint32_t>> position_;  ///< each op's index in its list
  /// By communicator, by its rank: the collectives' op indices.
  std::vector<std::vector<std::vector<std::uint32_t>>> collectives_;
  std::unordered_map<std::uint64_t, Channel> channels_;
  std::vector<OpRef> work_;
};

}  // namespace

std::vector<std::vector<bool>> never_completed(const Logs& logs) { return Settler(logs).settle(); }

}  // namespace ranklab::detail::nccl
