#include "tests/mpi/collective_cases.hpp"

#include <cstring>

#include <fmt/format.h>

#include "collectives/algorithms/algorithm.hpp"

namespace ranklab::testing {
namespace {

constexpr OpKind kCollectives[] = {OpKind::barrier,    OpKind::all_reduce,     OpKind::broadcast,
                                   OpKind::reduce,     OpKind::all_gather,     OpKind::reduce_scatter,
                                   OpKind::gather,     OpKind::scatter,        OpKind::all_to_all};
constexpr Algorithm kAlgorithms[] = {Algorithm::direct, Algorithm::ring, Algorithm::tree,
                                     Algorithm::recursive_doubling, Algorithm::halving_doubling,
                                     Algorithm::dissemination, Algorithm::pairwise};
constexpr DataType kTypes[] = {DataType::u8,  DataType::i32,  DataType::i64, DataType::f32,
                               DataType::f64, DataType::bf16, DataType::f16};
constexpr ReduceOp kReduceOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                   ReduceOp::avg, ReduceOp::band, ReduceOp::bor, ReduceOp::bxor};

// Element i of rank r's input: values whose float sums round differently in different orders
// (k/9 is not a binary fraction), small enough that products of 8 stay finite (eighths for
// the 16-bit floats: their products of 8 round but stay within half's range).
template <typename T>
T input_value(int rank, std::size_t i) {
  const long k = static_cast<long>((static_cast<std::size_t>(rank) * 131 + i * 71) % 41) - 20;
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>) {
    return static_cast<T>(static_cast<float>(k) / 8);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(k) / T(9);
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return static_cast<T>(k + 20);
  } else {
    return static_cast<T>(k);
  }
}

template <typename F>
void with_type(DataType dtype, F f) {
  switch (dtype) {
    case DataType::u8: return f(std::uint8_t{});
    case DataType::i32: return f(std::int32_t{});
    case DataType::i64: return f(std::int64_t{});
    case DataType::f32: return f(float{});
    case DataType::f64: return f(double{});
    case DataType::bf16: return f(BFloat16{});
    case DataType::f16: return f(Float16{});
  }
}

// `elements` of rank `rank`'s input as bytes of `dtype`, starting at element `first`.
std::vector<std::byte> make_input(DataType dtype, int rank, std::size_t elements,
                                  std::size_t first = 0) {
  std::vector<std::byte> bytes(elements * size_of(dtype));
  with_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < elements; ++i) {
      const T v = input_value<T>(rank, first + i);
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
  });
  return bytes;
}

MutableBuffer view(std::vector<std::byte>& bytes, DataType dtype) {
  return {bytes.data(), bytes.size() / size_of(dtype), dtype};
}

