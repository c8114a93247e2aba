// The data movement of the fabric's native collectives, run once every member has arrived.
#pragma once

#include <span>

#include "comm/collective_args.hpp"
#include "emulator/detail/operation.hpp"

namespace ranklab::detail {

/// Moves and reduces data between the members' buffers (`members[i]` is group rank i).
/// Reductions combine operands in ascending group rank, whatever the arrival order, so the
/// result is bitwise reproducible. Inputs may alias outputs.
void execute_collective(const CollectiveSignature& signature,
                        std::span<Operation* const> members);

}  // namespace ranklab::detail
