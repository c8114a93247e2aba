// Megatron-style tensor parallelism (shared/seeds/000 §1 and §4.2), for the layer of
// model/layer.hpp: TP rank t holds rows [t·I/TP, (t+1)·I/TP) of W1 and b1, the same columns
// of W2, and all of b2 (shard_layer). Two regions connect the shards:
//   copy-to-TP      forward: identity;            backward: all_reduce(sum) of the input grad
//   reduce-from-TP  forward: all_reduce(sum);     backward: identity
// b2 is added after the reduction, so each shard's partial output carries none of it.
// The dense stack functions run the shards unchanged; these hooks add the communication.
#pragma once

#include "collectives/communicator.hpp"
#include "model/dense_model.hpp"

namespace ranklab {

/// Sums `values` over `group` in place: all_reduce(sum). A group of one rank has nothing
/// to add, and, as the reference's Gloo wrapper does, sends nothing. Recorded at `where`,
/// the caller's line (leave it out), not this helper's.
template <typename Scalar>
void all_reduce_sum(Communicator& group, Matrix<Scalar>& values,
                    const DeviceMemory* device = nullptr,
                    Communicator::Where where = Communicator::Where::current());

/// The copy-to-TP and reduce-from-TP regions over `tp` as StackHooks; empty hooks when
/// `tp` has one rank. `tp` must outlive the hooks. Each all_reduce is recorded at the line
/// of dense_forward or dense_backward that calls the hook.
template <typename Scalar>
StackHooks<Scalar> tensor_parallel_hooks(Communicator& tp, const DeviceMemory* device = nullptr);

}  // namespace ranklab
