// Native collectives as direct copies between the members' buffers. Reductions are done
// block by block: each block is combined in ascending group rank in a small buffer and
// then written to every output, so in-place calls need no scratch copy of the inputs and
// large buffers are processed in parallel by oneTBB with a fixed per-element order. A
// reduction of a few elements (a loss, a flag) skips the blocks: reduce_few.
#include "emulator/detail/collective_exec.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <tbb/parallel_for.h>

#include "emulator/detail/copy_bytes.hpp"
#include "comm/parallel_ranges.hpp"
#include "comm/reduce_kernel.hpp"
#include "comm/reduce_ops.hpp"

namespace ranklab::detail {
namespace {

constexpr std::size_t kBlockBytes = 32 * 1024;  // fits L1/L2 with the operands streaming
constexpr std::size_t kOperandsPerCall = 64;     // members per call into reduce_into

const std::byte* input_of(const Operation& op) {
  return static_cast<const std::byte*>(op.coll_input);
}
std::byte* output_of(const Operation& op) { return static_cast<std::byte*>(op.coll_output); }

// Calls body(begin, end) over [0, count) in blocks, in parallel when the data is large.
template <typename Body>
void for_blocks(std::size_t count, std::size_t elem, std::size_t members, Body body) {
  const std::size_t block = std::max<std::size_t>(1, kBlockBytes / elem);
  const std::size_t blocks = (count + block - 1) / block;
  auto run = [&](std::size_t b) { body(b * block, std::min(count, (b + 1) * block)); };
  if (count * elem * members < kParallelBytes) {
    for (std::size_t b = 0; b < blocks; ++b) run(b);
  } else {
    tbb::parallel_for(std::size_t{0}, blocks, run);
  }
}

// Reduces element range [begin, end) of chunk `chunk` of every member's input (ascending
// group rank) and hands the result to `emit`.
template <typename Emit>
void reduce_range(const CollectiveSignature& sig, std::span<Operation* const> ms,
                  std::size_t chunk_offset, std::size_t begin, std::size_t end, Emit emit) {
  alignas(64) std::array<std::byte, kBlockBytes> acc;
  const std::size_t elem = size_of(sig.dtype);
  const std::size_t n = end - begin;
  const std::size_t offset = (chunk_offset + begin) * elem;
  std::memcpy(acc.data(), input_of(*ms[0]) + offset, n * elem);
  // The other members' blocks, kOperandsPerCall of them per call into the kernel.
  std::array<const void*, kOperandsPerCall> operands;
  for (std::size_t r = 1; r < ms.size();) {
    const std::size_t k = std::min(operands.size(), ms.size() - r);
    for (std::size_t i = 0; i < k; ++i) operands[i] = input_of(*ms[r + i]) + offset;
    reduce_into(acc.data(), std::span<const void* const>(operands.data(), k), n, sig.dtype,
                sig.reduce_op);
    r += k;
  }
  finish_reduction(acc.data(), n, sig.dtype, sig.reduce_op, static_cast<int>(ms.size()));
  emit(acc.data(), begin * elem, n * elem);
}

// reduce_range for a chunk of at most kFewElements elements of type T, combined by Op:
// elements [first, first + count) of every member's input, reduced in the same order of
// operations as the blocks (per element: the members' operands in ascending group rank,
// then avg's division, so the bits are the same), written to elements [0, count) of each
// target's output. No block buffer, operand array, type dispatch per call nor memcpy per
// output: for an 8-rank all_reduce of one float those were ~500 instructions around 7
// additions. Every input is read before any output is written, as the block path does:
// inputs may alias outputs. Element by element through memcpy, so buffers need no
// alignment and no loop is a plain copy that the compiler would turn into a memcpy call.
template <typename T, typename Op>
[[gnu::noinline]] void reduce_few_as(std::span<Operation* const> ms, std::size_t first,
                                     std::size_t count, bool average,
                                     std::span<Operation* const> targets) {
  std::array<T, kFewElements> acc;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = (first + i) * sizeof(T);
    T value;
    std::memcpy(&value, input_of(*ms[0]) + at, sizeof(T));
    for (std::size_t r = 1; r < ms.size(); ++r) {
      T operand;
      std::memcpy(&operand, input_of(*ms[r]) + at, sizeof(T));
      value = Op::apply(value, operand);
    }
    if (average) value = reduce_ops::average(value, static_cast<int>(ms.size()));
    acc[i] = value;
  }
  for (std::size_t i = 0; i < count; ++i) {
    for (const auto& t : targets) std::memcpy(output_of(*t) + i * sizeof(T), &acc[i], sizeof(T));
  }
}

void reduce_few(const CollectiveSignature& sig, std::span<Operation* const> ms,
                std::size_t first, std::size_t count, std::span<Operation* const> targets) {
  const bool average = sig.reduce_op == ReduceOp::avg;
  reduce_ops::with_type_and_op(sig.dtype, sig.reduce_op, [&]<typename T, typename Op>() {
    reduce_few_as<T, Op>(ms, first, count, average, targets);
  });
}

// execute_collective's cases but a small all_reduce.
[[gnu::noinline]] void execute_other(const CollectiveSignature& sig,
                                     std::span<Operation* const> ms) {
  const std::size_t n = ms.size();
  const std::size_t elem = size_of(sig.dtype);
  const std::size_t c = sig.count;
  const std::size_t chunk = c * elem;
  const auto root = static_cast<std::size_t>(sig.root);
  switch (sig.op) {
    case OpKind::barrier:
      return;
    case OpKind::all_reduce:
      return for_blocks(c, elem, n, [&](std::size_t b, std::size_t e) {
        reduce_range(sig, ms, 0, b, e, [&](const std::byte* acc, std::size_t off, std::size_t len) {
          for (const auto& m : ms) std::memcpy(output_of(*m) + off, acc, len);
        });
      });
    case OpKind::reduce:
      if (c <= kFewElements) return reduce_few(sig, ms, 0, c, ms.subspan(root, 1));
      return for_blocks(c, elem, n, [&](std::size_t b, std::size_t e) {
        reduce_range(sig, ms, 0, b, e, [&](const std::byte* acc, std::size_t off, std::size_t len) {
          std::memcpy(output_of(*ms[root]) + off, acc, len);
        });
      });
    case OpKind::reduce_scatter:
      for (std::size_t i = 0; i < n; ++i) {
        if (c <= kFewElements) {
          reduce_few(sig, ms, i * c, c, ms.subspan(i, 1));
          continue;
        }
        for_blocks(c, elem, n, [&](std::size_t b, std::size_t e) {
          reduce_range(sig, ms, i * c, b, e,
                       [&](const std::byte* acc, std::size_t off, std::size_t len) {
                         std::memcpy(output_of(*ms[i]) + off, acc, len);
                       });
        });
      }
      return;
    case OpKind::broadcast:
      for (const auto& m : ms) copy_bytes(output_of(*m), input_of(*ms[root]), chunk);
      return;
    case OpKind::all_gather:
      // Own chunk last: an in-place input may live inside the output being filled.
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          if (j != i) copy_bytes(output_of(*ms[i]) + j * chunk, input_of(*ms[j]), chunk);
        }
        copy_bytes(output_of(*ms[i]) + i * chunk, input_of(*ms[i]), chunk);
      }
      return;
    case OpKind::gather:
      for (std::size_t j = 0; j < n; ++j) {
        copy_bytes(output_of(*ms[root]) + j * chunk, input_of(*ms[j]), chunk);
      }
      return;
    case OpKind::scatter:
      for (std::size_t i = 0; i < n; ++i) {
        copy_bytes(output_of(*ms[i]), input_of(*ms[root]) + i * chunk, chunk);
      }
      return;
    case OpKind::all_to_all:
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          copy_bytes(output_of(*ms[i]) + j * chunk, input_of(*ms[j]) + i * chunk, chunk);
        }
      }
      return;
    case OpKind::send:
    case OpKind::recv:
      return;
  }
}

}  // namespace

void execute_collective(const CollectiveSignature& sig, std::span<Operation* const> ms) {
  // The small all_reduce (a loss, a flag) without the other cases' set-up.
  if (sig.op == OpKind::all_reduce && sig.count <= kFewElements) {
    return reduce_few(sig, ms, 0, sig.count, ms);
  }
  execute_other(sig, ms);
}

}  // namespace ranklab::detail
