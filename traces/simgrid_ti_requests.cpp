// The SimGrid TI importer (traces/detail/simgrid_ti_importer.hpp): point-to-point
// operations, posted with the program's own signature and completed as their kind says
// (blocking, buffered, by a wait), and the requests a rank leaves open.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "traces/detail/simgrid_ti_importer.hpp"

namespace ranklab::detail::ti {

void Importer::close_buffered_after(int rank, std::uint64_t seq) {
  auto& waiting = ranks_[static_cast<std::size_t>(rank)].buffered_open;
  std::erase_if(waiting, [&](const std::pair<std::uint64_t, std::uint64_t>& b) {
    if (b.first != seq) return false;
    builder_->wait(rank, b.second);
    return true;
  });
}

void Importer::posted(int rank, std::uint64_t seq) {
  RankState& state = ranks_[static_cast<std::size_t>(rank)];
  state.where.resize(seq + 1);
  state.where[seq] = where_;
  state.closed_at.resize(seq + 1, 0);
  state.posted_as.resize(seq + 1);
  state.cancellable.resize(seq + 1, false);
  state.tested.resize(seq + 1, false);
}

void Importer::closed(int rank, std::uint64_t seq) {
  RankState& state = ranks_[static_cast<std::size_t>(rank)];
  builder_->wait(rank, seq);
  state.closed_at[seq] = state.actions;
  if (!state.buffered_open.empty()) close_buffered_after(rank, seq);
}

void Importer::point_to_point(int rank, const std::vector<std::string_view>& w, bool send,
                              Completion completion) {
  const std::int64_t peer_word = integer(w[2], send ? "destination" : "source");
  const bool any_source = !send && (peer_word == kAnySourceSmpi || peer_word == kAnySourceMpi);
  const int peer = any_source ? kNoRank : rank_arg(w[2], send ? "destination" : "source");
  const int tag = tag_arg(w[3], send);
  // A receive's count may be 0 or negative: SMPI then probes for the size.
  const std::int64_t raw = integer(w[4], "count");
  const std::uint64_t n = !send && raw < 0 ? 0 : count(w[4], "count");
  // SMPI 3.29 and later write the count in elements of the type, whatever the type (3.28
  // and older wrote bytes for the types their replay could not handle).
  const std::int64_t type = type_arg(w, 5, rank);
  const ElementType element = smpi_type(type);
  post_p2p(rank, w[1], send, peer, tag,
           {raw >= 0, element.dtype, in_elements(n, type, element), type, n}, completion);
}

void Importer::buffer(int rank, std::uint64_t seq) {
  saw_buffered_ = true;
  RankState& state = ranks_[static_cast<std::size_t>(rank)];
  if (first_pass_) {
    state.buffered.insert(seq);
    builder_->wait(rank, seq);
  } else if (const auto it = close_buffered_.find(key(rank, seq)); it != close_buffered_.end()) {
    state.buffered_open.emplace_back(it->second, seq);
  }
}

void Importer::persistent_start(int rank, const std::vector<std::string_view>& w) {
  const int endpoint = rank_arg(w[2], "endpoint");
  const bool send = endpoint != rank;
  const int tag = tag_arg(w[3], send);
  const std::uint64_t bytes = count(w[4], "size");
  const std::int64_t type = type_arg(w, 5, rank);
  if (type == kDerivedType) {
    // Its size in bytes against the others' counts in elements of a size never recorded:
    // the one comparison that needs the bytes of a derived datatype.
    fail(
        "Start of a derived datatype: SMPI writes a persistent request's size in bytes and "
        "every other call's count in elements of the derived type, whose size TI does not "
        "record, so it compares with none of them");
  }
  ElementType element = smpi_type(type);
  if (bytes % (size_of(element.dtype) * element.per_element) != 0) element = {DataType::u8, 1};
  post_p2p(rank, "Start", send, send ? endpoint : kNoRank, tag,
           {true, element.dtype, bytes / size_of(element.dtype), type,
            bytes / (size_of(element.dtype) * element.per_element)},
           Completion::request);
}

void Importer::post_p2p(int rank, std::string_view call, bool send, int peer, int tag,
                        const Signature& own, Completion completion) {
  const bool any_source = peer == kNoRank;
  const std::uint64_t elements = own.count;
  const ElementType element{own.dtype, 1};
  const std::uint64_t seq =
      send ? builder_->isend(rank, peer, element.dtype, elements, static_cast<int>(tag))
           : builder_->irecv(rank, peer, element.dtype, elements, static_cast<int>(tag));
  posted(rank, seq);
  if (send || own.known) ranks_[static_cast<std::size_t>(rank)].posted_as[seq] = own;
  if (!send && completion == Completion::request) {
    ranks_[static_cast<std::size_t>(rank)].cancellable[seq] = true;
  }
  const bool buffered =
      completion == Completion::buffered || completion == Completion::buffered_request;
  if (buffered) buffer(rank, seq);
  if (completion == Completion::blocking) {
    closed(rank, seq);
  } else if (completion != Completion::buffered) {
    RankState& state = ranks_[static_cast<std::size_t>(rank)];
    state.open.push_back(
        {seq, send ? rank : peer, send ? peer : rank, static_cast<int>(tag), any_source,
         completion == Completion::buffered_request, state.tests,
         fmt::format("{} {} {} tag {}", call, send ? "to" : "from",
                     any_source ? std::string("any source") : fmt::format("rank {}", peer),
                     tag == kAnyTagInTrace ? std::string("any") : std::to_string(tag))});
  }
}

std::vector<Importer::OpenRequest>::iterator Importer::named_request(
    int rank, const std::vector<std::string_view>& w) {
  const std::int64_t src = integer(w[2], "source"), dst = integer(w[3], "destination");
  const std::int64_t tag = integer(w[4], "tag");
  RankState& state = ranks_[static_cast<std::size_t>(rank)];
  const auto named = [&](const OpenRequest& r) {
    return (r.src == src || r.any_source) && r.dst == dst &&
           (r.tag == tag || r.tag == kAnyTagInTrace);
  };
  const auto untested = std::find_if(state.open.begin(), state.open.end(), [&](const OpenRequest& r) {
    return named(r) && !state.tested[r.seq];
  });
  if (untested != state.open.end()) return untested;
  return std::find_if(state.open.begin(), state.open.end(), named);
}

std::vector<std::uint64_t>::iterator Importer::oldest_untested_collective(int rank) {
  RankState& state = ranks_[static_cast<std::size_t>(rank)];
  auto& open = state.open_collectives;
  const auto untested =
      std::find_if(open.begin(), open.end(), [&](std::uint64_t seq) { return !state.tested[seq]; });
  return untested != open.end() ? untested : open.begin();
}

void Importer::wait(int rank, const std::vector<std::string_view>& w) {
  auto& open = ranks_[static_cast<std::size_t>(rank)].open;
  const auto it = named_request(rank, w);
  if (it == open.end()) {
    // A nonblocking collective's request: TI names none, so the oldest (MPI starts them in
    // one order on every rank). Without one, as SMPI's replay: a test() already completed it.
    // One a test completed is passed over, as for point-to-point requests.
    auto& collectives = ranks_[static_cast<std::size_t>(rank)].open_collectives;
    if (const auto oldest = oldest_untested_collective(rank); oldest != collectives.end()) {
      closed(rank, *oldest);
      collectives.erase(oldest);
    }
    return;
  }
  if (!it->buffered) closed(rank, it->seq);
  open.erase(it);
}

void Importer::unfinished_requests(int rank) {
  const RankState& state = ranks_[static_cast<std::size_t>(rank)];
  for (const OpenRequest& r : state.open) {
    if (r.buffered || state.tests > r.tests || state.tested[r.seq]) continue;
    open_at_end_.push_back({rank, r.seq, r.call, where_.line});
  }
  for (const std::uint64_t seq : state.open_collectives) {
    if (!state.tested[seq]) open_at_end_.push_back({rank, seq, "", where_.line});
  }
}

void Importer::wait_all(int rank, const std::vector<std::string_view>&) {
  auto& open = ranks_[static_cast<std::size_t>(rank)].open;
  for (const OpenRequest& r : open) {
    if (!r.buffered) closed(rank, r.seq);
  }
  open.clear();
  auto& collectives = ranks_[static_cast<std::size_t>(rank)].open_collectives;
  for (const std::uint64_t seq : collectives) closed(rank, seq);
  collectives.clear();
}

}  // namespace ranklab::detail::ti

