// The two 16-bit floating-point element types of mixed-precision training, bfloat16 and IEEE
// half, held as their bits. Arithmetic converts to float, computes there and rounds back to
// nearest even after every operation, as PyTorch's c10::BFloat16 and c10::Half and Gloo's
// float16 do: a reduction made in the same order gives their bits.
#pragma once

#include <bit>
#include <cstdint>

namespace ranklab {

/// float -> bfloat16 bits, rounding to nearest even; every NaN becomes the quiet 0x7FC0.
constexpr std::uint16_t bfloat16_bits_from(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float float_from_bfloat16_bits(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

/// float -> IEEE binary16 bits, rounding to nearest even (subnormals included; 65520 and
/// above overflow to infinity); a NaN keeps its sign and becomes quiet (0x7E00).
constexpr std::uint16_t float16_bits_from(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t magnitude = x & 0x7fffffffu;
  const auto rounded = [](std::uint32_t kept, std::uint32_t dropped, std::uint32_t half) {
    return dropped > half || (dropped == half && (kept & 1u)) ? kept + 1 : kept;
  };
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, keep 10 mantissa bits
    const std::uint32_t kept = (magnitude >> 13) - (112u << 10);
    return static_cast<std::uint16_t>(sign | rounded(kept, magnitude & 0x1fffu, 0x1000u));
  }
  if (magnitude < 0x33000000u) return static_cast<std::uint16_t>(sign);  // under 2^-25: zero
  // A subnormal half counts units of 2^-24: the float's significand shifted right.
  const std::uint32_t exponent = magnitude >> 23;
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126u - exponent;  // 14..24
  const std::uint32_t kept = significand >> shift;
  const std::uint32_t dropped = significand & ((1u << shift) - 1u);
  return static_cast<std::uint16_t>(sign | rounded(kept, dropped, 1u << (shift - 1u)));
}

constexpr float float_from_float16_bits(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa units of 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// A 16-bit float element of the format FromFloat/ToFloat convert. Operators compute in float
/// and round once, as the libraries above do.
template <std::uint16_t (*FromFloat)(float), float (*ToFloat)(std::uint16_t)>
struct Float16Element {
  std::uint16_t bits = 0;

  Float16Element() = default;
  constexpr explicit Float16Element(float value) : bits(FromFloat(value)) {}
  constexpr explicit operator float() const { return ToFloat(bits); }

  static constexpr Float16Element from_bits(std::uint16_t b) {
    Float16Element e;
    e.bits = b;
    return e;
  }

  friend constexpr Float16Element operator+(Float16Element a, Float16Element b) {
    return Float16Element(float(a) + float(b));
  }
  friend constexpr Float16Element operator*(Float16Element a, Float16Element b) {
    return Float16Element(float(a) * float(b));
  }
  friend constexpr Float16Element operator/(Float16Element a, Float16Element b) {
    return Float16Element(float(a) / float(b));
  }
  friend constexpr bool operator<(Float16Element a, Float16Element b) {
    return float(a) < float(b);
  }
};

using BFloat16 = Float16Element<bfloat16_bits_from, float_from_bfloat16_bits>;
using Float16 = Float16Element<float16_bits_from, float_from_float16_bits>;

}  // namespace ranklab
