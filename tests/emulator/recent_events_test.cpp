// The ring of a rank's last events (emulator/detail/recent_events.hpp): oldest first, at
// most kCapacity of them, whether it has filled up or not.
#include "emulator/detail/recent_events.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ranklab::testing {
namespace {

using detail::RecentEvent;
using detail::RecentEvents;

std::vector<std::uint64_t> seqs_after(std::size_t pushes) {
  RecentEvents recent;
  for (std::size_t i = 0; i < pushes; ++i) recent.next().rank_seq = i;
  std::vector<std::uint64_t> out;
  for (const RecentEvent& e : recent.snapshot()) out.push_back(e.rank_seq);
  return out;
}

//! Before the ring is full, every event, in order; after, the last kCapacity, in order:
//! across the move from the inline entries to the heap ring and every wrap-around.
TEST(RecentEventsTest, KeepsTheLastEventsOldestFirst) {
  constexpr std::size_t kCap = RecentEvents::kCapacity;
  EXPECT_TRUE(seqs_after(0).empty());
  EXPECT_EQ(seqs_after(3), (std::vector<std::uint64_t>{0, 1, 2}));
  for (std::size_t pushes : {RecentEvents::kInline - 1, RecentEvents::kInline,
                             RecentEvents::kInline + 1, kCap - 1, kCap, kCap + 1, 2 * kCap,
                             2 * kCap + 3, 5 * kCap + 7}) {
    std::vector<std::uint64_t> expected;
    for (std::size_t i = pushes < kCap ? 0 : pushes - kCap; i < pushes; ++i) expected.push_back(i);
    EXPECT_EQ(seqs_after(pushes), expected) << pushes << " pushes";
  }
}

}  // namespace
}  // namespace ranklab::testing
