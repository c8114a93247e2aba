// One posted operation inside the fabric. Private to emulator/.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <exception>
#include <vector>

#include "comm/buffer.hpp"
#include "comm/call_site.hpp"
#include "comm/collective_args.hpp"
#include "emulator/faults.hpp"
#include "comm/group.hpp"
#include "emulator/request.hpp"
#include "traces/event.hpp"

namespace ranklab::detail {

struct RankSlot;

/// Everything the fabric knows about a pending or completed operation. Guarded by the
/// fabric's mutex; the owning rank reads it after completion without the lock. A field that
/// a collective's posting does not set but its completion or wait changes must also be
/// reset where Fabric::new_operation reuses a collective's operation for the next one.
struct Operation {
  /// User-provided, so that make_shared's value-initialisation runs only the member
  /// initialisers below: an implicit constructor would first zero all ~350 bytes (a
  /// `rep stos`, two thirds of new_operation's time on a small collective).
  Operation() noexcept {}

  OpKind kind = OpKind::send;
  int rank = 0;  ///< owner, global rank
  /// The owner's slot in the fabric, set when the operation is made (a rank's operations
  /// are its own: reuse keeps it): completion and waits find it without indexing the ranks.
  RankSlot* owner = nullptr;
  std::uint64_t rank_seq = 0;
  const Group* group = nullptr;
  SourceSite site;  ///< where the rank program called it (comm/call_site.hpp)

  // Point-to-point.
  int peer = kNoRank;  ///< group rank: destination of a send, source (or kAnySource) of a recv
  int tag = 0;
  ConstBuffer send_data;            ///< what a send transmits (the user's buffer or eager_copy)
  MutableBuffer recv_data;          ///< where a recv writes
  std::vector<std::byte> eager_copy;  ///< the payload of a buffered send
  bool matched = false;             ///< a send found its receive (or vice versa)
  const FaultSpec* corrupt = nullptr;  ///< a send that a `corrupt` fault hit (faults.hpp)

  // Collectives. The buffers are all the execution needs of the arguments besides the
  // signature (copying the whole CollectiveArgs was a tenth of a small collective's post).
  const void* coll_input = nullptr;
  void* coll_output = nullptr;
  std::size_t coll_input_bytes = 0;  ///< for the input's hash, taken late (set when tracing)
  CollectiveSignature signature;
  std::int64_t coll_seq = kNoCollective;  ///< the k-th native collective of the group (traces)
  std::uint64_t call_seq = 0;  ///< its call slot: native and point-to-point calls counted

  // Outcome.
  /// Set under the fabric lock; read without it by a Request going out of scope.
  std::atomic<bool> done{false};
  std::exception_ptr error;
  RecvStatus status;
  MessageId msg;  ///< the message a send sent or a recv matched
  std::uint64_t hash = 0;  ///< payload hash, when tracing (hash_pending: not yet taken)
  /// The owner's Lamport clock when it posted the operation. Clocks advance only in the
  /// owner's own fiber (at posting, and when it observes a completion), so they depend on
  /// the program, not on which rank the scheduler ran first.
  std::uint64_t clock_at_post = 0;
  std::uint64_t lamport = 0;

  // Wait points, for the trace (FORMAT.md, `in_flight` and `blocked`); kept when tracing.
  std::vector<std::uint64_t> in_flight;  ///< the owner's open operations when this one was posted
  ComputeWork compute;  ///< what the owner computed since its previous operation (tracing)
  bool blocked_at_end = false;           ///< the owner was waiting for it when the run was aborted
  /// A blocking collective's input hash, not taken yet (detail/payload_hashes.hpp): set for
  /// every blocking call, read only when tracing. Here, beside the other flag, it takes no
  /// room of its own.
  bool hash_pending = false;
};

}  // namespace ranklab::detail
