// The element-wise operators of the reductions, defined once for every kernel that applies
// them: the block kernels (reduce_kernel.cpp) and the emulator's path for a few elements
// (emulator/collective_exec.cpp) must combine the same operands into the same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "comm/float16.hpp"
#include "traces/types.hpp"

namespace ranklab::reduce_ops {

/// Integer sums and products wrap modulo 2^bits, as NCCL's and Gloo's do on the machine: in
/// the unsigned type, since a signed overflow is undefined behaviour (UBSan stops at it) and
/// the compiler may assume it away. The same instructions, so the same bits as before.
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <typename T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using WrapType = typename Wrapping<T>::type;

template <typename T>
struct Sum {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  }
};
template <typename T>
struct Prod {
  static T apply(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  }
};
template <typename T>
struct Min {
  static T apply(T a, T b) { return std::min(a, b); }
};
template <typename T>
struct Max {
  static T apply(T a, T b) { return std::max(a, b); }
};

template <typename T>
struct BitAnd {
  static T apply(T a, T b) { return static_cast<T>(a & b); }
};
template <typename T>
struct BitOr {
  static T apply(T a, T b) { return static_cast<T>(a | b); }
};
template <typename T>
struct BitXor {
  static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

/// avg's last step: a sum over `contributors` operands divided by their number (integer
/// division for integer types).
template <typename T>
T average(T sum, int contributors) {
  return static_cast<T>(sum / static_cast<T>(contributors));
}

/// Calls visit.template operator()<T>() with the element type of `dtype`.
template <typename Visit>
void with_type(DataType dtype, Visit&& visit) {
  switch (dtype) {
    case DataType::u8: return visit.template operator()<std::uint8_t>();
    case DataType::i32: return visit.template operator()<std::int32_t>();
    case DataType::i64: return visit.template operator()<std::int64_t>();
    case DataType::f32: return visit.template operator()<float>();
    case DataType::f64: return visit.template operator()<double>();
    case DataType::bf16: return visit.template operator()<BFloat16>();
    case DataType::f16: return visit.template operator()<Float16>();
  }
}

/// Calls visit.template operator()<T, Op>() with the element type of `dtype` and the
/// combining operator of `op` (avg combines as sum; its caller divides at the end). A bitwise
/// op on a floating-point type is refused before any kernel runs (checked_signature); here
/// it would be a logic_error.
template <typename Visit>
void with_type_and_op(DataType dtype, ReduceOp op, Visit&& visit) {
  with_type(dtype, [&]<typename T>() {
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return visit.template operator()<T, Sum<T>>();
      case ReduceOp::prod: return visit.template operator()<T, Prod<T>>();
      case ReduceOp::min: return visit.template operator()<T, Min<T>>();
      case ReduceOp::max: return visit.template operator()<T, Max<T>>();
      case ReduceOp::band:
      case ReduceOp::bor:
      case ReduceOp::bxor:
        if constexpr (std::is_integral_v<T>) {
          if (op == ReduceOp::band) return visit.template operator()<T, BitAnd<T>>();
          if (op == ReduceOp::bor) return visit.template operator()<T, BitOr<T>>();
          return visit.template operator()<T, BitXor<T>>();
        } else {
          throw std::logic_error("ranklab: a bitwise reduction reached a floating-point kernel");
        }
    }
  });
}

}  // namespace ranklab::reduce_ops
