#include "collectives/mpi/detail/fingerprint_exchange.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "collectives/mpi/detail/gather_strings.hpp"
#include "collectives/mpi/detail/mpi_call.hpp"
#include "comm/call_site.hpp"
#include "comm/mismatch_table.hpp"
#include "collectives/mpi/mpi_errors.hpp"
#include "comm/group.hpp"
#include "traces/event_text.hpp"

namespace ranklab::mpi_detail {
namespace {

// A fingerprint as fixed-size bytes, for MPI_Allgather.
struct WireFingerprint {
  std::uint64_t rank_seq = 0;  ///< the member's op # for the call
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

// A member's row in the mismatch table; its site points into `file` and `function`, so a
// row is never moved once its site is set.
struct Posted {
  CollectiveFingerprint fingerprint;
  std::uint64_t rank_seq = 0;
  std::string file;
  std::string function;
  SourceSite site;
};

// A call site as bytes: FILE \0 LINE \0 FUNCTION \0 LABEL, each empty when unknown; the
// compiler's own spelling, so the table shortens it as the emulator's does.
std::string encode_site(const SourceSite& site) {
  std::string out = site.file ? site.file : "";
  out += '\0';
  out += std::to_string(site.line);
  out += '\0';
  out += site.function ? site.function : "";
  out += '\0';
  if (site.label) out += *site.label;
  return out;
}

void decode_site(const std::string& bytes, Posted& row) {
  std::vector<std::string> fields;
  std::size_t from = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t to = std::min(bytes.find('\0', from), bytes.size());
    fields.push_back(bytes.substr(from, to - from));
    from = std::min(to + 1, bytes.size());
  }
  const std::string label = bytes.substr(from);
  row.file = fields[0];
  row.function = fields[2];
  row.site.file = row.file.empty() ? nullptr : row.file.c_str();
  row.site.line = static_cast<std::uint32_t>(std::strtoul(fields[1].c_str(), nullptr, 10));
  row.site.function = row.function.empty() ? nullptr : row.function.c_str();
  row.site.label = label.empty() ? nullptr : intern_label(label);
}

}  // namespace

void exchange_fingerprints(Runtime& runtime, const GroupState& group,
                           const CollectiveFingerprint& fingerprint, std::uint64_t sequence,
                           std::uint64_t rank_seq, const SourceSite& site,
                           std::chrono::milliseconds timeout) {
  WireFingerprint mine = to_wire(fingerprint);
  mine.rank_seq = rank_seq;
  std::vector<WireFingerprint> all(group.ranks.size());
  // The call being checked, with its site: what a timeout names.
  const auto call = [&] {
    return fmt::format("the --check-collectives exchange of {} collective #{}, op #{}{}",
                       group.name, sequence, rank_seq, describe_site(to_call_site(site)));
  };
  const auto what = [&] { return fmt::format("rank {}: {}", runtime.world_rank(), call()); };
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
      call, timeout);
  check(code, what);
  std::vector<std::optional<Posted>> rows(all.size());
  bool agree = true;
  const CollectiveFingerprint first = from_wire(all.front());
  for (std::size_t i = 0; i < all.size(); ++i) {
    rows[i] = Posted{from_wire(all[i]), all[i].rank_seq};
    agree = agree && rows[i]->fingerprint == first;
  }
  if (agree) return;
  // Every member found the same disagreement, so all of them get here: their call sites
  // travel only now, keeping the agreeing path to one small all_gather.
  const std::vector<std::string> sites = all_gather_strings(group.internal, encode_site(site));
  for (std::size_t i = 0; i < rows.size(); ++i) decode_site(sites[i], *rows[i]);
  const Group named(0, group.name, group.ranks);
  std::vector<std::optional<ranklab::detail::MemberCall>> calls;
  calls.reserve(rows.size());
  for (const auto& row : rows) {
    calls.push_back(ranklab::detail::MemberCall{row->fingerprint, row->rank_seq, row->site});
  }
  ranklab::detail::MismatchVerdict verdict = ranklab::detail::judge_mismatch(named, sequence, calls);
  throw CollectiveMismatchError(std::move(verdict.table), std::move(verdict.sentence),
                                std::move(verdict.summary), group.rank == 0,
                                std::move(verdict.blamed));
}

}  // namespace ranklab::mpi_detail
