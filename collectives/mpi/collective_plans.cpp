// The plans of the native collectives (detail/collective_plan.hpp). Data movement is MPI's
// own collective on bytes, which is exact; reductions are either ranklab's, in ascending
// group rank (direct: the emulator's order, collective_exec.cpp), or MPI's (library).
#include <cstring>

#include <fmt/format.h>

#include "collectives/algorithms/algorithm.hpp"  // overlaps
#include "collectives/algorithms/chunks.hpp"
#include "collectives/mpi/detail/collective_plan.hpp"
#include "collectives/mpi/detail/mpi_call.hpp"
#include "collectives/mpi/detail/runtime.hpp"
#include "comm/parallel_ranges.hpp"
#include "comm/reduce_kernel.hpp"

namespace ranklab::mpi_detail {
namespace {

std::byte* out_of(const CollectiveArgs& args) { return static_cast<std::byte*>(args.output.data); }
const std::byte* in_of(const CollectiveArgs& args) {
  return static_cast<const std::byte*>(args.input.data);
}

// What a plan needs to know about its call.
struct Call {
  const CollectiveArgs& args;
  const CollectiveSignature& sig;
  MPI_Comm comm;    // first stages
  MPI_Comm second;  // second stages
  int size;
  int rank;
  std::size_t elem;
  std::size_t chunk_bytes;  // sig.count elements
  std::string what;
};

int count_of(std::size_t bytes, const Call& call) { return mpi_count(bytes, call.what); }

// `input` as a stage may read it while `output` is written: itself unless the two overlap,
// then a copy in the plan's scratch.
const std::byte* stable_input(CollectivePlan& plan, const Call& call, std::size_t bytes) {
  if (!overlaps(call.args.input.data, bytes, call.args.output.data, call.args.output.bytes())) {
    return in_of(call.args);
  }
  plan.scratch.assign(in_of(call.args), in_of(call.args) + bytes);
  return plan.scratch.data();
}

// ---- Data movement: the same for both algorithms. ----

void plan_barrier(CollectivePlan& plan, const Call& call) {
  plan.first = [comm = call.comm](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Barrier(comm) : MPI_Ibarrier(comm, request);
  };
}

void plan_broadcast(CollectivePlan& plan, const Call& call) {
  // The root's input reaches every output, the root's included (the emulator's broadcast).
  if (call.rank == call.sig.root && call.args.input.data != call.args.output.data) {
    std::memmove(out_of(call.args), in_of(call.args), call.chunk_bytes);
  }
  plan.first = [comm = call.comm, data = out_of(call.args), n = count_of(call.chunk_bytes, call),
                root = call.sig.root](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Bcast(data, n, MPI_BYTE, root, comm)
                    : MPI_Ibcast(data, n, MPI_BYTE, root, comm, request);
  };
}

void plan_all_gather(CollectivePlan& plan, const Call& call) {
  const std::byte* own = out_of(call.args) + static_cast<std::size_t>(call.rank) * call.chunk_bytes;
  const void* send = in_of(call.args) == own ? MPI_IN_PLACE
                                             : stable_input(plan, call, call.chunk_bytes);
  plan.first = [comm = call.comm, send, out = out_of(call.args),
                n = count_of(call.chunk_bytes, call)](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Allgather(send, n, MPI_BYTE, out, n, MPI_BYTE, comm)
                    : MPI_Iallgather(send, n, MPI_BYTE, out, n, MPI_BYTE, comm, request);
  };
}

void plan_gather(CollectivePlan& plan, const Call& call) {
  const bool root = call.rank == call.sig.root;
  const void* send = in_of(call.args);
  if (root) {
    const std::byte* own = out_of(call.args) + static_cast<std::size_t>(call.rank) * call.chunk_bytes;
    send = in_of(call.args) == own ? MPI_IN_PLACE : stable_input(plan, call, call.chunk_bytes);
  }
  plan.first = [comm = call.comm, send, out = out_of(call.args),
                n = count_of(call.chunk_bytes, call),
                r = call.sig.root](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Gather(send, n, MPI_BYTE, out, n, MPI_BYTE, r, comm)
                    : MPI_Igather(send, n, MPI_BYTE, out, n, MPI_BYTE, r, comm, request);
  };
}

void plan_scatter(CollectivePlan& plan, const Call& call) {
  const bool root = call.rank == call.sig.root;
  void* recv = out_of(call.args);
  const void* send = in_of(call.args);
  if (root) {
    const std::byte* own = in_of(call.args) + static_cast<std::size_t>(call.rank) * call.chunk_bytes;
    const std::size_t all = call.chunk_bytes * static_cast<std::size_t>(call.size);
    if (out_of(call.args) == own) {
      recv = MPI_IN_PLACE;
    } else {
      send = stable_input(plan, call, all);
    }
  }
  plan.first = [comm = call.comm, send, recv, n = count_of(call.chunk_bytes, call),
                r = call.sig.root](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Scatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, r, comm)
                    : MPI_Iscatter(send, n, MPI_BYTE, recv, n, MPI_BYTE, r, comm, request);
  };
}

void plan_all_to_all(CollectivePlan& plan, const Call& call) {
  // The communicator refuses overlapping buffers for direct all_to_all.
  plan.first = [comm = call.comm, in = in_of(call.args), out = out_of(call.args),
                n = count_of(call.chunk_bytes, call)](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Alltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, comm)
                    : MPI_Ialltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, comm, request);
  };
}

