#include "model/random.hpp"

#include <cmath>

#include "emulator/random.hpp"

namespace ranklab {

namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Fills `out` with N(0, stddev^2) draws in storage order; one generator per tensor, so
// each tensor depends on its own seed only.
template <typename Scalar>
void fill_normal(Scalar* out, Eigen::Index count, std::uint64_t seed, double stddev) {
  Rng rng(seed);
  for (Eigen::Index i = 0; i < count; ++i) out[i] = static_cast<Scalar>(rng.normal() * stddev);
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  // SplitMix64 (the emulator's generator) is what the xoshiro authors recommend for
  // seeding: it never yields four zero words in a row, the one state xoshiro cannot leave.
  SplitMix64 seeder(seed);
  for (auto& word : state_) word = seeder.next();
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() {
  // The top 53 bits are the best ones of xoshiro256**; 2^-53 makes an exact double.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Polar Box-Muller: a point uniform in the unit disc gives two independent normals
  // with one log and one sqrt (sqrt is exactly rounded everywhere), and no sin/cos,
  // which keeps the results as portable as the C library allows.
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double factor = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * factor;
  has_spare_ = true;
  return u * factor;
}

template <typename Scalar>
Matrix<Scalar> random_normal_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed,
                                    double stddev) {
  Matrix<Scalar> out(rows, cols);
  fill_normal(out.data(), out.size(), seed, stddev);
  return out;
}

template <typename Scalar>
Vector<Scalar> random_normal_vector(Eigen::Index size, std::uint64_t seed, double stddev) {
  Vector<Scalar> out(size);
  fill_normal(out.data(), out.size(), seed, stddev);
  return out;
}

template Matrix<float> random_normal_matrix<float>(Eigen::Index, Eigen::Index, std::uint64_t,
                                                   double);
template Matrix<double> random_normal_matrix<double>(Eigen::Index, Eigen::Index, std::uint64_t,
                                                     double);
template Vector<float> random_normal_vector<float>(Eigen::Index, std::uint64_t, double);
template Vector<double> random_normal_vector<double>(Eigen::Index, std::uint64_t, double);

}  // namespace ranklab
