// A collective call's fingerprint: what every member of the call must agree on. The
// communicator posts one for every collective, whatever the algorithm, so members that
// disagree fail at once instead of exchanging mismatched messages (see
// Backend::begin_collective, which every backend implements).
#pragma once

#include <string>

#include "comm/collective_args.hpp"

namespace ranklab {

/// One member's fingerprint of one collective call. The backend adds the rest of it: the
/// group and the call's sequence number within the group.
struct CollectiveFingerprint {
  CollectiveSignature signature;  ///< op, reduce op, dtype, count, root
  /// How the members move the data (`direct`, `ring`, ...). Part of the fingerprint because
  /// a member running `ring` while another runs `direct` would wait forever.
  std::string algorithm;
  /// all_to_all_v: each pair agrees on its own count, so `signature.count` is 0 and the
  /// counts are checked message by message instead.
  bool per_peer_counts = false;

  friend bool operator==(const CollectiveFingerprint&, const CollectiveFingerprint&) = default;
};

/// `all_reduce(sum, f32, count=8)`, as mismatch reports print it; with `with_algorithm`,
/// `... via ring`: reports name the algorithm only where the calls differ in it (a PyTorch
/// user never chose one).
std::string describe(const CollectiveFingerprint& fingerprint, bool with_algorithm = false);

}  // namespace ranklab
