// What the fabric keeps of the communicator's collectives besides their call slots
// (fabric_fingerprint.cpp). Private to emulator/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/fingerprint.hpp"
#include "comm/group.hpp"

namespace ranklab::detail {

/// The collective a rank is running as point-to-point messages (between begin_collective
/// and end_collective); the deadlock-time order check reads it.
struct InsideCollective {
  const Group* group = nullptr;
  std::uint64_t seq = 0;
  CollectiveFingerprint fingerprint;
};

struct FingerprintBook {
  /// Algorithm names seen so far; a posted call holds an index, so comparing and copying a
  /// fingerprint on the hot path touches no string. [0] is the native path's.
  std::vector<std::string> algorithms{"direct"};
  /// inside[rank], sized on first use.
  std::vector<std::optional<InsideCollective>> inside;

  std::uint16_t algorithm_id(std::string_view name) {
    const auto it = std::find(algorithms.begin(), algorithms.end(), name);
    if (it != algorithms.end()) return static_cast<std::uint16_t>(it - algorithms.begin());
    algorithms.emplace_back(name);
    return static_cast<std::uint16_t>(algorithms.size() - 1);
  }
};

}  // namespace ranklab::detail
