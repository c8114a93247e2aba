#include "traces/trace_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "traces/error.hpp"

namespace ranklab {

TraceBuilder::TraceBuilder(int world_size) {
  if (world_size < 1)
    throw UsageError(fmt::format("a trace needs at least 1 rank, got {}", world_size));
  header_.world_size = world_size;
  std::vector<int> all(static_cast<std::size_t>(world_size));
  std::iota(all.begin(), all.end(), 0);
  header_.groups.push_back({"world", std::move(all)});
  ranks_.resize(static_cast<std::size_t>(world_size));
}

std::uint32_t TraceBuilder::add_group(std::string name, std::vector<int> ranks) {
  for (int r : ranks) {
    if (r < 0 || r >= world_size()) {
      throw UsageError(
          fmt::format("group {}: rank {} is outside the world of {}", name, r, world_size()));
    }
  }
  header_.groups.push_back({std::move(name), std::move(ranks)});
  return static_cast<std::uint32_t>(header_.groups.size() - 1);
}

void TraceBuilder::compute(int rank, const ComputeWork& work) {
  ranks_.at(static_cast<std::size_t>(rank)).pending_compute.add(work);
}

void TraceBuilder::compute_event(int rank, ComputeItem item) {
  ranks_.at(static_cast<std::size_t>(rank)).pending_compute.add(std::move(item));
}

TraceEvent& TraceBuilder::post(int rank, OpKind op, std::uint32_t group, DataType dtype,
                               std::uint64_t count) {
  RankProgram& program = ranks_.at(static_cast<std::size_t>(rank));
  if (group >= header_.groups.size()) {
    throw UsageError(fmt::format("rank {}: group index {} but only {} groups", rank, group,
                                 header_.groups.size()));
  }
  // Built in place: an event is large, and importers post millions of them.
  TraceEvent& e = program.events.emplace_back();
  e.rank = rank;
  e.rank_seq = program.events.size() - 1;
  e.op = op;
  e.group = group;
  e.dtype = dtype;
  e.count = count;
  e.bytes = count * size_of(dtype);
  e.in_flight = program.open;
  e.compute = std::move(program.pending_compute);
  program.pending_compute = {};
  program.open.push_back(e.rank_seq);
  ++operations_;
  return e;
}

std::uint64_t TraceBuilder::isend(int rank, int dst, DataType dtype, std::uint64_t count, int tag,
                                  std::uint32_t group) {
  TraceEvent& e = post(rank, OpKind::send, group, dtype, count);
  e.peer = dst;
  e.tag = tag;
  e.msg = MessageId{rank, e.rank_seq};
  return e.rank_seq;
}

std::uint64_t TraceBuilder::irecv(int rank, int src, DataType dtype, std::uint64_t count, int tag,
                                  std::uint32_t group) {
  TraceEvent& e = post(rank, OpKind::recv, group, dtype, count);
  e.peer = src;
  e.any_source = src == kNoRank;  // matching sets the peer; a replay may free it again
  e.tag = tag;
  return e.rank_seq;
}

std::uint64_t TraceBuilder::icollective(int rank, OpKind op, DataType dtype, std::uint64_t count,
                                        std::uint32_t group, int root, ReduceOp reduce_op) {
  TraceEvent& e = post(rank, op, group, dtype, count);
  auto& next = ranks_[static_cast<std::size_t>(rank)].coll_seq;
  if (next.size() <= group) next.resize(group + 1, 0);
  e.coll_seq = next[group]++;
  e.root = takes_root(op) ? root : kNoRank;
  e.has_reduce_op = takes_reduce_op(op);
  e.reduce_op = e.has_reduce_op ? reduce_op : ReduceOp::sum;
  return e.rank_seq;
}

bool TraceBuilder::wait(int rank, std::uint64_t rank_seq) {
  auto& open = ranks_.at(static_cast<std::size_t>(rank)).open;
  const auto it = std::find(open.begin(), open.end(), rank_seq);
  if (it == open.end()) return false;
  open.erase(it);
  return true;
}

void TraceBuilder::wait_all(int rank) { ranks_.at(static_cast<std::size_t>(rank)).open.clear(); }

void TraceBuilder::reserve(int rank, std::size_t operations) {
  auto& events = ranks_.at(static_cast<std::size_t>(rank)).events;
  events.reserve(events.size() + operations);
}

const std::vector<std::uint64_t>& TraceBuilder::open(int rank) const {
  return ranks_.at(static_cast<std::size_t>(rank)).open;
}

namespace {

/// Where an operation stands among its rank's collectives of the world: how many the rank
/// had posted when it posted the operation, and when it waited for it (a program's
/// collectives of the world mark its phases: a send posted after the k-th barrier cannot
/// have reached a receive that completed before it).
struct Epochs {
  std::uint64_t posted = 0;
  std::uint64_t done = 0;
};

/// Whether a receive of `trace` takes any source: only those need the epochs.
bool has_any_source(const Trace& trace) {
  for (const auto& events : trace.ranks) {
    for (const TraceEvent& e : events) {
      if (e.op == OpKind::recv && e.peer == kNoRank) return true;
    }
  }
  return false;
}

/// Each event's epochs; none where no receive takes any source (choose_any_source alone
/// reads them).
std::vector<std::vector<Epochs>> world_epochs(const Trace& trace) {
  if (!has_any_source(trace)) return {};
  std::vector<std::vector<Epochs>> out(trace.ranks.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto& events = trace.ranks[r];
    auto& epochs = out[r];
    epochs.resize(events.size());
    std::uint64_t collectives = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      epochs[i].posted = collectives;
      if (!is_point_to_point(events[i].op) && events[i].group == 0) ++collectives;
    }
    // A receive from any source is waited for before the first later operation that does
    // not list it in flight (its rank's end if none). Only those need it.
    for (std::size_t i = 0; i < events.size(); ++i) {
      epochs[i].done = collectives;
      if (events[i].op != OpKind::recv || events[i].peer != kNoRank) continue;
      for (std::size_t j = i + 1; j < events.size(); ++j) {
        const auto& keep = events[j].in_flight;
        if (!std::binary_search(keep.begin(), keep.end(), events[i].rank_seq)) {
          epochs[i].done = epochs[j].posted;
          break;
        }
      }
    }
  }
  return out;
}

/// Pairs each receive of a trace with the send the fabric would have matched it with, and
/// records on the receive what it matched (peer, tag, type, count, bytes, message id).
class MessageMatcher {
 public:
  explicit MessageMatcher(Trace& trace)
      : trace_(trace), receives_(trace.ranks.size()), epochs_(world_epochs(trace)),
        matched_(trace.ranks.size()) {
    for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
      matched_[r].assign(trace.ranks[r].size(), false);
      for (std::size_t i = 0; i < trace.ranks[r].size(); ++i) {
        const TraceEvent& e = trace.ranks[r][i];
        const EventRef ref{static_cast<int>(r), i};
        if (e.op == OpKind::send) {
          Channel& c = channels_[{e.group, e.peer}][e.rank];
          c.sends.push_back(ref);
          c.taken.push_back(false);
        } else if (e.op == OpKind::recv) {
          receives_[r].push_back(ref);
        }
        if (is_point_to_point(e.op)) messages_.push_back(ref);
      }
    }
  }

