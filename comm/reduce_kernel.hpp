// Element-wise reduction kernels behind a type-erased entry (gloo's ReductionFunction,
// fmt's vformat idea): the collective code is compiled once, the templates only pick a
// kernel. The order of operands is fixed by the caller, so results are reproducible.
#pragma once

#include <cstddef>
#include <span>

#include "traces/types.hpp"

namespace ranklab {

/// dst[i] = dst[i] OP src[i] for `count` elements of `dtype`. For avg this sums; call
/// finish_reduction afterwards. `dst` and `src` must not overlap partially.
void reduce_into(void* dst, const void* src, std::size_t count, DataType dtype, ReduceOp op);

/// The same for several operands, in their order: dst OP srcs[0] OP srcs[1] ... element by
/// element, so the result is the one of calling the above once per operand. One dispatch
/// on the type and operator for all of them: an 8-rank all_reduce of one float made seven
/// calls for seven additions, each dearer than its addition (bench/RESULTS.md, issue 19 §2).
void reduce_into(void* dst, std::span<const void* const> srcs, std::size_t count,
                 DataType dtype, ReduceOp op);

/// Completes a reduction over `contributors` operands: divides by it for avg (integer
/// division for integer types), does nothing for the other operators.
void finish_reduction(void* dst, std::size_t count, DataType dtype, ReduceOp op,
                      int contributors);

}  // namespace ranklab