namespace ranklab::detail::ti {

void Importer::unfinished_requests(const Trace& trace) {
  if (open_at_end_.empty()) return;
  // Each matched message's two sides: its receive by the send's key, and the send by the
  // receive's.
  std::unordered_map<std::uint64_t, std::pair<int, std::uint64_t>> other_side;
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      if (e.op != OpKind::recv || !e.msg.valid()) continue;
      other_side[key(e.msg.sender, e.msg.sender_seq)] = {e.rank, e.rank_seq};
      other_side[key(e.rank, e.rank_seq)] = {e.msg.sender, e.msg.sender_seq};
    }
  }
  for (const OpenAtEnd& r : open_at_end_) {
    if (r.call.empty()) {
      unfinished_.push_back(fmt::format(
          "{}: rank {} op #{} (a nonblocking collective) is still open when the rank finalizes "
          "at line {}: no wait completed it",
          line_of(r.rank, r.seq), r.rank, r.seq, r.finalize_line));
      continue;
    }
    if (const auto it = other_side.find(key(r.rank, r.seq)); it != other_side.end()) {
      const auto [peer, seq] = it->second;
      const RankState& other = ranks_[static_cast<std::size_t>(peer)];
      if (other.closed_at[seq] != 0 || other.tested[seq]) continue;  // freed once posted
    }
    unfinished_.push_back(fmt::format(
        "{}: rank {} op #{} ({}) is still open when the rank finalizes at line {}: no wait "
        "completed it",
        line_of(r.rank, r.seq), r.rank, r.seq, r.call, r.finalize_line));
  }
}

}  // namespace ranklab::detail::ti