  /// Matches every receive, rank by rank in post order; then the point-to-point events
  /// left without a partner, by rank then index.
  std::vector<EventRef> match() {
    for (const auto& list : receives_) {
      for (const EventRef& ref : list) {
        const Choice choice = choose(ref);
        if (choice.channel != nullptr) complete(ref, *choice.channel, choice.index);
      }
    }
    std::vector<EventRef> unmatched;
    for (const EventRef& ref : messages_) {
      if (!matched_[static_cast<std::size_t>(ref.rank)][ref.index]) unmatched.push_back(ref);
    }
    return unmatched;
  }

 private:
  // Each (group, source, destination) channel's sends, in the sender's post order.
  struct Channel {
    std::vector<EventRef> sends;
    std::vector<bool> taken;
    std::size_t first_free = 0;  ///< sends before it are all taken
  };
  using Senders = std::map<int, Channel>;  ///< by source, in ascending global rank
  struct Choice {
    Channel* channel = nullptr;
    std::size_t index = 0;
  };

  TraceEvent& event(EventRef ref) {
    return trace_.ranks[static_cast<std::size_t>(ref.rank)][ref.index];
  }
  const Epochs& epochs(EventRef ref) const {
    return epochs_[static_cast<std::size_t>(ref.rank)][ref.index];
  }

