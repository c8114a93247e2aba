#include "collectives/mpi/detail/recorder.hpp"

#include <algorithm>

namespace ranklab::mpi_detail {

std::uint32_t Recorder::group_index(const std::string& name, const std::vector<int>& ranks) {
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    if (groups_[i].name == name) return static_cast<std::uint32_t>(i);
  }
  groups_.push_back(TraceGroup{name, ranks});
  coll_seq_.push_back(0);
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

std::int64_t Recorder::next_coll_seq(std::uint32_t group) { return coll_seq_[group]++; }

std::uint64_t Recorder::post(TraceEvent event) {
  event.rank = rank_;
  event.rank_seq = next_seq_++;
  event.status = OpStatus::pending;
  event.in_flight = open_;
  open_.push_back(event.rank_seq);
  event.bytes = event.count * size_of(event.dtype);
  // A pending operation learned no other clock: its owner's + 1 (a send sets it for good).
  event.lamport = lamport_ + 1;
  if (event.op == OpKind::send) {
    lamport_ = event.lamport;
    event.msg = MessageId{rank_, event.rank_seq};
  }
  const std::uint64_t seq = event.rank_seq;
  events_.emplace(seq, std::move(event));
  return seq;
}

MessageHeader Recorder::header_of(std::uint64_t rank_seq) const {
  return MessageHeader{rank_seq, events_.at(rank_seq).lamport};
}

void Recorder::complete_recv(std::uint64_t rank_seq, int source_global, int tag,
                             std::uint64_t count, std::uint64_t hash,
                             const MessageHeader& header) {
  TraceEvent& e = events_.at(rank_seq);
  e.status = OpStatus::completed;
  e.peer = source_global;
  e.tag = tag;
  e.count = count;
  e.bytes = count * size_of(e.dtype);
  e.hash = hash;
  e.has_hash = true;
  e.msg = MessageId{source_global, header.sender_seq};
  lamport_ = std::max(lamport_, header.lamport) + 1;
  e.lamport = lamport_;
}

void Recorder::complete(std::uint64_t rank_seq) {
  TraceEvent& e = events_.at(rank_seq);
  if (e.status == OpStatus::completed) return;
  e.status = OpStatus::completed;
  // A collective keeps its clock at post (the member's own + 1); the rank's moves past it.
  if (e.op != OpKind::send) lamport_ = std::max(lamport_, e.lamport);
}

void Recorder::close(std::uint64_t rank_seq) {
  if (const auto it = std::find(open_.begin(), open_.end(), rank_seq); it != open_.end()) {
    open_.erase(it);
  }
}

void Recorder::mark_blocked(std::uint64_t rank_seq) { events_.at(rank_seq).blocked = true; }

std::vector<TraceEvent> Recorder::events() const {
  std::vector<TraceEvent> out;
  out.reserve(events_.size());
  for (const auto& [seq, e] : events_) {
    TraceEvent event = e;
    // A pending receive shows what it asked for, with no hash and no message id (FORMAT.md).
    if (event.status == OpStatus::pending && event.op == OpKind::recv) {
      event.has_hash = false;
      event.hash = 0;
      event.msg = MessageId{};
    }
    if (event.status == OpStatus::completed) event.blocked = false;
    out.push_back(std::move(event));
  }
  return out;
}

}  // namespace ranklab::mpi_detail
