// The SimGrid TI importer (traces/detail/simgrid_ti_importer.hpp) after the builder matched
// the messages: where buffered sends close (the first pass's plan), which operations never
// completed and why, the receives' own signatures, each event's file and line.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "traces/detail/simgrid_ti_importer.hpp"

namespace ranklab::detail::ti {

void Importer::plan_buffered(const Trace& trace) {
  const std::size_t n = trace.ranks.size();
  std::vector<std::vector<std::uint64_t>> phase(n);       // by index: collectives before
  std::vector<std::vector<std::uint64_t>> collective(n);  // by coll_seq: rank_seq
  for (std::size_t r = 0; r < n; ++r) {
    for (const TraceEvent& e : trace.ranks[r]) {
      phase[r].push_back(collective[r].size());
      if (!is_point_to_point(e.op) && e.group == 0) collective[r].push_back(e.rank_seq);
    }
  }
  struct Buffered {
    int receiver = 0;
    std::uint64_t recv_index = 0;
  };
  std::vector<std::vector<std::pair<std::uint64_t, Buffered>>> sent(n);  // by rank_seq
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
      const TraceEvent& recv = trace.ranks[r][i];
      if (recv.op != OpKind::recv || !recv.msg.valid()) continue;
      const auto s = static_cast<std::size_t>(recv.msg.sender);
      const std::uint64_t b = recv.msg.sender_seq;
      if (!ranks_[s].buffered.contains(b)) continue;
      sent[s].push_back({b, {static_cast<int>(r), i}});
      const std::uint64_t j = std::max(phase[s][b], phase[r][i]);  // both come before it
      if (j < collective[s].size()) {
        close_buffered_[key(static_cast<int>(s), b)] = collective[s][j];
      }
    }
  }
  // The receive rule. Per sender, its receives from each rank, in order: (rank_seq, the
  // message's rank_seq at its sender).
  for (std::size_t s = 0; s < n; ++s) {
    if (sent[s].empty()) continue;
    std::map<int, std::vector<std::pair<std::uint64_t, std::uint64_t>>> from;
    for (const TraceEvent& e : trace.ranks[s]) {
      if (e.op == OpKind::recv && e.msg.valid()) {
        from[e.msg.sender].emplace_back(e.rank_seq, e.msg.sender_seq);
      }
    }
    for (const auto& [b, to] : sent[s]) {
      const auto list = from.find(to.receiver);
      if (list == from.end()) continue;
      auto it = std::upper_bound(list->second.begin(), list->second.end(),
                                 std::pair<std::uint64_t, std::uint64_t>{b, UINT64_MAX});
      while (it != list->second.end() && it->second <= to.recv_index) ++it;
      if (it == list->second.end()) continue;
      const auto [planned, fresh] =
          close_buffered_.try_emplace(key(static_cast<int>(s), b), it->first);
      if (!fresh) planned->second = std::min(planned->second, it->first);
    }
  }
}

void Importer::settle_one(BuiltTrace& built, EventRef ref, const std::string& what) {
  TraceEvent& e = built.trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
  const RankState& state = ranks_[static_cast<std::size_t>(ref.rank)];
  const std::uint64_t closed_at = state.closed_at[e.rank_seq];
  const bool gone_past = closed_at != 0 && closed_at != state.actions;
  if (gone_past && e.op != OpKind::recv) return;
  if (gone_past && !state.cancellable[e.rank_seq] && take_from_cancelled(built, ref)) return;
  if (gone_past && !state.cancellable[e.rank_seq]) {
    fail_at(state.where[e.rank_seq],
            what + fmt::format(", yet rank {} went on past it (a receive cannot complete "
                               "without a message)",
                               e.rank));
  }
  // An irecv waited for without a message was cancelled (SMPI records no MPI_Cancel, only
  // the irecv and its wait): dropped, as a pending operation that nothing waits for.
  e.status = OpStatus::pending;
  e.blocked = (closed_at != 0 && !gone_past) ||
              (closed_at == 0 && state.wait_any_at != 0 && state.wait_any_at == state.actions);
  if (e.op == OpKind::recv) e.msg = {};
}

bool Importer::take_from_cancelled(BuiltTrace& built, EventRef ref) {
  std::vector<TraceEvent>& events = built.trace.ranks[static_cast<std::size_t>(ref.rank)];
  TraceEvent& recv = events[ref.index];
  const RankState& state = ranks_[static_cast<std::size_t>(ref.rank)];
  for (std::size_t i = 0; i < ref.index; ++i) {
    TraceEvent& cancelled = events[i];
    if (cancelled.op != OpKind::recv || !cancelled.msg.valid() ||
        !state.cancellable[cancelled.rank_seq] || state.closed_at[cancelled.rank_seq] == 0) {
      continue;
    }
    if ((recv.peer != kNoRank && recv.peer != cancelled.msg.sender) ||
        (recv.tag != kAnyTagInTrace && recv.tag != cancelled.tag)) {
      continue;
    }
    recv.msg = cancelled.msg;
    recv.peer = cancelled.peer;
    recv.tag = cancelled.tag;
    recv.dtype = cancelled.dtype;
    recv.count = cancelled.count;
    recv.bytes = cancelled.bytes;
    cancelled.msg = {};
    cancelled.status = OpStatus::pending;
    cancelled.blocked = false;
    return true;
  }
  return false;
}

