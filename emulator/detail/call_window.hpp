// The collective calls of one group that some members have posted and others not yet.
// Private to emulator/.
//
// Every collective call, native (`direct`) or run as point-to-point messages by the
// communicator, takes the next number of its group's one sequence, and every member posts
// its fingerprint of the call into that number's slot. A native call leaves its operation
// there instead, whose signature and site are its fingerprint (copying them out would cost
// a sixth of the post); the last member to arrive runs it. Members post in increasing sequence
// numbers, so a slot fills only after every earlier one has: slots complete in order, and
// the window is a ring whose oldest slots retire as they complete. Retired slots keep their
// vectors for reuse, so a steady stream of collectives allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/collective_args.hpp"
#include "emulator/detail/operation.hpp"

namespace ranklab::detail {

/// One member's fingerprint of one call (CollectiveFingerprint without its strings).
struct PostedCall {
  /// The algorithm index of native calls (FingerprintBook::algorithms[0]).
  static constexpr std::uint16_t kDirectAlgorithm = 0;

  CollectiveSignature signature;
  std::uint16_t algorithm = 0;  ///< index into FingerprintBook::algorithms; 0 is `direct`
  bool per_peer_counts = false;
  std::uint64_t rank_seq = 0;   ///< the member's operation number when it posted
  SourceSite site;              ///< where the member called it (mismatch tables show it)

  /// A native call's fingerprint: its operation's (algorithm `direct`, index 0).
  static PostedCall of(const Operation& op) {
    return {op.signature, kDirectAlgorithm, false, op.rank_seq, op.site};
  }

  /// Members agree when everything but their own operation number agrees.
  bool agrees_with(const PostedCall& other) const {
    return signature == other.signature && algorithm == other.algorithm &&
           per_peer_counts == other.per_peer_counts;
  }
};

/// One call of a group, while members are posting.
struct CallSlot {
  /// Native calls: each member's operation, by group rank; null until posted. Not owned
  /// (owning would cost three atomic reference-count updates per member and call): a
  /// Request keeps its operation until it completes, and the fabric keeps those of an
  /// aborted run (Fabric::abandoned_).
  std::vector<Operation*> ops;
  /// Point-to-point calls (the communicator's algorithms): each member's fingerprint, by
  /// group rank. Sized by the first such call only, so a slot of native calls never fills
  /// (nor clears) a vector of fingerprints.
  std::vector<std::optional<PostedCall>> calls;
  std::uint64_t seq = 0;  ///< the call's number in its group
  int arrived = 0;
  int first = -1;  ///< group rank of the first to post: later ones are checked against it
  /// Native calls: the largest clock_at_post of the members so far, kept as they arrive
  /// (the call's Lamport clock is one more, whatever the arrival order).
  std::uint64_t clock = 0;
  /// A member's call disagreed with the first's. The call never runs (the members' buffers
  /// are not the sizes the others expect); every member waits at its post until the verdict,
  /// which is judged once every member has posted, or once the run can go no further
  /// (Fabric::judge_call), so that it never depends on who arrived first.
  bool mismatched = false;
  bool judged = false;  ///< its mismatch is judged (a failure of the run is noted)

  bool complete(int group_size) const { return arrived == group_size && !mismatched; }

  /// Whether member `i` (group rank) has posted.
  bool posted(std::size_t i) const { return ops[i] != nullptr || (!calls.empty() && calls[i]); }
  /// Member `i`'s fingerprint, once it posted.
  PostedCall call(std::size_t i) const { return ops[i] ? PostedCall::of(*ops[i]) : *calls[i]; }
  /// Whether member `i`'s call agrees with a native call of `op` (the hot path compares
  /// signatures only: two native calls agree on everything else).
  bool agrees_with(std::size_t i, const Operation& op) const {
    return ops[i] ? ops[i]->signature == op.signature : calls[i]->agrees_with(PostedCall::of(op));
  }
  /// The same for a point-to-point call.
  bool agrees_with(std::size_t i, const PostedCall& other) const {
    return call(i).agrees_with(other);
  }
};

class CallWindow {
 public:
  /// The slot of call `seq`, created (with `group_size` empty members) if no member posted
  /// it yet. `seq` is at least the oldest call still in the window.
  CallSlot& slot(std::uint64_t seq, int group_size) {
    // Inline, its slot's opening not: every member of every call asks, one in a group opens.
    if (base_ + count_ <= seq) open_slots(seq, group_size);
    return at(seq);
  }

