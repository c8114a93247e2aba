// Element-wise reduction kernels behind a type-erased entry (gloo's ReductionFunction,
// fmt's vformat idea): the collective code is compiled once, the templates only pick a
// kernel. The order of operands is fixed by the caller, so results are reproducible.
#pragma once

#include <cstddef>

#include "traces/types.hpp"

namespace ranklab {

/// dst[i] = dst[i] OP src[i] for `count` elements of `dtype`. For avg this sums; call
/// finish_reduction afterwards. `dst` and `src` must not overlap partially.
void reduce_into(void* dst, const void* src, std::size_t count, DataType dtype, ReduceOp op);

/// Completes a reduction over `contributors` operands: divides by it for avg (integer
/// division for integer types), does nothing for the other operators.
void finish_reduction(void* dst, std::size_t count, DataType dtype, ReduceOp op,
                      int contributors);

}  // namespace ranklab
