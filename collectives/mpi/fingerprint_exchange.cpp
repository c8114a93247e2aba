#include "collectives/mpi/detail/fingerprint_exchange.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "collectives/mpi/detail/mpi_call.hpp"
#include "comm/call_site.hpp"
#include "comm/mismatch_table.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "comm/group.hpp"

namespace ranklab::mpi_detail {
namespace {

// A fingerprint as fixed-size bytes, for MPI_Allgather.
struct WireFingerprint {
  std::uint64_t count = 0;
  std::int32_t root = 0;
  std::uint8_t op = 0;
  std::uint8_t has_reduce_op = 0;
  std::uint8_t reduce_op = 0;
  std::uint8_t dtype = 0;
  std::uint8_t per_peer_counts = 0;
  std::array<char, 31> algorithm{};
};

WireFingerprint to_wire(const CollectiveFingerprint& f) {
  WireFingerprint w;
  w.count = f.signature.count;
  w.root = f.signature.root;
  w.op = static_cast<std::uint8_t>(f.signature.op);
  w.has_reduce_op = f.signature.has_reduce_op ? 1 : 0;
  w.reduce_op = static_cast<std::uint8_t>(f.signature.reduce_op);
  w.dtype = static_cast<std::uint8_t>(f.signature.dtype);
  w.per_peer_counts = f.per_peer_counts ? 1 : 0;
  const std::size_t n = std::min(f.algorithm.size(), w.algorithm.size() - 1);
  std::memcpy(w.algorithm.data(), f.algorithm.data(), n);
  return w;
}

CollectiveFingerprint from_wire(const WireFingerprint& w) {
  CollectiveFingerprint f;
  f.signature.count = w.count;
  f.signature.root = w.root;
  f.signature.op = static_cast<OpKind>(w.op);
  f.signature.has_reduce_op = w.has_reduce_op != 0;
  f.signature.reduce_op = static_cast<ReduceOp>(w.reduce_op);
  f.signature.dtype = static_cast<DataType>(w.dtype);
  f.per_peer_counts = w.per_peer_counts != 0;
  f.algorithm = std::string(w.algorithm.data());
  return f;
}

// A member's row in the mismatch table.
struct Posted {
  CollectiveFingerprint fingerprint;
  std::uint64_t rank_seq = 0;
  SourceSite site;  ///< unknown: the exchange carries fingerprints, not call sites
};

}  // namespace

void exchange_fingerprints(Runtime& runtime, const GroupState& group,
                           const CollectiveFingerprint& fingerprint, std::uint64_t sequence,
                           std::chrono::milliseconds timeout) {
  const WireFingerprint mine = to_wire(fingerprint);
  std::vector<WireFingerprint> all(group.ranks.size());
  const auto what = [&] {
    return fmt::format("rank {}: --check-collectives exchange of {} collective #{}",
                       runtime.world_rank(), group.name, sequence);
  };
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE,
                       group.internal, &request),
        what);
  int code = MPI_SUCCESS;
  runtime.wait_until(
      [&] {
        int flag = 0;
        code = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
        return code != MPI_SUCCESS || flag != 0;
      },
      what, timeout);
  check(code, what);
  std::vector<std::optional<Posted>> rows(all.size());
  bool agree = true;
  const CollectiveFingerprint first = from_wire(all.front());
  for (std::size_t i = 0; i < all.size(); ++i) {
    rows[i] = Posted{from_wire(all[i]), sequence};
    agree = agree && rows[i]->fingerprint == first;
  }
  if (agree) return;
  const Group named(0, group.name, group.ranks);
  int culprit = -1;
  std::string sentence;
  std::string table = ranklab::detail::mismatch_table(
      named, sequence, rows, [](const Posted& p) -> const CollectiveFingerprint& {
        return p.fingerprint;
      }, culprit, sentence);
  throw CollectiveMismatchError(std::move(table), std::move(sentence), group.rank == 0);
}

}  // namespace ranklab::mpi_detail