// ---- Reductions in ascending group rank (direct). ----

// acc = x0 OP x1 OP ... OP x(p-1), left to right, then avg's division: the operands lie one
// after the other in `operands`, `count` elements each; the result replaces the first.
void reduce_in_rank_order(std::byte* operands, std::size_t count, int members, DataType dtype,
                          ReduceOp op) {
  const std::size_t elem = size_of(dtype);
  for_ranges(count, elem, [&](std::size_t first, std::size_t n) {
    std::byte* acc = operands + first * elem;
    for (int r = 1; r < members; ++r) {
      reduce_into(acc, acc + static_cast<std::size_t>(r) * count * elem, n, dtype, op);
    }
    finish_reduction(acc, n, dtype, op, members);
  });
}

// First stage of all_reduce and reduce: member j receives everyone's block j (even_block),
// operands in rank order in the scratch, and reduces them there. `counts`/`displs` are the
// blocks (what each member receives from this one, and the second stage's layout);
// `counts2`/`displs2` the first stage's receive side.
void plan_block_reduction(CollectivePlan& plan, const Call& call) {
  const auto p = static_cast<std::size_t>(call.size);
  const Block mine = even_block(call.sig.count, call.size, call.rank);
  plan.scratch.resize(p * mine.count * call.elem);
  plan.counts.resize(p);
  plan.displs.resize(p);
  plan.counts2.resize(p);
  plan.displs2.resize(p);
  for (int j = 0; j < call.size; ++j) {
    const Block b = even_block(call.sig.count, call.size, j);
    const auto jj = static_cast<std::size_t>(j);
    plan.counts[jj] = count_of(b.count * call.elem, call);   // what j receives from me
    plan.displs[jj] = count_of(b.offset * call.elem, call);
    plan.counts2[jj] = count_of(mine.count * call.elem, call);  // what I receive from j
    plan.displs2[jj] = count_of(jj * mine.count * call.elem, call);
  }
  plan.first = [&plan, comm = call.comm, in = in_of(call.args)](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Alltoallv(in, plan.counts.data(), plan.displs.data(), MPI_BYTE,
                                    plan.scratch.data(), plan.counts2.data(), plan.displs2.data(),
                                    MPI_BYTE, comm)
                    : MPI_Ialltoallv(in, plan.counts.data(), plan.displs.data(), MPI_BYTE,
                                     plan.scratch.data(), plan.counts2.data(), plan.displs2.data(),
                                     MPI_BYTE, comm, request);
  };
  const bool writes_output = call.sig.op == OpKind::all_reduce || call.rank == call.sig.root;
  plan.local = [&plan, n = mine.count, members = call.size, dtype = call.sig.dtype,
                op = call.sig.reduce_op, writes_output,
                out = out_of(call.args) + mine.offset * call.elem, elem = call.elem] {
    reduce_in_rank_order(plan.scratch.data(), n, members, dtype, op);
    if (writes_output && n > 0) std::memcpy(out, plan.scratch.data(), n * elem);
  };
}

// Up to this many bytes in all (count x members), all_reduce and reduce gather every
// member's whole buffer and reduce it locally: one MPI call instead of two, the same order.
constexpr std::size_t kGatherWholeBytes = 16 * 1024;

