#include "emulator/detail/payload_hashes.hpp"

#include <array>

#include "traces/hash.hpp"

namespace ranklab::detail {
namespace {

/// Members hashed in one call of payload_hashes: a few of its batches of four, few enough
/// that the arrays below cost little to set up for a collective of two (a million-rank
/// group goes in rounds).
constexpr std::size_t kRound = 4 * kHashBatch;

std::span<const std::byte> coll_input_of(const Operation& op) {
  return {static_cast<const std::byte*>(op.coll_input), op.coll_input_bytes};
}

}  // namespace

void hash_pending_inputs(std::span<Operation* const> members) {
  std::array<std::span<const std::byte>, kRound> inputs;
  std::array<std::uint64_t, kRound> hashes;
  std::array<Operation*, kRound> owners;
  std::size_t n = 0;
  const auto flush = [&] {
    payload_hashes(std::span(inputs).first(n), std::span(hashes).first(n));
    for (std::size_t i = 0; i < n; ++i) {
      owners[i]->hash = hashes[i];
      owners[i]->hash_pending = false;
    }
    n = 0;
  };
  for (Operation* op : members) {
    if (op == nullptr || !op->hash_pending) continue;
    inputs[n] = coll_input_of(*op);
    owners[n] = op;
    if (++n == kRound) flush();
  }
  if (n > 0) flush();
}

void hash_pending_input(Operation& op) {
  if (!op.hash_pending) return;
  op.hash = payload_hash(coll_input_of(op));
  op.hash_pending = false;
}

}  // namespace ranklab::detail
