// How a receive matches a message, on every backend: the wildcards, the tag range that
// belongs to the collectives, and what a completed receive matched.
#pragma once

#include <cstddef>

#include "traces/event.hpp"

namespace ranklab {

inline constexpr int kAnySource = -2;  ///< irecv/recv: match a message from any member
inline constexpr int kAnyTag = -1;     ///< irecv/recv: match any user tag
/// Tags from here up belong to the collective algorithms (collectives/tags.hpp); kAnyTag
/// never matches them, so a wildcard receive cannot steal a collective's message.
inline constexpr int kFirstReservedTag = 1 << 30;

/// What a completed receive matched.
struct RecvStatus {
  int source = kNoRank;  ///< group rank of the sender
  int tag = 0;
  std::size_t count = 0;  ///< elements received
};

}  // namespace ranklab