bool gathers_whole(const Call& call) {
  return call.chunk_bytes * static_cast<std::size_t>(call.size) <= kGatherWholeBytes;
}

// Small all_reduce and reduce: every operand to every member (or the root), reduced there.
void plan_whole_reduction(CollectivePlan& plan, const Call& call) {
  plan.scratch.resize(static_cast<std::size_t>(call.size) * call.chunk_bytes);
  const bool all = call.sig.op == OpKind::all_reduce;
  const bool here = all || call.rank == call.sig.root;
  plan.first = [&plan, comm = call.comm, in = in_of(call.args), all,
                n = count_of(call.chunk_bytes, call),
                r = call.sig.root](bool blocking, MPI_Request* request) {
    if (all) {
      return blocking
                 ? MPI_Allgather(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, comm)
                 : MPI_Iallgather(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, comm,
                                  request);
    }
    return blocking ? MPI_Gather(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, r, comm)
                    : MPI_Igather(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, r, comm,
                                  request);
  };
  if (!here) return;
  plan.local = [&plan, n = call.sig.count, members = call.size, dtype = call.sig.dtype,
                op = call.sig.reduce_op, out = out_of(call.args), bytes = call.chunk_bytes] {
    reduce_in_rank_order(plan.scratch.data(), n, members, dtype, op);
    if (bytes > 0) std::memcpy(out, plan.scratch.data(), bytes);
  };
}

void plan_all_reduce_direct(CollectivePlan& plan, const Call& call) {
  if (gathers_whole(call)) return plan_whole_reduction(plan, call);
  plan_block_reduction(plan, call);
  // Every block, reduced by its owner, to everyone (the owner's is in place already).
  plan.second = [&plan, comm = call.second, out = out_of(call.args)](bool blocking,
                                                                    MPI_Request* request) {
    return blocking ? MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, out, plan.counts.data(),
                                     plan.displs.data(), MPI_BYTE, comm)
                    : MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, out, plan.counts.data(),
                                      plan.displs.data(), MPI_BYTE, comm, request);
  };
}

void plan_reduce_direct(CollectivePlan& plan, const Call& call) {
  if (gathers_whole(call)) return plan_whole_reduction(plan, call);
  plan_block_reduction(plan, call);
  const bool root = call.rank == call.sig.root;
  const auto mine = static_cast<std::size_t>(call.rank);
  plan.second = [&plan, comm = call.second, out = out_of(call.args), root, mine,
                 r = call.sig.root](bool blocking, MPI_Request* request) {
    // Off the root the reduced block is in the scratch; the root's own is in place.
    const void* send = root ? MPI_IN_PLACE : plan.scratch.data();
    const int n = plan.counts[mine];
    return blocking ? MPI_Gatherv(send, n, MPI_BYTE, out, plan.counts.data(),
                                  plan.displs.data(), MPI_BYTE, r, comm)
                    : MPI_Igatherv(send, n, MPI_BYTE, out, plan.counts.data(),
                                   plan.displs.data(), MPI_BYTE, r, comm, request);
  };
}

void plan_reduce_scatter_direct(CollectivePlan& plan, const Call& call) {
  // Member i receives everyone's chunk i and reduces it: no second stage.
  const auto p = static_cast<std::size_t>(call.size);
  plan.scratch.resize(p * call.chunk_bytes);
  plan.first = [&plan, comm = call.comm, in = in_of(call.args),
                n = count_of(call.chunk_bytes, call)](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Alltoall(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, comm)
                    : MPI_Ialltoall(in, n, MPI_BYTE, plan.scratch.data(), n, MPI_BYTE, comm,
                                    request);
  };
  plan.local = [&plan, n = call.sig.count, members = call.size, dtype = call.sig.dtype,
                op = call.sig.reduce_op, out = out_of(call.args), bytes = call.chunk_bytes] {
    reduce_in_rank_order(plan.scratch.data(), n, members, dtype, op);
    if (bytes > 0) std::memcpy(out, plan.scratch.data(), bytes);
  };
}

// ---- Reductions by MPI (library). ----

MPI_Datatype type_of(const Call& call) { return mpi_type(call.sig.dtype); }
int elements_of(const Call& call) { return count_of(call.sig.count, call); }