  /// The slot of call `seq` if some member posted it and not every member has.
  const CallSlot* find(std::uint64_t seq) const {
    return seq >= base_ && seq - base_ < count_ ? &at(seq) : nullptr;
  }

  /// Drops the completed slots at the front.
  void retire_completed(int group_size) {
    while (count_ != 0 && ring_[head_].complete(group_size)) {
      ++base_;
      head_ = (head_ + 1) & mask();
      // An empty window starts again at the ring's first slot, so that calls one after
      // another (never more than one open) reuse one slot and its vectors: a world of a
      // million ranks has a million members per slot.
      if (--count_ == 0) head_ = 0;
    }
  }

  /// The open slots whose members disagree and whose verdict is not judged yet, oldest
  /// first.
  std::vector<CallSlot*> unjudged_mismatches() {
    std::vector<CallSlot*> out;
    for (std::uint64_t seq = base_; seq != base_ + count_; ++seq) {
      if (CallSlot& s = at(seq); s.mismatched && !s.judged) out.push_back(&s);
    }
    return out;
  }

  /// The open slots, oldest first (a range for range-for).
  class Slots {
   public:
    class iterator {
     public:
      iterator(const CallWindow& window, std::uint64_t seq) : window_(&window), seq_(seq) {}
      const CallSlot& operator*() const { return window_->at(seq_); }
      iterator& operator++() {
        ++seq_;
        return *this;
      }
      bool operator!=(const iterator& other) const { return seq_ != other.seq_; }

     private:
      const CallWindow* window_;
      std::uint64_t seq_;
    };
    explicit Slots(const CallWindow& window) : window_(window) {}
    iterator begin() const { return {window_, window_.base_}; }
    iterator end() const { return {window_, window_.base_ + window_.count_}; }

   private:
    const CallWindow& window_;
  };
  Slots slots() const { return Slots(*this); }

 private:
  // A ring (its size a power of two) from head_: a call's slot stays where it was opened
  // until it retires, and a retired slot is reset in place for a later call, keeping its
  // vectors. (A deque moved each slot in and out, and computed its size from node pointers
  // on every post.)
  std::size_t mask() const { return mask_; }
  /// Call `seq`'s slot, for base_ <= seq < base_ + count_.
  CallSlot& at(std::uint64_t seq) { return ring_[(head_ + (seq - base_)) & mask()]; }
  const CallSlot& at(std::uint64_t seq) const { return ring_[(head_ + (seq - base_)) & mask()]; }

  /// Opens slots up to call `seq`'s.
  [[gnu::noinline]] void open_slots(std::uint64_t seq, int group_size) {
    while (base_ + count_ <= seq) open_slot(group_size);
  }

  void open_slot(int group_size) {
    if (count_ == ring_.size()) grow();
    CallSlot& slot = ring_[(head_ + count_) & mask()];
    const auto n = static_cast<std::size_t>(group_size);
    slot.ops.assign(n, nullptr);
    slot.calls.clear();  // keeps its capacity
    slot.seq = base_ + count_;
    slot.arrived = 0;
    slot.first = -1;
    slot.clock = 0;
    slot.mismatched = false;
    slot.judged = false;
    ++count_;
  }

  void grow() {
    std::vector<CallSlot> grown(ring_.empty() ? 1 : 2 * ring_.size());
    for (std::size_t i = 0; i < ring_.size(); ++i) {
      grown[i] = std::move(ring_[(head_ + i) & mask()]);
    }
    ring_ = std::move(grown);
    mask_ = ring_.size() - 1;
    head_ = 0;
  }

  std::vector<CallSlot> ring_;
  std::size_t mask_ = 0;      ///< ring_.size() - 1 (a size is a subtraction and a shift)
  std::size_t head_ = 0;      ///< ring position of the oldest open slot
  std::uint64_t base_ = 0;    ///< sequence number of the oldest open slot
  std::size_t count_ = 0;     ///< open slots
};

}  // namespace ranklab::detail
