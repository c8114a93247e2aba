// The SimGrid TI importer (traces/detail/simgrid_ti_importer.hpp): the table of TI actions
// and their handlers, the collectives and v-collectives re-issued into the builder.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>

#include "traces/detail/simgrid_ti_importer.hpp"
#include "traces/quote_input.hpp"
#include "traces/text.hpp"

namespace ranklab::detail::ti {

void Importer::collective(int rank, OpKind op, std::uint64_t n, std::int64_t type, int root) {
  const ElementType element = smpi_type(type);
  const std::uint64_t seq =
      builder_->icollective(rank, op, element.dtype, in_elements(n, type, element), 0, root);
  posted(rank, seq);
  if (nonblocking_) {
    ranks_[static_cast<std::size_t>(rank)].open_collectives.push_back(seq);
  } else {
    closed(rank, seq);
  }
}

bool Importer::block_reduce_scatter(const std::vector<std::string_view>& w) const {
  const auto p = static_cast<std::size_t>(builder_->world_size());
  if (w.size() >= p + 3 || w.size() < 4) return false;
  return std::all_of(w.begin() + 2, w.end() - 1, [](std::string_view v) { return v == "0"; });
}

Importer::Counts Importer::others(const std::vector<std::uint64_t>& counts, int self) {
  Counts out(counts.begin(), counts.end());
  out[static_cast<std::size_t>(self)] = std::nullopt;
  return out;
}

Importer::Counts Importer::only(int peer, std::uint64_t n) const {
  Counts out(static_cast<std::size_t>(builder_->world_size()));
  out[static_cast<std::size_t>(peer)] = n;
  return out;
}

void Importer::exchange(int rank, const Counts& to, std::int64_t send_type, const Counts& from,
                        std::int64_t recv_type) {
  if (!v_group_) {
    std::vector<int> all(static_cast<std::size_t>(builder_->world_size()));
    std::iota(all.begin(), all.end(), 0);
    v_group_ = builder_->add_group("vcollectives", std::move(all));
  }
  std::vector<std::uint64_t> posts;
  const auto post = [&](bool send, int peer, std::uint64_t n, std::int64_t type) {
    const ElementType element = smpi_type(type);
    const std::uint64_t elements = in_elements(n, type, element);
    const std::uint64_t seq =
        send ? builder_->isend(rank, peer, element.dtype, elements, 0, *v_group_)
             : builder_->irecv(rank, peer, element.dtype, elements, 0, *v_group_);
    posted(rank, seq);
    ranks_[static_cast<std::size_t>(rank)].posted_as[seq] = {true, element.dtype, elements, type, n};
    posts.push_back(seq);
  };
  for (std::size_t j = 0; j < to.size(); ++j) {
    if (to[j]) post(true, static_cast<int>(j), *to[j], send_type);
  }
  for (std::size_t j = 0; j < from.size(); ++j) {
    if (from[j]) post(false, static_cast<int>(j), *from[j], recv_type);
  }
  for (const std::uint64_t seq : posts) closed(rank, seq);
}

void Importer::action(const Words& w) {
  const int rank = static_cast<int>(*parse_whole<std::int64_t>(w[0]));
  ++state(rank).actions;
  std::string name(w[1]);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // ibarrier, ibcast, iallreduce, ...: the collective, left open until a wait.
  nonblocking_ = is_nonblocking_collective(name);
  if (nonblocking_) name.erase(0, 1);
  if (const std::string_view why = refused_action(name); !why.empty()) {
    fail(fmt::format("{}: {}", name, why));
  }
  const Action* action = find_action(name);
  if (action == nullptr) fail(fmt::format("unknown or unsupported action {}", quote_input(w[1])));
  if (action->refuses != nullptr) {
    if (const std::string_view why = (this->*action->refuses)(w); !why.empty()) {
      fail(fmt::format("{}: {}", name, why));
    }
  }
  const Arity& arity = action->arity;
  if (!arity.usage.empty()) need(w, arity.fixed + arity.per_rank * world(), arity.usage);
  (this->*action->handle)(rank, w);
}

void Importer::init(int rank, const Words& w) {
  state(rank).default_type = w.size() > 2 ? 0 : 6;  // SMPI: MPI_DOUBLE with an argument
}

void Importer::finalize(int rank, const Words&) { unfinished_requests(rank); }

void Importer::test(int rank, const Words& w) {
  RankState& testing = state(rank);
  if (w.size() >= 5) {
    if (const auto it = named_request(rank, w); it != testing.open.end()) {
      testing.tested[it->seq] = true;
      testing.last_test.clear();
      return;
    }
    // A nonblocking collective's request (SMPI writes its internal tag, -779 for a barrier):
    // the tests of one loop name the same, and the first of them the oldest collective no
    // test completed.
    if (!testing.open_collectives.empty()) {
      const std::string named = fmt::format("{} {} {}", w[2], w[3], w[4]);
      if (named != testing.last_test) {
        testing.tested[*oldest_untested_collective(rank)] = true;
        testing.last_test = named;
      }
      return;
    }
  }
  ++testing.tests;
}

void Importer::nothing(int, const Words&) {}

void Importer::compute(int rank, const Words& w) {
  builder_->compute(rank, {.flops = amount(w[2], "FLOPs")});
}

void Importer::sleep(int rank, const Words& w) {
  builder_->compute(rank, {.seconds = amount(w[2], "seconds")});
}

void Importer::barrier(int rank, const Words&) { collective(rank, OpKind::barrier, 0, 6); }

void Importer::wait_any(int rank, const Words&) {
  RankState& waiting = state(rank);
  ++waiting.tests;
  waiting.wait_any_at = waiting.actions;
}

void Importer::bcast(int rank, const Words& w) {
  const int root = w.size() > 3 ? rank_arg(w[3], "root") : 0;
  collective(rank, OpKind::broadcast, count(w[2], "count"), type_arg(w, 4, rank), root);
}

void Importer::reduce(int rank, const Words& w) {
  const int root = w.size() > 4 ? rank_arg(w[4], "root") : 0;
  collective(rank, OpKind::reduce, count(w[2], "count"), type_arg(w, 5, rank), root);
  builder_->compute(rank, {.flops = amount(w[3], "COMP")});
}

void Importer::allreduce(int rank, const Words& w) {
  collective(rank, OpKind::all_reduce, count(w[2], "count"), type_arg(w, 4, rank));
  builder_->compute(rank, {.flops = amount(w[3], "COMP")});
}

template <OpKind kOp>
void Importer::one_count(int rank, const Words& w) {
  collective(rank, kOp, count(w[2], "count"), type_arg(w, 4, rank));
}

std::string_view Importer::refuse_block_reduce_scatter(const Words& w) const {
  if (!block_reduce_scatter(w)) return {};
  return "MPI_Reduce_scatter_block, which SMPI 3.32 records without its count "
         "(`reducescatter 0 0 DTYPE`): TI carries too little to replay it";
}

void Importer::reduce_scatter(int rank, const Words& w) {
  const std::size_t p = world();
  const std::vector<std::uint64_t> counts = counts_at(w, 2);
  const std::int64_t type = type_arg(w, 3 + p, rank);
  if (std::adjacent_find(counts.begin(), counts.end(), std::not_equal_to<>()) == counts.end()) {
    collective(rank, OpKind::reduce_scatter, counts[0], type);
  } else {
    // Unequal blocks: the reduction of them all at rank 0, then rank 0 hands each its own.
    std::uint64_t total = 0;
    for (const std::uint64_t c : counts) total += c;
    if (total > kMaxTraceCount) fail("reducescatter: the counts add up to more than 2^48");
    collective(rank, OpKind::reduce, total, type, 0);
    exchange(rank, rank == 0 ? others(counts, 0) : Counts(p), type,
             rank == 0 ? Counts(p) : only(0, counts[static_cast<std::size_t>(rank)]), type);
  }
  builder_->compute(rank, {.flops = amount(w[2 + p], "COMP")});
}

void Importer::scan(int rank, const Words& w) {
  const std::size_t p = world();
  const std::uint64_t n = count(w[2], "count");
  const std::int64_t type = type_arg(w, 4, rank);
  exchange(rank, rank + 1 < static_cast<int>(p) ? only(rank + 1, n) : Counts(p), type,
           rank > 0 ? only(rank - 1, n) : Counts(p), type);
  builder_->compute(rank, {.flops = amount(w[3], "COMP")});
}

void Importer::gatherv(int rank, const Words& w) {
  const std::size_t p = world();
  const std::uint64_t n = count(w[2], "count");
  const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
  const std::int64_t send_type = type_arg(w, 4 + p, rank);
  const std::int64_t recv_type = type_arg(w, 5 + p, rank);
  exchange(rank, rank == root ? Counts(p) : only(root, n), send_type,
           rank == root ? others(counts_at(w, 3), root) : Counts(p), recv_type);
}

void Importer::scatterv(int rank, const Words& w) {
  const std::size_t p = world();
  const std::uint64_t n = count(w[2 + p], "count");
  const int root = w.size() > 3 + p ? rank_arg(w[3 + p], "root") : 0;
  const std::int64_t send_type = type_arg(w, 4 + p, rank);
  const std::int64_t recv_type = type_arg(w, 5 + p, rank);
  exchange(rank, rank == root ? others(counts_at(w, 2), root) : Counts(p), send_type,
           rank == root ? Counts(p) : only(root, n), recv_type);
}

void Importer::allgatherv(int rank, const Words& w) {
  const std::size_t p = world();
  const std::uint64_t n = count(w[2], "count");
  exchange(rank, others(std::vector<std::uint64_t>(p, n), rank), type_arg(w, 3 + p, rank),
           others(counts_at(w, 3), rank), type_arg(w, 4 + p, rank));
}

void Importer::alltoallv(int rank, const Words& w) {
  const std::size_t p = world();
  exchange(rank, others(counts_at(w, 3), rank), type_arg(w, 4 + 2 * p, rank),
           others(counts_at(w, 4 + p), rank), type_arg(w, 5 + 2 * p, rank));
}

template <OpKind kOp>
void Importer::rooted_exchange(int rank, const std::vector<std::string_view>& w) {
  const bool no_recv_count = w.size() == 6;
  const std::size_t root_at = no_recv_count ? 3 : 4;
  const int root = w.size() > root_at ? rank_arg(w[root_at], "root") : 0;
  const std::uint64_t sent = count(w[2], "count");
  const std::uint64_t received = no_recv_count ? 0 : count(w[3], "count");
  const std::int64_t send_type = type_arg(w, root_at + 1, rank);
  const std::int64_t recv_type = type_arg(w, root_at + 2, rank);
  // The root's side of a gather is its receive, of a scatter its send; the others' the
  // opposite.
  const bool receiving_side = (kOp == OpKind::gather) == (rank == root);
  if (receiving_side) {
    collective(rank, kOp, received, recv_type, root);
  } else {
    collective(rank, kOp, sent, send_type, root);
  }
}

void Importer::sendrecv(int rank, const std::vector<std::string_view>& w) {
  const int dst = rank_arg(w[3], "destination");
  const std::int64_t src_word = integer(w[5], "source");
  const bool any = src_word == kAnySourceSmpi || src_word == kAnySourceMpi;
  const int src = any ? kNoRank : rank_arg(w[5], "source");
  const std::int64_t out_type = type_arg(w, 6, rank);
  const std::int64_t in_type = type_arg(w, 7, rank);
  const ElementType out = smpi_type(out_type);
  const ElementType in = smpi_type(in_type);
  const std::uint64_t out_recorded = count(w[2], "count");
  const std::uint64_t out_count = in_elements(out_recorded, out_type, out);
  const std::uint64_t send = builder_->isend(rank, dst, out.dtype, out_count, 0);
  posted(rank, send);
  const std::uint64_t in_recorded = count(w[4], "count");
  const std::uint64_t in_count = in_elements(in_recorded, in_type, in);
  const std::uint64_t recv = builder_->irecv(rank, src, in.dtype, in_count, 0);
  posted(rank, recv);
  ranks_[static_cast<std::size_t>(rank)].posted_as[send] = {true, out.dtype, out_count, out_type,
                                                            out_recorded};
  ranks_[static_cast<std::size_t>(rank)].posted_as[recv] = {true, in.dtype, in_count, in_type,
                                                            in_recorded};
  closed(rank, send);
  closed(rank, recv);
}

// The table of TI actions (Importer::action reads it).
using I = Importer;
const Importer::Action Importer::kActions[] = {
    {"init", kNoArguments, &I::init},
    {"finalize", kNoArguments, &I::finalize},
    {"test", kNoArguments, &I::test},
    {"testall", kNoArguments, &I::test},
    {"testany", kNoArguments, &I::test},
    {"testsome", kNoArguments, &I::test},
    {"waitany", kNoArguments, &I::wait_any},
    {"waitsome", kNoArguments, &I::wait_any},
    {"comm_size", kNoArguments, &I::nothing},
    {"comm_split", kNoArguments, &I::nothing},
    {"comm_dup", kNoArguments, &I::nothing},
    {"location", kNoArguments, &I::nothing},
    {"compute", {1, 0, "FLOPS"}, &I::compute},
    {"sleep", {1, 0, "SECONDS"}, &I::sleep},
    {"send", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"ssend", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"rsend", kSendArguments, &I::p2p<true, Completion::blocking>},
    {"bsend", kSendArguments, &I::p2p<true, Completion::buffered>},
    {"isend", kSendArguments, &I::p2p<true, Completion::request>},
    {"issend", kSendArguments, &I::p2p<true, Completion::request>},
    {"irsend", kSendArguments, &I::p2p<true, Completion::request>},
    {"ibsend", kSendArguments, &I::p2p<true, Completion::buffered_request>},
    {"recv", kRecvArguments, &I::p2p<false, Completion::blocking>},
    {"irecv", kRecvArguments, &I::p2p<false, Completion::request>},
    {"start", {3, 0, "ENDPOINT TAG BYTES [DTYPE]"}, &I::persistent_start},
    {"wait", {3, 0, "SRC DST TAG"}, &I::wait},
    {"waitall", kNoArguments, &I::wait_all},
    {"sendrecv", {4, 0, "SENDCOUNT DST RECVCOUNT SRC [DT1 [DT2]]"}, &I::sendrecv},
    {"barrier", kNoArguments, &I::barrier},
    {"bcast", {1, 0, "COUNT [ROOT [DTYPE]]"}, &I::bcast},
    {"reduce", {2, 0, "COUNT COMP [ROOT [DTYPE]]"}, &I::reduce},
    {"allreduce", {2, 0, "COUNT COMP [DTYPE]"}, &I::allreduce},
    {"alltoall", {2, 0, "SENDCOUNT RECVCOUNT [DT1 [DT2]]"}, &I::one_count<OpKind::all_to_all>},
    {"allgather", {2, 0, "SENDCOUNT RECVCOUNT [DT1 [DT2]]"}, &I::one_count<OpKind::all_gather>},
    {"gather", kRootedArguments, &I::rooted_exchange<OpKind::gather>},
    {"scatter", kRootedArguments, &I::rooted_exchange<OpKind::scatter>},
    {"reducescatter",
     {1, 1, "RECVCOUNT per rank, COMP [DTYPE]"},
     &I::reduce_scatter,
     &I::refuse_block_reduce_scatter},
    {"scan", {2, 0, "COUNT COMP [DTYPE]"}, &I::scan},
    {"exscan", {2, 0, "COUNT COMP [DTYPE]"}, &I::scan},
    {"gatherv", {1, 1, "SENDCOUNT RECVCOUNTS..."}, &I::gatherv},
    {"scatterv", {1, 1, "SENDCOUNTS... RECVCOUNT [ROOT [DT1 [DT2]]]"}, &I::scatterv},
    {"allgatherv", {1, 1, "SENDCOUNT RECVCOUNTS... [DT1 [DT2]]"}, &I::allgatherv},
    {"alltoallv",
     {2, 2, "SENDSIZE SENDCOUNTS... RECVSIZE RECVCOUNTS... [DT1 [DT2]]"},
     &I::alltoallv},
};

const Importer::Action* Importer::find_action(std::string_view name) {
  for (const Action& action : kActions) {
    if (action.name == name) return &action;
  }
  return nullptr;
}

}  // namespace ranklab::detail::ti
