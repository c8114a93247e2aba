#include "comm/fingerprint.hpp"

#include <fmt/format.h>

namespace ranklab {

std::string describe(const CollectiveFingerprint& fingerprint, bool with_algorithm) {
  const CollectiveSignature& sig = fingerprint.signature;
  std::string text =
      fingerprint.per_peer_counts
          ? fmt::format("{}_v({}, counts per peer)", to_string(sig.op), to_string(sig.dtype))
          : describe(sig);
  if (with_algorithm && !fingerprint.algorithm.empty()) text += " via " + fingerprint.algorithm;
  return text;
}

}  // namespace ranklab
