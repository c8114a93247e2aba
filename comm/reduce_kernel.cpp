#include "comm/reduce_kernel.hpp"

#include <algorithm>
#include <cstdint>

namespace ranklab {
namespace {

// dst[i] = fn(dst[i], src[i]) for each operand in turn.
template <typename T, typename Fn>
void apply(void* dst, std::span<const void* const> srcs, std::size_t count, Fn fn) {
  T* d = static_cast<T*>(dst);
  if (count == 1) {  // a scalar (a loss, a flag): no vector loop to set up per operand
    for (const void* src : srcs) d[0] = fn(d[0], *static_cast<const T*>(src));
    return;
  }
  for (const void* src : srcs) {
    const T* s = static_cast<const T*>(src);
    for (std::size_t i = 0; i < count; ++i) d[i] = fn(d[i], s[i]);
  }
}

template <typename T>
void reduce_typed(void* dst, std::span<const void* const> srcs, std::size_t count,
                  ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return apply<T>(dst, srcs, count, [](T a, T b) { return static_cast<T>(a + b); });
    case ReduceOp::prod:
      return apply<T>(dst, srcs, count, [](T a, T b) { return static_cast<T>(a * b); });
    case ReduceOp::min:
      return apply<T>(dst, srcs, count, [](T a, T b) { return std::min(a, b); });
    case ReduceOp::max:
      return apply<T>(dst, srcs, count, [](T a, T b) { return std::max(a, b); });
  }
}

template <typename T>
void divide_typed(void* dst, std::size_t count, int by) {
  T* d = static_cast<T*>(dst);
  const T divisor = static_cast<T>(by);
  for (std::size_t i = 0; i < count; ++i) d[i] = static_cast<T>(d[i] / divisor);
}

}  // namespace

void reduce_into(void* dst, const void* src, std::size_t count, DataType dtype, ReduceOp op) {
  reduce_into(dst, std::span<const void* const>(&src, 1), count, dtype, op);
}

void reduce_into(void* dst, std::span<const void* const> srcs, std::size_t count,
                 DataType dtype, ReduceOp op) {
  switch (dtype) {
    case DataType::u8: return reduce_typed<std::uint8_t>(dst, srcs, count, op);
    case DataType::i32: return reduce_typed<std::int32_t>(dst, srcs, count, op);
    case DataType::i64: return reduce_typed<std::int64_t>(dst, srcs, count, op);
    case DataType::f32: return reduce_typed<float>(dst, srcs, count, op);
    case DataType::f64: return reduce_typed<double>(dst, srcs, count, op);
  }
}

void finish_reduction(void* dst, std::size_t count, DataType dtype, ReduceOp op,
                      int contributors) {
  if (op != ReduceOp::avg) return;
  switch (dtype) {
    case DataType::u8: return divide_typed<std::uint8_t>(dst, count, contributors);
    case DataType::i32: return divide_typed<std::int32_t>(dst, count, contributors);
    case DataType::i64: return divide_typed<std::int64_t>(dst, count, contributors);
    case DataType::f32: return divide_typed<float>(dst, count, contributors);
    case DataType::f64: return divide_typed<double>(dst, count, contributors);
  }
}

}  // namespace ranklab
