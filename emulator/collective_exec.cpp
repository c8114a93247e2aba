// Native collectives as direct copies between the members' buffers. Reductions are done
// block by block: each block is combined in ascending group rank in a small buffer and
// then written to every output, so in-place calls need no scratch copy of the inputs and
// large buffers are processed in parallel by oneTBB with a fixed per-element order.
#include "emulator/detail/collective_exec.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <tbb/parallel_for.h>

#include "emulator/detail/copy_bytes.hpp"
#include "comm/parallel_ranges.hpp"
#include "comm/reduce_kernel.hpp"

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


}  // namespace

void execute_collective(const CollectiveSignature& sig,
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
      return for_blocks(c, elem, n, [&](std::size_t b, std::size_t e) {
        reduce_range(sig, ms, 0, b, e, [&](const std::byte* acc, std::size_t off, std::size_t len) {
          std::memcpy(output_of(*ms[root]) + off, acc, len);
        });
      });
    case OpKind::reduce_scatter:
      for (std::size_t i = 0; i < n; ++i) {
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

}  // namespace ranklab::detail
