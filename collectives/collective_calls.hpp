// What each Communicator collective asks of its funnel: the CollectiveArgs of one call, from
// its buffers and options. The i-form and the plain form of a collective share them. Inline,
// as the plain forms are (communicator.hpp): a blocking call's arguments are built once, in
// the caller's frame, and handed down by reference (issue 19 §2).
#pragma once

#include "collectives/options.hpp"
#include "comm/buffer.hpp"
#include "comm/collective_args.hpp"

namespace ranklab::collective_calls {

inline CollectiveArgs barrier() { return {.op = OpKind::barrier}; }
inline CollectiveArgs all_reduce(MutableBuffer data, const AllReduceOptions& options) {
  return {.op = OpKind::all_reduce, .reduce_op = options.op, .input = data, .output = data};
}
inline CollectiveArgs broadcast(MutableBuffer data, const BroadcastOptions& options) {
  return {.op = OpKind::broadcast, .root = options.root, .input = data, .output = data};
}
inline CollectiveArgs reduce(MutableBuffer data, const ReduceOptions& options) {
  return {.op = OpKind::reduce,
          .reduce_op = options.op,
          .root = options.root,
          .input = data,
          .output = data};
}
inline CollectiveArgs all_gather(ConstBuffer input, MutableBuffer output) {
  return {.op = OpKind::all_gather, .input = input, .output = output};
}
inline CollectiveArgs reduce_scatter(ConstBuffer input, MutableBuffer output,
                                     const ReduceScatterOptions& options) {
  return {.op = OpKind::reduce_scatter, .reduce_op = options.op, .input = input, .output = output};
}
inline CollectiveArgs gather(ConstBuffer input, MutableBuffer output,
                             const GatherOptions& options) {
  return {.op = OpKind::gather, .root = options.root, .input = input, .output = output};
}
inline CollectiveArgs scatter(ConstBuffer input, MutableBuffer output,
                              const ScatterOptions& options) {
  return {.op = OpKind::scatter, .root = options.root, .input = input, .output = output};
}
inline CollectiveArgs all_to_all(ConstBuffer input, MutableBuffer output) {
  return {.op = OpKind::all_to_all, .input = input, .output = output};
}

}  // namespace ranklab::collective_calls
