// Tags of the messages that point-to-point collective algorithms send, kept apart from the
// tags of user messages so that the two never match each other.
//
//   [0, kFirstReservedTag)        user tags: Communicator::send/recv accept only these
//   [kFirstReservedTag, INT_MAX]  collectives: kFirstReservedTag + (sequence mod 2^30)
//
// The sequence is the collective's number within its group, assigned by the fabric when
// the member posts its fingerprint (Backend::begin_collective), so every member derives
// the same tag with no communication and two communicators over one group cannot
// disagree. One tag per collective suffices: matching is FIFO per (group, source, tag),
// and every algorithm posts the messages between a pair of ranks in the same order on
// both sides. Mixing the sequence in keeps consecutive collectives apart, so a message
// left over by a broken call cannot be consumed by the next one, and the trace shows
// which call each message belongs to. Wrapping after 2^30 calls is harmless: by then the
// call that used the tag before has long completed.
//
// A receive posted with kAnyTag matches user tags only (the fabric enforces it), so
// wildcard-tag receives and point-to-point collectives can be in flight on one group.
#pragma once

#include <cstdint>

#include "comm/matching.hpp"  // kFirstReservedTag: the first tag reserved for collectives

namespace ranklab {

/// The tag of every message of the group's collective number `sequence`.
constexpr int collective_tag(std::uint64_t sequence) {
  return kFirstReservedTag |
         static_cast<int>(sequence & static_cast<std::uint64_t>(kFirstReservedTag - 1));
}

/// Whether `tag` may be used by a user message (kAnyTag is checked separately).
constexpr bool is_user_tag(int tag) { return tag >= 0 && tag < kFirstReservedTag; }

}  // namespace ranklab
