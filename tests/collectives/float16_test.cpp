// bfloat16 and IEEE half (comm/float16.hpp), exhaustively: every 16-bit pattern survives the
// trip through float, every midpoint between two neighbours rounds to the even one, and the
// edges (overflow, subnormals, NaN) land where PyTorch's conversions put them. A collective
// on them is checked in tests/emulator (the ascending-rank fold, the few-element path) and
// against Open MPI in tests/mpi.
#include "comm/float16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "comm/collective_args.hpp"
#include "comm/errors.hpp"

namespace ranklab::testing {
namespace {

bool is_float16_nan(std::uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu); }
bool is_bfloat16_nan(std::uint16_t bits) {
  return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu);
}

//! Every half that is not a NaN converts to float and back to its own bits; a NaN stays a
//! NaN, quiet, with its sign.
TEST(Float16Test, EveryPatternSurvivesTheTripThroughFloat) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float value = float_from_float16_bits(bits);
    if (is_float16_nan(bits)) {
      ASSERT_TRUE(std::isnan(value)) << std::hex << b;
      ASSERT_EQ(float16_bits_from(value), (bits & 0x8000u) | 0x7e00u) << std::hex << b;
    } else {
      ASSERT_EQ(float16_bits_from(value), bits) << std::hex << b << " read as " << value;
    }
  }
}

//! Between two neighbouring finite halves the midpoint goes to the one with an even last bit,
//! and anything off the midpoint to the nearer one: subnormals, normals and the top binade.
TEST(Float16Test, MidpointsRoundToEven) {
  for (std::uint16_t bits = 0; bits < 0x7bffu; ++bits) {
    const double low = float_from_float16_bits(bits);
    const double high = float_from_float16_bits(static_cast<std::uint16_t>(bits + 1));
    const auto mid = static_cast<float>((low + high) / 2);  // exact: 12 significant bits
    const std::uint16_t even = (bits & 1u) ? static_cast<std::uint16_t>(bits + 1) : bits;
    ASSERT_EQ(float16_bits_from(mid), even) << std::hex << bits;
    ASSERT_EQ(float16_bits_from(std::nextafter(mid, 0.0f)), bits) << std::hex << bits;
    ASSERT_EQ(float16_bits_from(std::nextafter(mid, 1e9f)), bits + 1) << std::hex << bits;
    ASSERT_EQ(float16_bits_from(-mid), even | 0x8000u) << std::hex << bits;
  }
}

//! The edges: 65504 is the largest half and 65520 (its midpoint with 2^16) overflows to
//! infinity; 2^-25 (half the smallest subnormal) rounds to zero, anything above it up.
TEST(Float16Test, OverflowAndUnderflowEdges) {
  EXPECT_EQ(float16_bits_from(1.0f), 0x3c00u);
  EXPECT_EQ(float16_bits_from(65504.0f), 0x7bffu);
  EXPECT_EQ(float16_bits_from(std::nextafter(65520.0f, 0.0f)), 0x7bffu);
  EXPECT_EQ(float16_bits_from(65520.0f), 0x7c00u);
  EXPECT_EQ(float16_bits_from(1e30f), 0x7c00u);
  EXPECT_EQ(float16_bits_from(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(float16_bits_from(0x1p-25f), 0x0000u);
  EXPECT_EQ(float16_bits_from(std::nextafter(0x1p-25f, 1.0f)), 0x0001u);
  EXPECT_EQ(float16_bits_from(-0x1p-30f), 0x8000u);
  EXPECT_EQ(float16_bits_from(0x1p-14f), 0x0400u);  // the smallest normal
  EXPECT_EQ(float16_bits_from(std::numeric_limits<float>::quiet_NaN()), 0x7e00u);
}

//! Every bfloat16 that is not a NaN survives the trip through float; a NaN becomes 0x7FC0,
//! as c10::BFloat16's rounding makes it.
TEST(BFloat16Test, EveryPatternSurvivesTheTripThroughFloat) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float value = float_from_bfloat16_bits(bits);
    if (is_bfloat16_nan(bits)) {
      ASSERT_TRUE(std::isnan(value)) << std::hex << b;
      ASSERT_EQ(bfloat16_bits_from(value), 0x7fc0u) << std::hex << b;
    } else {
      ASSERT_EQ(bfloat16_bits_from(value), bits) << std::hex << b;
    }
  }
}

//! Between two neighbouring finite bfloat16 values the midpoint goes to the even one; the
//! largest finite value's midpoint with infinity overflows.
TEST(BFloat16Test, MidpointsRoundToEven) {
  for (std::uint32_t b = 0; b < 0x7f7fu; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float mid = float_from_bfloat16_bits(bits) / 2 +
                      float_from_bfloat16_bits(static_cast<std::uint16_t>(b + 1)) / 2;
    const std::uint16_t even = (b & 1u) ? static_cast<std::uint16_t>(b + 1) : bits;
    ASSERT_EQ(bfloat16_bits_from(mid), even) << std::hex << b;
    ASSERT_EQ(bfloat16_bits_from(std::nextafter(mid, 0.0f)), bits) << std::hex << b;
    ASSERT_EQ(bfloat16_bits_from(std::nextafter(mid, std::numeric_limits<float>::infinity())), b + 1) << std::hex << b;
  }
  EXPECT_EQ(bfloat16_bits_from(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(bfloat16_bits_from(1.0f), 0x3f80u);
}

//! Arithmetic computes in float and rounds once: 1 + 2^-8 is a tie in bfloat16 (to 1), and
//! 2049 is a tie in half (to 2048).
TEST(Float16ArithmeticTest, EachOperationRoundsOnce) {
  EXPECT_EQ((BFloat16(1.0f) + BFloat16(0x1p-8f)).bits, BFloat16(1.0f).bits);
  EXPECT_EQ((BFloat16(1.0f) + BFloat16(0x1p-7f)).bits, 0x3f81u);
  EXPECT_EQ((Float16(2048.0f) + Float16(1.0f)).bits, Float16(2048.0f).bits);
  EXPECT_EQ((Float16(2048.0f) + Float16(2.0f)).bits, Float16(2050.0f).bits);
  EXPECT_EQ((Float16(300.0f) * Float16(300.0f)).bits, 0x7c00u);  // 90000: infinity
  EXPECT_TRUE(Float16(-1.0f) < Float16(0.5f));
}

//! band, bor and bxor apply to integers; on a floating-point buffer the call is refused in
//! one line naming the operation, the operator and the type.
TEST(BitwiseReductionTest, FloatingPointBuffersAreRefused) {
  for (DataType dtype : {DataType::f32, DataType::f64, DataType::bf16, DataType::f16}) {
    for (ReduceOp op : {ReduceOp::band, ReduceOp::bor, ReduceOp::bxor}) {
      std::uint64_t storage[2] = {};
      CollectiveArgs args;
      args.op = OpKind::all_reduce;
      args.reduce_op = op;
      args.input = {storage, 1, dtype};
      args.output = {storage, 1, dtype};
      try {
        (void)checked_signature(args, 2, 0);
        ADD_FAILURE() << to_string(op) << " on " << to_string(dtype) << " was accepted";
      } catch (const UsageError& e) {
        const std::string want = fmt::format("all_reduce: {} applies to integer types, not {}",
                                             to_string(op), to_string(dtype));
        EXPECT_TRUE(std::string_view(e.what()).ends_with(want)) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ranklab::testing
