// The narrow interface the point-to-point collective algorithms are written against (gloo's
// barrier() over pairs, NCCL's runRing primitives): one collective call's view of its group.
// It owns the call's tag, element type and reduction operator, so an algorithm file holds
// only its send/receive script.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "traces/types.hpp"

namespace ranklab {

/// One member's handle on one collective call. Ranks are group ranks; counts are elements.
/// Every blocking call may throw what the backend's calls throw; receives throw
/// MismatchError naming both ranks when a message holds fewer elements than the schedule
/// expects (the backend already rejects messages larger than the receive buffer, and
/// element-type mismatches).
class PeerLink {
 public:
  /// `what` names the call in error messages (`all_reduce via ring in world`).
  PeerLink(Backend& backend, int tag, DataType dtype, ReduceOp op, std::string what);

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t elem() const { return elem_; }  ///< bytes per element
  /// Bytes of `count` elements.
  std::size_t bytes(std::size_t count) const { return count * elem_; }

  /// Sends `count` elements to `dst` and waits until the send completes.
  void send(const std::byte* data, std::size_t count, int dst);
  /// Receives exactly `count` elements from `src`.
  void recv(std::byte* data, std::size_t count, int src);
  /// MPI_Sendrecv: posts the receive from `src` and the send to `dst`, then waits for both,
  /// so a ring or a pair of ranks exchanging at once cannot deadlock, even in rendezvous mode.
  void exchange(const std::byte* out, std::size_t out_count, int dst, std::byte* in,
                std::size_t in_count, int src);

  /// acc = acc OP operand, element-wise: `acc` holds the lower ranks' contribution. Large
  /// buffers are split across oneTBB workers; each element is combined exactly once, so the
  /// result does not depend on how the work is split.
  void reduce(std::byte* acc, const std::byte* operand, std::size_t count) const;
  /// acc = operand OP acc, for when `operand` holds the lower ranks' contribution; clobbers
  /// `operand`. Keeping operands in rank order makes results identical on every rank even
  /// where OP is not bitwise commutative (min/max of signed zeros, NaN payloads).
  void reduce_after(std::byte* acc, std::byte* operand, std::size_t count) const;
  /// Completes a reduction over every member (divides by size() for avg).
  void finish(std::byte* data, std::size_t count) const;

  /// A scratch buffer of `count` elements (uninitialised), from the backend's pool: held
  /// until the lease goes, and reused by later calls.
  ScratchPool::Lease scratch(std::size_t count) const {
    return backend_.scratch().take(bytes(count));
  }

 private:
  void check_received(const RecvStatus& status, std::size_t expected, int src) const;

  Backend& backend_;
  int tag_;
  DataType dtype_;
  ReduceOp op_;
  std::string what_;
  int rank_;
  int size_;
  std::size_t elem_;
};

}  // namespace ranklab