// avg: MPI sums, the division follows.
std::function<void()> finish_avg(const Call& call, bool here) {
  if (call.sig.reduce_op != ReduceOp::avg || !here) return {};
  return [out = call.args.output.data, n = call.sig.count, dtype = call.sig.dtype,
          members = call.size] { finish_reduction(out, n, dtype, ReduceOp::avg, members); };
}

void plan_all_reduce_library(CollectivePlan& plan, const Call& call) {
  if (call.args.input.data != call.args.output.data) {
    std::memmove(out_of(call.args), in_of(call.args), call.chunk_bytes);
  }
  plan.first = [comm = call.comm, out = out_of(call.args), n = elements_of(call),
                type = type_of(call), op = mpi_op(call.sig.reduce_op, call.sig.dtype)](bool blocking,
                                                                       MPI_Request* request) {
    return blocking ? MPI_Allreduce(MPI_IN_PLACE, out, n, type, op, comm)
                    : MPI_Iallreduce(MPI_IN_PLACE, out, n, type, op, comm, request);
  };
  plan.local = finish_avg(call, true);
}

void plan_reduce_library(CollectivePlan& plan, const Call& call) {
  const bool root = call.rank == call.sig.root;
  if (root && call.args.input.data != call.args.output.data) {
    std::memmove(out_of(call.args), in_of(call.args), call.chunk_bytes);
  }
  const void* send = root ? MPI_IN_PLACE : call.args.input.data;
  plan.first = [comm = call.comm, send, out = out_of(call.args), n = elements_of(call),
                type = type_of(call), op = mpi_op(call.sig.reduce_op, call.sig.dtype),
                r = call.sig.root](bool blocking, MPI_Request* request) {
    return blocking ? MPI_Reduce(send, out, n, type, op, r, comm)
                    : MPI_Ireduce(send, out, n, type, op, r, comm, request);
  };
  plan.local = finish_avg(call, root);
}

void plan_reduce_scatter_library(CollectivePlan& plan, const Call& call) {
  const void* send =
      stable_input(plan, call, call.chunk_bytes * static_cast<std::size_t>(call.size));
  plan.first = [comm = call.comm, send, out = out_of(call.args), n = elements_of(call),
                type = type_of(call), op = mpi_op(call.sig.reduce_op, call.sig.dtype)](bool blocking,
                                                                       MPI_Request* request) {
    return blocking ? MPI_Reduce_scatter_block(send, out, n, type, op, comm)
                    : MPI_Ireduce_scatter_block(send, out, n, type, op, comm, request);
  };
  plan.local = finish_avg(call, true);
}

}  // namespace

std::unique_ptr<CollectivePlan> make_plan(const GroupState& group, const CollectiveArgs& args,
                                          const CollectiveSignature& signature, bool library) {
  auto plan = std::make_unique<CollectivePlan>();
  plan->what = fmt::format("{} via {} in {}", to_string(args.op), library ? "mpi" : "direct",
                           group.name);
  const Call call{.args = args,
                  .sig = signature,
                  .comm = group.internal,
                  .second = group.second,
                  .size = static_cast<int>(group.ranks.size()),
                  .rank = group.rank,
                  .elem = size_of(signature.dtype),
                  .chunk_bytes = signature.count * size_of(signature.dtype),
                  .what = plan->what};
  switch (args.op) {
    case OpKind::barrier: plan_barrier(*plan, call); break;
    case OpKind::broadcast: plan_broadcast(*plan, call); break;
    case OpKind::all_gather: plan_all_gather(*plan, call); break;
    case OpKind::gather: plan_gather(*plan, call); break;
    case OpKind::scatter: plan_scatter(*plan, call); break;
    case OpKind::all_to_all: plan_all_to_all(*plan, call); break;
    case OpKind::all_reduce:
      library ? plan_all_reduce_library(*plan, call) : plan_all_reduce_direct(*plan, call);
      break;
    case OpKind::reduce:
      library ? plan_reduce_library(*plan, call) : plan_reduce_direct(*plan, call);
      break;
    case OpKind::reduce_scatter:
      library ? plan_reduce_scatter_library(*plan, call) : plan_reduce_scatter_direct(*plan, call);
      break;
    case OpKind::send:
    case OpKind::recv:
      break;
  }
  return plan;
}

}  // namespace ranklab::mpi_detail