void Importer::keep_receive_signatures(Trace& trace) {
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (TraceEvent& e : trace.ranks[r]) {
      if (e.op != OpKind::recv || !e.msg.valid()) continue;
      const Signature& own = ranks_[r].posted_as[e.rank_seq];
      if (!own.known) continue;
      const Signature& sent =
          ranks_[static_cast<std::size_t>(e.msg.sender)].posted_as[e.msg.sender_seq];
      if ((sent.smpi == kDerivedType || own.smpi == kDerivedType) &&
          !matches_any_type(sent.smpi) && !matches_any_type(own.smpi)) {
        // The fabric would compare a derived type's stand-in (u8) with the other side's
        // type: said here in MPI's names, and the message replays as sent.
        if (const std::string why = derived_clash(sent, own); !why.empty()) {
          type_mismatches_.push_back(describe_type_mismatch(trace, e, sent, own, why));
        }
        continue;
      }
      if (own.dtype == e.dtype && own.count >= e.count) {
        // The fabric will see alike types: what only SMPI's names tell apart is said here.
        if (const std::string_view why = signedness_clash(sent.smpi, own.smpi); !why.empty()) {
          type_mismatches_.push_back(describe_type_mismatch(
              trace, e, sent, own, fmt::format("the element types differ in signedness ({})", why)));
        }
        continue;
      }
      e.dtype = own.dtype;
      e.count = own.count;
      e.bytes = own.count * size_of(own.dtype);
    }
  }
}

std::string Importer::derived_clash(const Signature& sent, const Signature& own) {
  if (sent.smpi != own.smpi) {
    return fmt::format(
        "the element types differ (TI records no type map, so a derived datatype equals only "
        "a derived datatype: against {} its size is unknown)",
        smpi_type_name(sent.smpi == kDerivedType ? own.smpi : sent.smpi));
  }
  if (own.recorded < sent.recorded) {
    return "the receive buffer is smaller than the message (in elements of a derived "
           "datatype: TI writes -1 for every one, so both are taken for the same type)";
  }
  return {};
}

std::string Importer::line_of(int rank, std::uint64_t seq) const {
  const Location at = ranks_[static_cast<std::size_t>(rank)].where[seq];
  return fmt::format("{}:{}", files_[at.file].name, at.line);
}

std::string Importer::describe_type_mismatch(const Trace& trace, const TraceEvent& recv,
                                             const Signature& sent, const Signature& own,
                                             std::string_view why) const {
  return fmt::format(
      "message mismatch in {}: rank {} (op #{}) sends {} x {} to rank {} tag {} at {}; rank {} "
      "(op #{}) receives it into {} x {} at {}: {}",
      trace.header.groups.at(recv.group).name, recv.msg.sender, recv.msg.sender_seq,
      sent.recorded, smpi_type_name(sent.smpi), recv.rank, recv.tag,
      line_of(recv.msg.sender, recv.msg.sender_seq), recv.rank, recv.rank_seq, own.recorded,
      smpi_type_name(own.smpi), line_of(recv.rank, recv.rank_seq), why);
}

void Importer::settle(BuiltTrace& built) {
  const Trace& trace = built.trace;
  for (const EventRef& ref : built.unmatched) {
    const TraceEvent& e = trace.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
    settle_one(
        built, ref,
        e.op == OpKind::send
            ? fmt::format("rank {} sends {} x {} to rank {} tag {} and no receive matches it",
                          e.rank, e.count, to_string(e.dtype), e.peer, e.tag)
            : fmt::format(
                  "rank {} receives from {} tag {} and no send matches it", e.rank,
                  e.peer == kNoRank ? std::string("any source") : fmt::format("rank {}", e.peer),
                  e.tag == kAnyTagInTrace ? std::string("any") : std::to_string(e.tag)));
  }
  // Collectives: every member of the world must reach the k-th one.
  std::vector<std::size_t> members;
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      if (is_point_to_point(e.op)) continue;
      const auto k = static_cast<std::size_t>(e.coll_seq);
      if (members.size() <= k) members.resize(k + 1, 0);
      ++members[k];
    }
  }
  const auto world = static_cast<std::size_t>(trace.header.world_size);
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
      const TraceEvent& e = trace.ranks[r][i];
      if (is_point_to_point(e.op)) continue;
      const std::size_t joined = members[static_cast<std::size_t>(e.coll_seq)];
      if (joined == world) continue;
      settle_one(built, {static_cast<int>(r), i},
                 fmt::format("{} #{} of the world is reached by {} of {} ranks", to_string(e.op),
                             e.coll_seq, joined, world));
    }
  }
}

void Importer::locate(Trace& trace) const {
  for (const TiFile& file : files_) trace.sources.files.push_back(file.name);
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const std::vector<Location>& where = ranks_[r].where;
    for (TraceEvent& e : trace.ranks[r]) {
      if (e.rank_seq < where.size()) e.source = {where[e.rank_seq].file, where[e.rank_seq].line};
    }
  }
}

}  // namespace ranklab::detail::ti
