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

}  // namespace ranklab::detail
