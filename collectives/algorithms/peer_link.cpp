#include "collectives/algorithms/peer_link.hpp"

#include <algorithm>
#include <cstring>

#include "comm/errors.hpp"
#include "comm/parallel_ranges.hpp"
#include "comm/reduce_kernel.hpp"

namespace ranklab {

PeerLink::PeerLink(Backend& backend, int tag, DataType dtype, ReduceOp op, std::string what)
    : backend_(backend),
      tag_(tag),
      dtype_(dtype),
      op_(op),
      what_(std::move(what)),
      rank_(backend.rank()),
      size_(backend.size()),
      elem_(size_of(dtype)) {}

void PeerLink::send(const std::byte* data, std::size_t count, int dst) {
  backend_.send(ConstBuffer{data, count, dtype_}, dst, tag_);
}

void PeerLink::recv(std::byte* data, std::size_t count, int src) {
  check_received(backend_.recv(MutableBuffer{data, count, dtype_}, src, tag_), count, src);
}

void PeerLink::exchange(const std::byte* out, std::size_t out_count, int dst, std::byte* in,
                        std::size_t in_count, int src) {
  check_received(backend_.exchange(ConstBuffer{out, out_count, dtype_}, dst,
                                   MutableBuffer{in, in_count, dtype_}, src, tag_),
                 in_count, src);
}

void PeerLink::check_received(const RecvStatus& status, std::size_t expected, int src) const {
  const std::size_t got = status.count;
  if (got == expected) return;
  throw MismatchError(
      fmt::format("{}: rank {} expected {} x {} from rank {} (tag {:#x}), but rank {} sent {}: the "
                  "members' calls disagree",
                  what_, backend_.global_rank(rank_), expected, to_string(dtype_),
                  backend_.global_rank(src), tag_, backend_.global_rank(src), got));
}

void PeerLink::reduce(std::byte* acc, const std::byte* operand, std::size_t count) const {
  for_ranges(count, elem_, [&](std::size_t first, std::size_t n) {
    reduce_into(acc + first * elem_, operand + first * elem_, n, dtype_, op_);
  });
}

void PeerLink::reduce_after(std::byte* acc, std::byte* operand, std::size_t count) const {
  for_ranges(count, elem_, [&](std::size_t first, std::size_t n) {
    reduce_into(operand + first * elem_, acc + first * elem_, n, dtype_, op_);
    std::memcpy(acc + first * elem_, operand + first * elem_, n * elem_);
  });
}

void PeerLink::finish(std::byte* data, std::size_t count) const {
  finish_reduction(data, count, dtype_, op_, size_);
}

}  // namespace ranklab