  /// The earliest untaken send of `c` whose tag `recv` accepts; c.sends.size() if none.
  std::size_t first_acceptable(Channel& c, const TraceEvent& recv) {
    while (c.first_free < c.taken.size() && c.taken[c.first_free]) ++c.first_free;
    for (std::size_t k = c.first_free; k < c.sends.size(); ++k) {
      if (!c.taken[k] && (recv.tag == kAnyTagInTrace || event(c.sends[k]).tag == recv.tag)) {
        return k;
      }
    }
    return c.sends.size();
  }

  /// The send the receive `ref` takes, if any.
  Choice choose(EventRef ref) {
    const TraceEvent& recv = event(ref);
    const auto to_me = channels_.find({recv.group, recv.rank});
    if (to_me == channels_.end()) return {};
    if (recv.peer == kNoRank) return choose_any_source(to_me->second, ref);
    const auto from = to_me->second.find(recv.peer);
    if (from == to_me->second.end()) return {};
    const std::size_t k = first_acceptable(from->second, recv);
    if (k == from->second.sends.size()) return {};
    return {&from->second, k};
  }

  /// Any source: of each sender's first acceptable send, the one posted in the lowest world
  /// epoch (it was there first), preferring those posted before the receive completed; ties
  /// go to the lowest sender.
  Choice choose_any_source(Senders& senders, EventRef ref) {
    const TraceEvent& recv = event(ref);
    const std::uint64_t done = epochs(ref).done;
    Choice chosen;
    std::pair<bool, std::uint64_t> best{true, 0};
    for (auto& entry : senders) {
      Channel& channel = entry.second;
      const std::size_t found = first_acceptable(channel, recv);
      if (found == channel.sends.size()) continue;
      const std::uint64_t posted = epochs(channel.sends[found]).posted;
      const std::pair<bool, std::uint64_t> order{posted > done, posted};
      if (chosen.channel == nullptr || order < best) {
        chosen = {&channel, found};
        best = order;
      }
    }
    return chosen;
  }

  /// Takes send `k` of `channel` for the receive `ref`, which records, as the fabric records
  /// a completed receive, what it matched.
  void complete(EventRef ref, Channel& channel, std::size_t k) {
    channel.taken[k] = true;
    const EventRef send_ref = channel.sends[k];
    const TraceEvent& send = event(send_ref);
    TraceEvent& recv = event(ref);
    recv.peer = send.rank;
    recv.tag = send.tag;
    recv.dtype = send.dtype;
    recv.count = send.count;
    recv.bytes = send.bytes;
    recv.msg = send.msg;
    matched_[static_cast<std::size_t>(ref.rank)][ref.index] = true;
    matched_[static_cast<std::size_t>(send_ref.rank)][send_ref.index] = true;
  }

  Trace& trace_;
  // By (group, destination), then source.
  std::map<std::pair<std::uint32_t, int>, Senders> channels_;
  std::vector<std::vector<EventRef>> receives_;
  /// Every send and receive, by rank then index: the events the unmatched are among (a
  /// pass over them, not over every event of the trace).
  std::vector<EventRef> messages_;
  const std::vector<std::vector<Epochs>> epochs_;
  std::vector<std::vector<bool>> matched_;
};

}  // namespace

void TraceBuilder::match_messages(BuiltTrace& built) {
  std::vector<EventRef> unmatched = MessageMatcher(built.trace).match();
  built.unmatched.insert(built.unmatched.end(), unmatched.begin(), unmatched.end());
}

BuiltTrace TraceBuilder::build(nlohmann::json config) {
  BuiltTrace built;
  built.trace.header = header_;
  built.trace.header.config = std::move(config);
  built.trace.ranks.resize(ranks_.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    RankProgram& program = ranks_[r];
    if (!program.events.empty()) program.events.back().compute_after = program.pending_compute;
    built.trace.ranks[r] = std::move(program.events);
  }
  match_messages(built);
  ranks_.assign(ranks_.size(), RankProgram{});
  operations_ = 0;
  return built;
}

}  // namespace ranklab
