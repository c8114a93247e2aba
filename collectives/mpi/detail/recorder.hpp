// This process's trace on MPI: the events the emulator's fabric records for the same rank
// (Fabric::record), built from what one process sees. Operations are numbered in posting
// order (rank_seq), their wait points kept as the fabric keeps them (posted until waited
// for or dropped), and a message's id travels with it: every message carries a header
// (wire_message.hpp) whose MessageHeader is, when recording, the send's rank_seq and the
// sender's Lamport clock. Collectives take the member's own clock + 1 (MPI gives no cheap max over the
// members); `ranklab diff` ignores Lamport clocks, so traces still compare identical.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "traces/event.hpp"

namespace ranklab::mpi_detail {

/// A message's id and clock, in its header (WireHeader).
struct MessageHeader {
  std::uint64_t sender_seq = 0;  ///< the send's rank_seq (also when not recording)
  std::uint64_t lamport = 0;     ///< the sender's clock (0 when not recording)
};

class Recorder {
 public:
  explicit Recorder(int rank) : rank_(rank) {}

  int rank() const { return rank_; }
  /// The trace index of `group` (by name, in order of first use), adding it if new.
  std::uint32_t group_index(const std::string& name, const std::vector<int>& ranks);

  /// Posts an operation: numbers it, records what is in flight. `event` holds the fields
  /// known at post (op, group, peer, tag, dtype, count, root, reduce op, hash of a send or
  /// a collective's input). Returns its rank_seq. A send's clock and id are set here.
  std::uint64_t post(TraceEvent event);
  /// The rank_seq the next post gets.
  std::uint64_t next_rank_seq() const { return next_seq_; }
  /// A posted send's header.
  MessageHeader header_of(std::uint64_t rank_seq) const;
  /// A receive completed with what it matched.
  void complete_recv(std::uint64_t rank_seq, int source_global, int tag, std::uint64_t count,
                     std::uint64_t hash, const MessageHeader& header);
  /// A send or a collective completed.
  void complete(std::uint64_t rank_seq);
  /// Its owner waited for it or dropped it: no longer in flight for later posts.
  void close(std::uint64_t rank_seq);
  /// The process was blocked in this operation when the run ended (a timeout).
  void mark_blocked(std::uint64_t rank_seq);
  /// The native collectives posted so far on `group` (the trace's coll_seq).
  std::int64_t next_coll_seq(std::uint32_t group);

  /// Every event in rank_seq order; operations never completed are pending.
  std::vector<TraceEvent> events() const;
  const std::vector<TraceGroup>& groups() const { return groups_; }

 private:
  int rank_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t lamport_ = 0;
  std::vector<std::uint64_t> open_;
  std::map<std::uint64_t, TraceEvent> events_;  ///< by rank_seq; status pending until complete
  std::vector<TraceGroup> groups_;
  std::vector<std::int64_t> coll_seq_;  ///< by group index
};

}  // namespace ranklab::mpi_detail
