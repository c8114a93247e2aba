// The ring of a rank's recent events (emulator/detail/recent_events.hpp): its growth and
// wrap-around, and the snapshot a report reads.
#include "emulator/detail/recent_events.hpp"

#include <algorithm>

namespace ranklab::detail {

std::vector<RecentEvent> RecentEvents::snapshot() const {
  std::vector<RecentEvent> out;
  if (full_) {  // the oldest is the next to be overwritten
    out.assign(cursor_, ring_ + kCapacity);
    out.insert(out.end(), ring_, cursor_);
  } else {
    out.assign(ring_, cursor_);
  }
  return out;
}

void RecentEvents::turn() {
  if (ring_ == inline_) {
    auto* heap = new RecentEvent[kCapacity];
    std::copy(inline_, inline_ + kInline, heap);
    ring_ = heap;
    cursor_ = heap + kInline;
    end_ = heap + kCapacity;
  } else {
    cursor_ = ring_;
    full_ = true;
  }
}

RecentEvent& RecentEvents::insert_in_order(std::uint64_t rank_seq) {
  if (!full_ && cursor_ == end_) turn();  // room for one more (or the ring is full now)
  std::vector<RecentEvent> held = snapshot();
  if (full_) {
    if (rank_seq < held.front().rank_seq) return spare_;  // older than every one kept
    held.erase(held.begin());
  }
  const auto at = std::find_if(held.begin(), held.end(),
                               [&](const RecentEvent& e) { return e.rank_seq > rank_seq; });
  const auto index = at - held.begin();
  held.insert(at, RecentEvent{})->rank_seq = rank_seq;
  // Back into the ring in order, the lowest number where the next event goes once full.
  std::copy(held.begin(), held.end(), ring_);
  cursor_ = full_ ? ring_ : ring_ + held.size();
  return ring_[index];
}

}  // namespace ranklab::detail
