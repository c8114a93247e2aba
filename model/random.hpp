// The project's own portable random numbers (DESIGN.md §5.3): the standard library's
// distributions are implementation-defined, so two compilers would give two sets of weights.
// Here every bit is fixed by this file: SplitMix64 (emulator/random.hpp) expands a 64-bit seed into the state of
// xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021),
// and normal deviates come from the polar form of the Box-Muller transform (Marsaglia 1964).
//
// model/init.hpp uses this generator to make the default weights, inputs and targets
// with the reference's distributions and seed scheme (but not its numbers: PyTorch's
// generator is a different one, so checks against PyTorch load its .npy files instead).
#pragma once

#include <array>
#include <cstdint>

#include "model/tensor.hpp"

namespace ranklab {

/// Seeded xoshiro256** generator with uniform and standard normal deviates in double.
/// Not thread-safe; cheap to copy. Same seed, same sequence on every platform (normal()
/// relies on std::log being correctly rounded or nearly so, as in glibc, musl and MSVC).
class Rng {
 public:
  /// State = four SplitMix64 outputs of `seed` (never all zero).
  explicit Rng(std::uint64_t seed);

  /// Next 64 random bits (xoshiro256**).
  std::uint64_t next_u64();

  /// Uniform double in [0, 1) with 53 random bits.
  double uniform();

  /// Standard normal N(0, 1). Draws come in pairs; the second one is kept for the next call.
  double normal();

 private:
  std::array<std::uint64_t, 4> state_{};
  double spare_ = 0.0;
  bool has_spare_ = false;
};

/// [rows, cols] matrix of N(0, stddev^2) values, filled in row-major order from
/// Rng(seed). Drawn in double and then rounded, so float data is the rounded double data.
template <typename Scalar>
Matrix<Scalar> random_normal_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                                    double stddev);

/// Vector of `size` N(0, stddev^2) values from Rng(seed), drawn as random_normal_matrix does.
template <typename Scalar>
Vector<Scalar> random_normal_vector(Eigen::Index size, std::uint64_t seed, double stddev);

}  // namespace ranklab
