// The fabric's record of collective fingerprints (fabric_fingerprint.cpp). Private to emulator/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "emulator/fingerprint.hpp"
#include "emulator/group.hpp"

namespace ranklab::detail {

/// One member's posted fingerprint.
struct PostedFingerprint {
  CollectiveFingerprint fingerprint;
  std::uint64_t rank_seq = 0;  ///< the rank's next operation number when it posted
};

/// The fingerprints of one call, while members are posting them.
struct FingerprintSlot {
  std::vector<std::optional<PostedFingerprint>> members;  ///< by group rank
  int arrived = 0;
  int first = -1;  ///< group rank of the first to post: later ones are checked against it
};

/// The collective a rank is running as point-to-point messages (between begin_collective
/// and end_collective); the deadlock-time order check reads it.
struct InsideCollective {
  const Group* group = nullptr;
  std::uint64_t seq = 0;
  CollectiveFingerprint fingerprint;
};

struct FingerprintBook {
  /// slots[group id][seq], erased once every member has posted.
  std::vector<std::map<std::uint64_t, FingerprintSlot>> slots;
  /// next[rank][group id]: the rank's next sequence number in the group.
  std::vector<std::vector<std::uint64_t>> next;
  /// inside[rank], sized on first use.
  std::vector<std::optional<InsideCollective>> inside;
};

}  // namespace ranklab::detail
