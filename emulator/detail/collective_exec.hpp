// The data movement of the fabric's native collectives, run once every member has arrived.
#pragma once

#include <cstddef>
#include <span>

#include "comm/collective_args.hpp"
#include "emulator/detail/operation.hpp"

namespace ranklab::detail {

/// Reductions of at most this many elements per member (a loss, a flag) skip the block
/// buffer and its set-up: the members' elements are combined directly, in the same order.
/// At 8 members that costs ~100 instructions an element, the block path ~500 and ~30 an
/// element: the two meet at ~5 elements (bench/RESULTS.md).
inline constexpr std::size_t kFewElements = 4;

/// Moves and reduces data between the members' buffers (`members[i]` is group rank i).
/// Reductions combine operands in ascending group rank, whatever the arrival order, so the
/// result is bitwise reproducible. Inputs may alias outputs.
void execute_collective(const CollectiveSignature& signature,
                        std::span<Operation* const> members);

}  // namespace ranklab::detail
