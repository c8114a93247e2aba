// The input hashes of blocking collectives, taken together when the last member arrives.
// Private to emulator/.
//
// A blocking call's input stays alive, unchanged, until its call returns, so its hash can
// wait for the others' and all of a collective's contributions be hashed at once
// (traces/hash.hpp: interleaved, ~1.5x XXH64's speed for two 16 KiB buffers). A
// non-blocking call's caller may drop its buffer before the others arrive, so its input is
// hashed when it posts. The trace needs a hash of every call, pending ones of an aborted run
// included, whose events are written after their ranks unwound: the run's abort hashes every
// call still waiting (Fabric::hash_pending_collectives), and a call that disagrees with the
// others hashes its own before it throws (Fabric::post_call).
#pragma once

#include <span>

#include "emulator/detail/operation.hpp"

namespace ranklab::detail {

/// Hashes the input of every member whose hash waits (Operation::hash_pending), several at
/// once. Before the collective runs: an in-place collective overwrites its input.
void hash_pending_inputs(std::span<Operation* const> members);

/// One operation's input hash, if it waits.
void hash_pending_input(Operation& op);

}  // namespace ranklab::detail
