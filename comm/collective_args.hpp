// One call to a native collective: what a backend (the emulator's fabric, MPI) needs to
// match, check and execute it.
#pragma once

#include <cstring>
#include <string>
#include <type_traits>

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
  int root = kNoRank;
  std::size_t count = 0;

  /// Byte-wise: the fields fill the struct without padding, and two 8-byte compares cost a
  /// third of the fields' one by one (every member of every collective compares its
  /// signature with the first member's).
  friend bool operator==(const CollectiveSignature& a, const CollectiveSignature& b) {
    return std::memcmp(&a, &b, sizeof(CollectiveSignature)) == 0;
  }
};
static_assert(sizeof(CollectiveSignature) == 16 &&
                  std::has_unique_object_representations_v<CollectiveSignature>,
              "CollectiveSignature's operator== compares bytes: it must have no padding");

/// What a signature takes from `args` as they are (all but the count, which depends on the
/// operation's shape).
inline CollectiveSignature signature_fields(const CollectiveArgs& args) {
  const OpKind op = args.op;
  const bool reduces = takes_reduce_op(op);
  return {.op = op,
          .has_reduce_op = reduces,
          .reduce_op = reduces ? args.reduce_op : ReduceOp::sum,
          .dtype = op == OpKind::barrier ? DataType::u8 : args.input.dtype,
          .root = takes_root(op) ? args.root : kNoRank};
}

/// make_signature's checks and count, out of line (they format their messages).
CollectiveSignature checked_signature(const CollectiveArgs& args, int group_size, int group_rank);

/// The signature of `args` as posted by `group_rank` of a group of `group_size`; throws
/// UsageError when the buffer sizes do not fit the operation (e.g. all_gather output !=
/// size * input). Gather's output and scatter's input may be empty off the root, as in MPI.
inline CollectiveSignature make_signature(const CollectiveArgs& args, int group_size,
                                          int group_rank) {
  // An all_reduce whose buffers agree, inline: the commonest call, and a small one is bound
  // by this path (bench/RESULTS.md, issue 19 §2). Everything else out of line.
  if (args.op == OpKind::all_reduce && args.input.dtype == args.output.dtype &&
      args.input.count == args.output.count) [[likely]] {
    CollectiveSignature sig = signature_fields(args);
    sig.count = args.input.count;
    return sig;
  }
  return checked_signature(args, group_size, group_rank);
}

/// `all_reduce(sum, f32, count=8)`: a signature as reports print it.
std::string describe(const CollectiveSignature& signature);

}  // namespace ranklab
