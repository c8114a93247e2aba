// Megatron's sequence parallelism (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models"), the `--tp-comm sp` variant of the TP regions
// of model/tensor_parallel.hpp. Between layers each TP rank holds only its shard of the
// sequence; the regions become
//   all-gather      forward: all_gather along the sequence before a layer;
//                   backward: reduce_scatter of the input gradient
//   reduce-scatter  forward: reduce_scatter of the partial outputs (instead of all_reduce);
//                   backward: all_gather of the output gradient
// b2 is added to the shard after the reduce-scatter. The layer then sees full rows: its
// weight gradients, and b2's (from the gathered output gradient), are the seed's; only the
// traffic differs, and the sums are the same sums in the same rank order, so the gradients
// equal the all_reduce variant's bit for bit with direct collectives. The gathered input is
// kept for backward (Megatron gathers it again to save memory).
//
// Rows are [samples·S, H] with position s of sample b at row b·S + s. TP rank t holds
// positions [t·S/TP, (t+1)·S/TP) of every sample, in (sample, position) order, so a shard of
// a micro-batch is a block of the shard of the whole batch. The collectives exchange
// rank-major blocks; to_rank_major / from_rank_major reorder rows around them.
#pragma once

#include <cstdint>

#include "collectives/communicator.hpp"
#include "model/dense_model.hpp"

namespace ranklab {

/// How rows [samples·seq, H] split along the sequence among `tp` ranks.
struct SequenceSplit {
  std::int64_t seq = 1;
  int tp = 1;

  /// Rows of rank t's shard of `rows` full rows (rows must be a multiple of seq).
  std::int64_t shard_rows(std::int64_t rows) const { return rows / tp; }
};

/// Rank t's sequence shard of `full` (no communication).
template <typename Scalar>
Matrix<Scalar> sequence_shard(ConstMatrixRef<Scalar> full, const SequenceSplit& split, int t);

/// all_gather along the sequence over `tp`: every rank's shard in, full rows out (`full` may
/// be `shard`). A group of one copies. Recorded at `where`, the caller's line (leave it out).
template <typename Scalar>
void all_gather_sequence(Communicator& tp, const SequenceSplit& split, ConstMatrixRef<Scalar> shard,
                         Matrix<Scalar>& full, const DeviceMemory* device = nullptr,
                         Communicator::Where where = Communicator::Where::current());

/// reduce_scatter along the sequence over `tp`, in place: each rank's partial sums of full
/// rows in, the rank's shard of the sums out. A group of one keeps its rows. Recorded at
/// `where`, the caller's line (leave it out).
template <typename Scalar>
void reduce_scatter_sequence(Communicator& tp, const SequenceSplit& split, Matrix<Scalar>& values,
                             const DeviceMemory* device = nullptr,
                             Communicator::Where where = Communicator::Where::current());

/// The two regions as StackHooks (reduce_output, reduce_input_grad, gather_input,
/// gather_output_grad); empty hooks when `tp` has one rank. `tp` must outlive the hooks.
/// Each collective is recorded at the line of dense_forward or dense_backward that calls
/// the hook.
template <typename Scalar>
StackHooks<Scalar> sequence_parallel_hooks(Communicator& tp, const SequenceSplit& split,
                                           const DeviceMemory* device = nullptr);

}  // namespace ranklab
