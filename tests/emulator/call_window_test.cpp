// The call window (emulator/detail/call_window.hpp): a ring of call slots, oldest first,
// growing while members run ahead and reusing one slot while calls come one at a time.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "emulator/detail/call_window.hpp"

namespace ranklab::detail {
namespace {

constexpr int kMembers = 3;

// Every member posts call `seq` (the slot completes); `window.retire_completed` not called.
void post_all(CallWindow& window, std::uint64_t seq) {
  CallSlot& slot = window.slot(seq, kMembers);
  slot.arrived = kMembers;
}

std::vector<int> arrived_in_order(const CallWindow& window) {
  std::vector<int> out;
  for (const CallSlot& slot : window.slots()) out.push_back(slot.arrived);
  return out;
}

TEST(CallWindowTest, NewSlotsHaveEveryMemberEmpty) {
  CallWindow window;
  CallSlot& slot = window.slot(0, kMembers);
  ASSERT_EQ(slot.ops.size(), 3u);
  EXPECT_TRUE(slot.calls.empty()) << "sized by the first point-to-point call only";
  EXPECT_FALSE(slot.posted(0) || slot.posted(1) || slot.posted(2));
  EXPECT_EQ(slot.arrived, 0);
  EXPECT_EQ(slot.first, -1);
  EXPECT_FALSE(slot.mismatched);
}

TEST(CallWindowTest, GrowsWhileMembersRunAheadAndKeepsEachSlot) {
  // A member posts ten calls before anyone completes one: the ring grows past its first
  // sizes (1, 2, 4, 8) and every open slot keeps what was posted into it.
  CallWindow window;
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    window.slot(seq, kMembers).first = static_cast<int>(seq);
  }
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    const CallSlot* slot = window.find(seq);
    ASSERT_NE(slot, nullptr) << seq;
    EXPECT_EQ(slot->first, static_cast<int>(seq));
  }
  EXPECT_EQ(window.find(10), nullptr);
  EXPECT_EQ(arrived_in_order(window).size(), 10u);
}

TEST(CallWindowTest, RetiresCompletedSlotsFromTheFrontOnly) {
  CallWindow window;
  window.slot(2, kMembers);  // opens 0, 1 and 2
  post_all(window, 1);       // the second completes before the first
  window.retire_completed(kMembers);
  EXPECT_EQ(arrived_in_order(window), (std::vector<int>{0, kMembers, 0}));
  post_all(window, 0);
  window.retire_completed(kMembers);  // 0 and then 1 retire; 2 stays open
  EXPECT_EQ(window.find(0), nullptr);
  EXPECT_EQ(window.find(1), nullptr);
  ASSERT_NE(window.find(2), nullptr);
  EXPECT_EQ(arrived_in_order(window), (std::vector<int>{0}));
}

TEST(CallWindowTest, WrapsAroundWithSlotsOpen) {
  // Two calls open at a time over many calls: the ring's head wraps, slots stay in order.
  CallWindow window;
  window.slot(1, kMembers);
  for (std::uint64_t seq = 0; seq < 40; ++seq) {
    window.slot(seq + 2, kMembers).first = static_cast<int>(seq + 2);
    post_all(window, seq);
    window.retire_completed(kMembers);
    ASSERT_EQ(window.find(seq), nullptr);
    ASSERT_NE(window.find(seq + 2), nullptr);
    EXPECT_EQ(window.find(seq + 2)->first, static_cast<int>(seq + 2));
    EXPECT_EQ(arrived_in_order(window).size(), 2u);
  }
}

TEST(CallWindowTest, CallsOneAtATimeReuseOneSlot) {
  // A world of a million ranks has a million members per slot: blocking collectives one
  // after another must not spread over several slots (each with its own vectors).
  CallWindow window;
  const CallSlot* first = &window.slot(0, kMembers);
  for (std::uint64_t seq = 0; seq < 5; ++seq) {
    CallSlot& slot = window.slot(seq, kMembers);
    EXPECT_EQ(&slot, first) << seq;
    EXPECT_EQ(slot.arrived, 0) << "reset when reopened";
    post_all(window, seq);
    window.retire_completed(kMembers);
  }
}

TEST(CallWindowTest, ANativeCallsFingerprintIsItsOperations) {
  // A native call posts only its operation: the slot reads its fingerprint from there, and
  // compares it with a point-to-point member's as with a posted one.
  CallWindow window;
  CallSlot& slot = window.slot(0, kMembers);
  Operation op;
  op.rank_seq = 5;
  op.signature = {.op = OpKind::all_reduce, .has_reduce_op = true, .dtype = DataType::f32,
                  .count = 4};
  op.site.line = 12;
  slot.ops[1] = &op;
  EXPECT_TRUE(slot.posted(1));
  EXPECT_FALSE(slot.posted(0));
  const PostedCall call = slot.call(1);
  EXPECT_EQ(call.signature, op.signature);
  EXPECT_EQ(call.algorithm, PostedCall::kDirectAlgorithm);
  EXPECT_EQ(call.rank_seq, 5u);
  EXPECT_EQ(call.site.line, 12u);

  Operation other;
  other.signature = op.signature;
  EXPECT_TRUE(slot.agrees_with(1, other));
  other.signature.count = 8;
  EXPECT_FALSE(slot.agrees_with(1, other));

  slot.calls.resize(kMembers);
  slot.calls[2] = PostedCall{op.signature, /*algorithm=*/3, false, 7, {}};  // ring, say
  EXPECT_TRUE(slot.posted(2));
  EXPECT_FALSE(slot.agrees_with(2, op)) << "another algorithm";
  EXPECT_FALSE(slot.agrees_with(1, *slot.calls[2]));
}

TEST(CallWindowTest, AReopenedSlotForgetsItsPointToPointCalls) {
  CallWindow window;
  CallSlot& slot = window.slot(0, kMembers);
  slot.calls.resize(kMembers);
  slot.calls[0] = PostedCall{};
  post_all(window, 0);
  window.retire_completed(kMembers);
  CallSlot& again = window.slot(1, kMembers);
  ASSERT_EQ(&again, &slot);
  EXPECT_FALSE(again.posted(0));
}

}  // namespace
}  // namespace ranklab::detail
