// A Trace made without running anything: the operations a program would issue, recorded as
// the fabric records them (rank_seq in program order, collectives numbered per group, wait
// points from posts and waits, messages matched and given their ids). For programs known
// as data: SimGrid TI traces (traces/simgrid_ti.hpp), or a pipeline schedule costed with
// traces/virtual_time.hpp without running it:
//
//   TraceBuilder b(2);                                  // stage 0 -> stage 1, one micro-batch
//   b.compute(0, {.seconds = model.layer_seconds(2)});
//   b.send(0, 1, DataType::f32, 4096, /*tag=*/0);
//   b.recv(1, 0, DataType::f32, 4096, 0);
//   b.compute(1, {.seconds = model.layer_seconds(2)});
//   const VirtualTimes t = simulate(b.build().trace, model);   // t.step_seconds, t.bubble
//
// Matching is MPI's non-overtaking rule applied to the whole program at once: per
// destination, receives in post order take the earliest unmatched send from their source
// with their tag (a sender's sends in post order). A receive from any source takes, of each
// sender's earliest such send, the one that could have arrived first: posted in the lowest
// phase (phases are counted by the world's collectives), preferring sends posted before the
// phase in which the receive completed, then the lowest sender rank. So iterations separated
// by barriers match within each iteration, as they must; which of two senders in one phase
// wins at run time, a program known only as data cannot say.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "traces/event.hpp"
#include "traces/messages.hpp"

namespace ranklab {

/// What build() returns: the trace, and the messages that found no partner.
struct BuiltTrace {
  Trace trace;
  std::vector<EventRef> unmatched;  ///< sends and receives without a partner, by rank then index
};

class TraceBuilder {
 public:
  /// `world_size` ranks, one group `world`. Throws UsageError for a world below 1.
  explicit TraceBuilder(int world_size);

  /// A further group over `ranks` (global ranks in group-rank order); returns its index.
  std::uint32_t add_group(std::string name, std::vector<int> ranks);

  /// Computation `rank` does before its next operation (or after its last one).
  void compute(int rank, const ComputeWork& work);
  /// One labelled compute event (format 1.2) before the rank's next operation.
  void compute_event(int rank, ComputeItem item);

  /// Non-blocking posts; each returns the operation's rank_seq, open until waited for.
  /// Peers and roots are global ranks; `src` may be kNoRank (any source), `tag` kAnyTag on
  /// a receive.
  std::uint64_t isend(int rank, int dst, DataType dtype, std::uint64_t count, int tag,
                      std::uint32_t group = 0);
  std::uint64_t irecv(int rank, int src, DataType dtype, std::uint64_t count, int tag,
                      std::uint32_t group = 0);
  /// A collective with per-rank unit `count` (FORMAT.md), `root` for rooted ones.
  std::uint64_t icollective(int rank, OpKind op, DataType dtype, std::uint64_t count,
                            std::uint32_t group = 0, int root = kNoRank,
                            ReduceOp reduce_op = ReduceOp::sum);

  /// The rank waits for its open operation `rank_seq`; false if none is open by that number.
  bool wait(int rank, std::uint64_t rank_seq);
  /// The rank waits for all its open operations.
  void wait_all(int rank);
  /// rank_seq of the rank's open operations, ascending.
  const std::vector<std::uint64_t>& open(int rank) const;

  // Blocking forms: post, then wait.
  void send(int rank, int dst, DataType dtype, std::uint64_t count, int tag,
            std::uint32_t group = 0) {
    wait(rank, isend(rank, dst, dtype, count, tag, group));
  }
  void recv(int rank, int src, DataType dtype, std::uint64_t count, int tag,
            std::uint32_t group = 0) {
    wait(rank, irecv(rank, src, dtype, count, tag, group));
  }
  void collective(int rank, OpKind op, DataType dtype, std::uint64_t count, std::uint32_t group = 0,
                  int root = kNoRank, ReduceOp reduce_op = ReduceOp::sum) {
    wait(rank, icollective(rank, op, dtype, count, group, root, reduce_op));
  }

  /// Room for `operations` more events of `rank`, where an importer knows how many it will
  /// post: a rank's events are large, and growing them by doubling copies each one.
  void reserve(int rank, std::size_t operations);

  int world_size() const { return static_cast<int>(ranks_.size()); }
  std::uint64_t operations() const { return operations_; }

  /// Matches messages and returns the trace (format 1.1, header config `config`). The
  /// builder is left empty.
  BuiltTrace build(nlohmann::json config = nlohmann::json::object());

 private:
  struct RankProgram {
    std::vector<TraceEvent> events;
    std::vector<std::uint64_t> open;
    ComputeWork pending_compute;         ///< to go on the next operation
    std::vector<std::int64_t> coll_seq;  ///< next collective index, by group
  };

  TraceEvent& post(int rank, OpKind op, std::uint32_t group, DataType dtype, std::uint64_t count);
  void match_messages(BuiltTrace& built);

  TraceHeader header_;
  std::vector<RankProgram> ranks_;
  std::uint64_t operations_ = 0;
};

inline constexpr int kAnyTagInTrace = -1;  ///< a receive's `tag` when it takes any tag

}  // namespace ranklab
