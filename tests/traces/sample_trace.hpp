// Traces shared by the trace tests: a small one that uses every op kind, field and status,
// and a large generated one.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>

#include "traces/event.hpp"
#include "traces/jsonl.hpp"

namespace ranklab::trace_samples {

inline TraceHeader sample_header() {
  TraceHeader header;
  header.world_size = 4;
  header.groups = {{"world", {0, 1, 2, 3}},
                   {"tp[0,1]", {0, 1}},
                   {"tp[2,3]", {2, 3}},
                   {"dp[2,0]", {2, 0}}};  // group-rank order differs from global order
  header.config = {{"policy", "random:7"},
                   {"seed", 7},
                   {"send_mode", "rendezvous"},
                   {"threads", 1},
                   {"program", {{"name", "sample"}, {"args", {"--steps", "2"}}}}};
  return header;
}

inline TraceEvent p2p_event(OpKind op, int rank, std::uint64_t rank_seq, int peer, int tag,
                            MessageId msg, std::uint64_t lamport, std::uint32_t group = 0) {
  TraceEvent event;
  event.rank = rank;
  event.rank_seq = rank_seq;
  event.op = op;
  event.group = group;
  event.peer = peer;
  event.tag = tag;
  event.dtype = DataType::f32;
  event.count = 4;
  event.bytes = 16;
  event.hash = 0x0123456789abcdefULL + static_cast<std::uint64_t>(rank);
  event.has_hash = true;
  event.msg = msg;
  event.lamport = lamport;
  return event;
}

inline TraceEvent collective_event(OpKind op, int rank, std::uint64_t rank_seq, std::uint32_t group,
                                   std::int64_t coll_seq, DataType dtype, std::uint64_t count,
                                   std::uint64_t lamport, int root = kNoRank,
                                   std::optional<ReduceOp> reduce_op = std::nullopt) {
  TraceEvent event;
  event.rank = rank;
  event.rank_seq = rank_seq;
  event.op = op;
  event.group = group;
  event.dtype = dtype;
  event.count = count;
  event.bytes = count * size_of(dtype);
  event.has_hash = count > 0;  // a barrier has no payload to hash
  event.hash = event.has_hash ? 0xfedcba9876543210ULL ^ (rank_seq << 8) : 0;
  event.coll_seq = coll_seq;
  event.root = root;
  event.has_reduce_op = reduce_op.has_value();
  event.reduce_op = reduce_op.value_or(ReduceOp::sum);
  event.lamport = lamport;
  return event;
}

/// Every op kind, reduce op and dtype; pending p2p (directed and any-source) and
/// pending collectives; rooted collectives on subgroups.
inline Trace sample_trace() {
  using K = OpKind;
  Trace trace;
  trace.header = sample_header();
  trace.ranks.resize(4);
  auto& r0 = trace.ranks[0];
  r0.push_back(p2p_event(K::send, 0, 0, 1, 7, {0, 0}, 1));
  r0.push_back(
      collective_event(K::all_reduce, 0, 1, 0, 0, DataType::f32, 8, 3, kNoRank, ReduceOp::sum));
  r0.push_back(collective_event(K::broadcast, 0, 2, 0, 1, DataType::f64, 3, 4, 2));
  r0.push_back(collective_event(K::reduce, 0, 3, 1, 0, DataType::i32, 5, 5, 1, ReduceOp::max));
  r0.push_back(collective_event(K::all_gather, 0, 4, 0, 2, DataType::u8, 16, 6));
  r0.push_back(
      collective_event(K::reduce_scatter, 0, 5, 0, 3, DataType::f64, 2, 7, kNoRank, ReduceOp::avg));
  r0.push_back(collective_event(K::gather, 0, 6, 3, 0, DataType::i64, 1, 8, 2));
  r0.push_back(collective_event(K::scatter, 0, 7, 0, 4, DataType::f32, 2, 9, 3));
  r0.push_back(collective_event(K::all_to_all, 0, 8, 0, 5, DataType::i64, 3, 10));
  r0.push_back(collective_event(K::barrier, 0, 9, 0, 6, DataType::u8, 0, 11));
  TraceEvent any_source = p2p_event(K::recv, 0, 10, kNoRank, 9, {}, 11);
  any_source.status = OpStatus::pending;
  any_source.in_flight = {2, 8};  // format 1.1 wait points
  any_source.blocked = true;
  any_source.has_hash = false;  // nothing received yet
  any_source.hash = 0;
  r0.push_back(any_source);

  auto& r1 = trace.ranks[1];
  r1.push_back(p2p_event(K::recv, 1, 0, 0, 7, {0, 0}, 2));
  r1.push_back(
      collective_event(K::all_reduce, 1, 1, 0, 0, DataType::f32, 8, 3, kNoRank, ReduceOp::prod));
  r1.push_back(collective_event(K::reduce, 1, 2, 1, 0, DataType::i32, 5, 5, 1, ReduceOp::min));
  TraceEvent pending_send = p2p_event(K::send, 1, 3, 0, -2, {1, 3}, 6, 1);
  pending_send.status = OpStatus::pending;
  r1.push_back(pending_send);

  auto& r2 = trace.ranks[2];
  r2.push_back(collective_event(K::gather, 2, 0, 3, 0, DataType::i64, 1, 8, 2));
  TraceEvent pending_coll =
      collective_event(K::all_reduce, 2, 1, 2, 0, DataType::f64, 1, 9, kNoRank, ReduceOp::sum);
  pending_coll.status = OpStatus::pending;
  r2.push_back(pending_coll);

  auto& r3 = trace.ranks[3];
  TraceEvent pending_recv = p2p_event(K::recv, 3, 0, 2, 0, {}, 1, 2);
  pending_recv.status = OpStatus::pending;
  pending_recv.has_hash = false;
  pending_recv.hash = 0;
  r3.push_back(pending_recv);
  return trace;
}

/// A ring of sends and receives: `per_rank` events on each of `world` ranks.
inline Trace large_trace(int world, std::uint64_t per_rank) {
  Trace trace;
  trace.header.world_size = world;
  trace.header.groups.push_back({"world", {}});
  for (int r = 0; r < world; ++r) trace.header.groups[0].ranks.push_back(r);
  trace.ranks.resize(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    for (std::uint64_t seq = 0; seq < per_rank; ++seq) {
      const bool sends = (seq % 2 == 0) == (r % 2 == 0);
      const int peer = sends ? (r + 1) % world : (r + world - 1) % world;
      const MessageId msg{sends ? r : peer, seq};
      trace.ranks[static_cast<std::size_t>(r)].push_back(
          p2p_event(sends ? OpKind::send : OpKind::recv, r, seq, peer, static_cast<int>(seq % 5),
                    msg, seq + 1));
    }
  }
  return trace;
}

inline std::string to_text(const Trace& trace) {
  std::ostringstream out;
  write_trace(out, trace);
  return out.str();
}

inline Trace from_text(const std::string& text, std::string_view name = "t.jsonl") {
  std::istringstream in(text);
  return read_trace(in, name);
}

}  // namespace ranklab::trace_samples

namespace ranklab {

/// GoogleTest prints a Trace as its JSON Lines text (found by argument-dependent lookup).
inline void PrintTo(const Trace& trace, std::ostream* out) {
  *out << "\n" << trace_samples::to_text(trace);
}

}  // namespace ranklab
