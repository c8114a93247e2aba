// One call to a native collective: what a backend (the emulator's fabric, MPI) needs to
// match, check and execute it.
#pragma once

#include <string>

#include "comm/buffer.hpp"
#include "traces/event.hpp"

namespace ranklab {

/// The arguments of a collective, as a backend sees them. `count` in the signature is the
/// per-rank unit: the buffer for all_reduce/broadcast/reduce; the input for all_gather and
/// gather; the output for reduce_scatter and scatter; one peer's chunk for all_to_all.
struct CollectiveArgs {
  OpKind op = OpKind::barrier;
  ReduceOp reduce_op = ReduceOp::sum;  ///< all_reduce, reduce, reduce_scatter
  int root = kNoRank;                  ///< group rank; broadcast, reduce, gather, scatter
  ConstBuffer input;                   ///< may alias output (in place)
  MutableBuffer output;
};

/// What every member of a collective must agree on (its fingerprint, less the group and
/// sequence number, which the backend adds).
struct CollectiveSignature {
  OpKind op = OpKind::barrier;
  bool has_reduce_op = false;
  ReduceOp reduce_op = ReduceOp::sum;
  DataType dtype = DataType::u8;
  std::size_t count = 0;
  int root = kNoRank;

  friend bool operator==(const CollectiveSignature&, const CollectiveSignature&) = default;
};

/// The signature of `args` as posted by `group_rank` of a group of `group_size`; throws
/// UsageError when the buffer sizes do not fit the operation (e.g. all_gather output !=
/// size * input). Gather's output and scatter's input may be empty off the root, as in MPI.
CollectiveSignature make_signature(const CollectiveArgs& args, int group_size, int group_rank);

/// `all_reduce(sum, f32, count=8)`: a signature as reports print it.
std::string describe(const CollectiveSignature& signature);

}  // namespace ranklab
