// The sizes of the model of the seed test (DESIGN.md §4): B=8, S=16, H=32, I=64, L=4.
#pragma once

#include <cstdint>

namespace ranklab {

/// Problem sizes of the MLP: activations are [batch*seq, hidden] and each layer has
/// W1 [inter, hidden], b1 [inter], W2 [hidden, inter], b2 [hidden].
struct ModelShape {
  std::int64_t batch = 8;
  std::int64_t seq = 16;
  std::int64_t hidden = 32;
  std::int64_t inter = 64;
  std::int64_t layers = 4;

  /// Rows of an activation matrix: batch*seq.
  std::int64_t rows() const { return batch * seq; }

  /// Throws UsageError naming the first size that is not positive, or a shape whose
  /// activation or weight matrices would not fit in memory.
  void validate() const;

  friend bool operator==(const ModelShape&, const ModelShape&) = default;
};

}  // namespace ranklab
