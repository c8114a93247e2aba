#include "comm/reduce_kernel.hpp"

#include "comm/reduce_ops.hpp"

namespace ranklab {
namespace {

// dst[i] = Op::apply(dst[i], src[i]) for each operand in turn.
template <typename T, typename Op>
void apply(void* dst, std::span<const void* const> srcs, std::size_t count) {
  T* d = static_cast<T*>(dst);
  if (count == 1) {  // a scalar (a loss, a flag): no vector loop to set up per operand
    for (const void* src : srcs) d[0] = Op::apply(d[0], *static_cast<const T*>(src));
    return;
  }
  for (const void* src : srcs) {
    const T* s = static_cast<const T*>(src);
    for (std::size_t i = 0; i < count; ++i) d[i] = Op::apply(d[i], s[i]);
  }
}

}  // namespace

void reduce_into(void* dst, const void* src, std::size_t count, DataType dtype, ReduceOp op) {
  reduce_into(dst, std::span<const void* const>(&src, 1), count, dtype, op);
}

void reduce_into(void* dst, std::span<const void* const> srcs, std::size_t count,
                 DataType dtype, ReduceOp op) {
  reduce_ops::with_type_and_op(dtype, op, [&]<typename T, typename Op>() {
    apply<T, Op>(dst, srcs, count);
  });
}

void finish_reduction(void* dst, std::size_t count, DataType dtype, ReduceOp op,
                      int contributors) {
  if (op != ReduceOp::avg) return;
  reduce_ops::with_type(dtype, [&]<typename T>() {
    T* d = static_cast<T*>(dst);
    for (std::size_t i = 0; i < count; ++i) d[i] = reduce_ops::average(d[i], contributors);
  });
}

}  // namespace ranklab