void append(std::vector<std::byte>& out, const std::vector<std::byte>& bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace

std::string CollectiveCase::name() const {
  std::string text = fmt::format("{} via {} {} count {}", to_string(op), to_string(algorithm),
                                 to_string(dtype), count);
  if (takes_reduce_op(op)) text += fmt::format(" {}", to_string(reduce_op));
  if (takes_root(op)) text += fmt::format(" root {}", root);
  if (nonblocking) text += " (i-form)";
  return text;
}

std::vector<CollectiveCase> collective_cases(int world) {
  std::vector<CollectiveCase> cases;
  for (OpKind op : kCollectives) {
    for (Algorithm algorithm : kAlgorithms) {
      if (!implements(algorithm, op)) continue;
      for (DataType dtype : kTypes) {
        for (ReduceOp rop : kReduceOps) {
          if (!takes_reduce_op(op) && rop != ReduceOp::sum) continue;
          if (is_bitwise(rop) && !is_integer(dtype)) continue;
          for (std::size_t count : {std::size_t{1}, std::size_t{13}}) {
            if (op == OpKind::barrier && (count != 1 || dtype != DataType::u8)) continue;
            // Roots vary with the case, so that non-zero roots are covered.
            const int root =
                takes_root(op) ? static_cast<int>((count + static_cast<std::size_t>(dtype)) %
                                                  static_cast<std::size_t>(world))
                               : 0;
            cases.push_back({op, algorithm, dtype, rop, count, root, false});
            if (algorithm == Algorithm::direct) {
              cases.push_back({op, algorithm, dtype, rop, count, root, true});
            }
          }
        }
      }
    }
  }
  // Large buffers: the reductions split over oneTBB's threads (above 1 MiB).
  for (Algorithm algorithm : {Algorithm::direct, Algorithm::ring, Algorithm::halving_doubling}) {
    cases.push_back({OpKind::all_reduce, algorithm, DataType::f32, ReduceOp::sum, 300007, 0, false});
  }
  cases.push_back({OpKind::reduce_scatter, Algorithm::direct, DataType::f64, ReduceOp::avg, 70001, 0, false});
  cases.push_back({OpKind::reduce, Algorithm::direct, DataType::f64, ReduceOp::sum, 150001, world - 1, false});
  return cases;
}

std::vector<std::byte> run_case(Communicator& comm, const CollectiveCase& c) {
  const int p = comm.size();
  const int me = comm.rank();
  const auto n = static_cast<std::size_t>(p);
  const DataType t = c.dtype;
  std::vector<std::byte> in;
  std::vector<std::byte> out;
  const auto finish = [&](Work work) {
    if (c.nonblocking) work.wait();
  };
  switch (c.op) {
    case OpKind::barrier:
      c.nonblocking ? comm.ibarrier({c.algorithm}).wait() : comm.barrier({c.algorithm});
      return {};
    case OpKind::all_reduce:
      out = make_input(t, me, c.count);
      if (c.nonblocking) finish(comm.iall_reduce(view(out, t), {c.reduce_op, c.algorithm}));
      else comm.all_reduce(view(out, t), {c.reduce_op, c.algorithm});
      return out;
    case OpKind::broadcast:
      out = make_input(t, me, c.count);
      if (c.nonblocking) finish(comm.ibroadcast(view(out, t), {c.root, c.algorithm}));
      else comm.broadcast(view(out, t), {c.root, c.algorithm});
      return out;
    case OpKind::reduce:
      out = make_input(t, me, c.count);
      if (c.nonblocking) finish(comm.ireduce(view(out, t), {c.reduce_op, c.root, c.algorithm}));
      else comm.reduce(view(out, t), {c.reduce_op, c.root, c.algorithm});
      return out;
    case OpKind::all_gather:
      in = make_input(t, me, c.count);
      out.assign(n * in.size(), std::byte{0xee});
      if (c.nonblocking) finish(comm.iall_gather(view(in, t), view(out, t), {c.algorithm}));
      else comm.all_gather(view(in, t), view(out, t), {c.algorithm});
      return out;
    case OpKind::reduce_scatter:
      in = make_input(t, me, c.count * n);
      out.assign(c.count * size_of(t), std::byte{0xee});
      if (c.nonblocking) {
        finish(comm.ireduce_scatter(view(in, t), view(out, t), {c.reduce_op, c.algorithm}));
      } else {
        comm.reduce_scatter(view(in, t), view(out, t), {c.reduce_op, c.algorithm});
      }
      return out;
    case OpKind::gather:
      in = make_input(t, me, c.count);
      if (me == c.root) out.assign(n * in.size(), std::byte{0xee});
      if (c.nonblocking) finish(comm.igather(view(in, t), view(out, t), {c.root, c.algorithm}));
      else comm.gather(view(in, t), view(out, t), {c.root, c.algorithm});
      return out;
    case OpKind::scatter:
      if (me == c.root) in = make_input(t, me, c.count * n);
      out.assign(c.count * size_of(t), std::byte{0xee});
      if (c.nonblocking) finish(comm.iscatter(view(in, t), view(out, t), {c.root, c.algorithm}));
      else comm.scatter(view(in, t), view(out, t), {c.root, c.algorithm});
      return out;
    case OpKind::all_to_all:
      in = make_input(t, me, c.count * n);
      out.assign(in.size(), std::byte{0xee});
      if (c.nonblocking) finish(comm.iall_to_all(view(in, t), view(out, t), {c.algorithm}));
      else comm.all_to_all(view(in, t), view(out, t), {c.algorithm});
      return out;
    case OpKind::send:
    case OpKind::recv:
      break;
  }
  return {};
}

std::vector<std::byte> run_overlapping(Communicator& comm) {
  const int me = comm.rank();
  std::vector<std::vector<std::byte>> buffers;
  for (int k = 0; k < 4; ++k) buffers.push_back(make_input(DataType::f64, me + k, 1000 + 17 * k));
  std::vector<Work> works;
  for (int k = 0; k < 3; ++k) {
    works.push_back(comm.iall_reduce(view(buffers[static_cast<std::size_t>(k)], DataType::f64),
                                     {ReduceOp::sum, Algorithm::direct}));
  }
  // A point-to-point collective while the direct ones are in flight.
  comm.all_reduce(view(buffers[3], DataType::f64), {ReduceOp::sum, Algorithm::ring});
  // Waited for in a rank-dependent order; even ranks poll with test() and yield.
  for (int k = 0; k < 3; ++k) {
    Work& work = works[static_cast<std::size_t>((k + me) % 3)];
    if (me % 2 == 0) {
      while (!work.test()) comm.yield();
    } else {
      work.wait();
    }
  }
  // all_to_all_v: rank i sends i + j + 1 elements to rank j.
  const auto p = static_cast<std::size_t>(comm.size());
  std::vector<std::size_t> send_counts(p), recv_counts(p);
  std::size_t sends = 0, recvs = 0;
  for (std::size_t j = 0; j < p; ++j) {
    send_counts[j] = static_cast<std::size_t>(me) + j + 1;
    recv_counts[j] = j + static_cast<std::size_t>(me) + 1;
    sends += send_counts[j];
    recvs += recv_counts[j];
  }
  std::vector<std::byte> in = make_input(DataType::i32, me, sends);
  std::vector<std::byte> out(recvs * 4, std::byte{0xee});
  comm.all_to_all_v(view(in, DataType::i32), send_counts, view(out, DataType::i32), recv_counts);
  std::vector<std::byte> all;
  for (const auto& b : buffers) append(all, b);
  append(all, out);
  return all;
}

std::vector<std::byte> run_groups(Communicator& comm) {
  const int me = comm.rank();
  std::vector<std::byte> all;
  // Even and odd ranks, each ordered by descending rank.
  Communicator half = comm.split(me % 2, -me);
  for (Algorithm algorithm : {Algorithm::direct, Algorithm::ring, Algorithm::recursive_doubling}) {
    std::vector<std::byte> data = make_input(DataType::f32, me, 29);
    half.all_reduce(view(data, DataType::f32), {ReduceOp::sum, algorithm});
    append(all, data);
  }
  // A group over every rank in reverse order, made twice: the same group, one sequence.
  std::vector<int> reversed;
  for (int r = comm.size() - 1; r >= 0; --r) reversed.push_back(r);
  Communicator back = comm.new_group(reversed, "back");
  Communicator again = comm.new_group(reversed, "back");
  std::vector<std::byte> data = make_input(DataType::f64, me, 33);
  back.reduce(view(data, DataType::f64), {ReduceOp::sum, 0, Algorithm::tree});
  again.all_reduce(view(data, DataType::f64), {ReduceOp::max, Algorithm::direct});
  append(all, data);
  // A group of the first two ranks: the others are not members (rank -1).
  const std::vector<int> pair = {0, comm.size() > 1 ? 1 : 0};
  Communicator first = comm.new_group(std::span(pair.data(), comm.size() > 1 ? 2 : 1), "pair");
  const std::byte member{static_cast<unsigned char>(first.is_member() ? 1 : 0)};
  all.push_back(member);
  if (first.is_member()) {
    std::vector<std::byte> bytes = make_input(DataType::i64, me, 5);
    std::vector<std::byte> gathered(bytes.size() * static_cast<std::size_t>(first.size()));
    first.all_gather(view(bytes, DataType::i64), view(gathered, DataType::i64));
    append(all, gathered);
  }
  return all;
}

}  // namespace ranklab::testing
