// The collective calls of one group that some members have posted and others not yet.
// Private to emulator/.
//
// Every collective call, native (`direct`) or run as point-to-point messages by the
// communicator, takes the next number of its group's one sequence, and every member posts
// its fingerprint of the call into that number's slot. A native call also leaves its
// operation there; the last member to arrive runs it. Members post in increasing sequence
// numbers, so a slot fills only after every earlier one has: slots complete in order, and
// the window is a deque whose front is retired as it completes. Retired slots keep their
// vectors for reuse, so a steady stream of collectives allocates nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "comm/collective_args.hpp"
#include "emulator/detail/operation.hpp"

namespace ranklab::detail {

/// One member's fingerprint of one call (CollectiveFingerprint without its strings).
struct PostedCall {
  CollectiveSignature signature;
  std::uint16_t algorithm = 0;  ///< index into FingerprintBook::algorithms; 0 is `direct`
  bool per_peer_counts = false;
  std::uint64_t rank_seq = 0;   ///< the member's operation number when it posted
  SourceSite site;              ///< where the member called it (mismatch tables show it)

  /// Members agree when everything but their own operation number agrees.
  bool agrees_with(const PostedCall& other) const {
    return signature == other.signature && algorithm == other.algorithm &&
           per_peer_counts == other.per_peer_counts;
  }
};

/// One call of a group, while members are posting.
struct CallSlot {
  std::vector<std::optional<PostedCall>> calls;  ///< by group rank; empty until posted
  /// Native calls: each member's operation. Not owned (owning would cost three atomic
  /// reference-count updates per member and call): a Request keeps its operation until it
  /// completes, and the fabric keeps those of an aborted run (Fabric::abandoned_).
  std::vector<Operation*> ops;
  int arrived = 0;
  int first = -1;  ///< group rank of the first to post: later ones are checked against it
  /// A member's call disagreed. It fails, but until its failure ends the run the others may
  /// still post; the call must never run, since the failing member's buffers go away as
  /// its exception unwinds (and their sizes are not what the others expect).
  bool mismatched = false;

  bool complete(int group_size) const { return arrived == group_size && !mismatched; }
};

class CallWindow {
 public:
  /// The slot of call `seq`, created (with `group_size` empty members) if no member posted
  /// it yet. `seq` is at least the oldest call still in the window.
  CallSlot& slot(std::uint64_t seq, int group_size) {
    while (base_ + slots_.size() <= seq) slots_.push_back(fresh_slot(group_size));
    return slots_[seq - base_];
  }

  /// The slot of call `seq` if some member posted it and not every member has.
  const CallSlot* find(std::uint64_t seq) const {
    return seq >= base_ && seq - base_ < slots_.size() ? &slots_[seq - base_] : nullptr;
  }

  /// Drops the completed slots at the front.
  void retire_completed(int group_size) {
    while (!slots_.empty() && slots_.front().complete(group_size)) {
      spare_.push_back(std::move(slots_.front()));
      slots_.pop_front();
      ++base_;
    }
  }

  const std::deque<CallSlot>& slots() const { return slots_; }

 private:
  CallSlot fresh_slot(int group_size) {
    CallSlot slot;
    if (!spare_.empty()) {
      slot = std::move(spare_.back());
      spare_.pop_back();
    }
    const auto n = static_cast<std::size_t>(group_size);
    slot.calls.assign(n, std::nullopt);
    slot.ops.assign(n, nullptr);
    slot.arrived = 0;
    slot.first = -1;
    slot.mismatched = false;
    return slot;
  }

  std::deque<CallSlot> slots_;
  std::uint64_t base_ = 0;  ///< sequence number of slots_.front()
  std::vector<CallSlot> spare_;
};

}  // namespace ranklab::detail
