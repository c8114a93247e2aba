// A point-to-point message as it travels over MPI: a fixed header, then the payload. The
// header is the sender's side of the message (element type, count, operation number, and
// when recording the trace's message id and clock), so that the receiver checks the match as
// the emulator's fabric does, both sides in hand: a float sent into a double buffer, or more
// elements than the buffer holds, is a MismatchError naming both calls (exit 4), not bytes
// reinterpreted or MPI's bare "message truncated". MPI itself only moves bytes.
//
// Small messages are copied behind the header into one staging buffer; large ones are sent
// and received in place, with a derived datatype over the header and the caller's buffer,
// so that no payload is copied.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "collectives/mpi/detail/recorder.hpp"
#include "comm/buffer.hpp"

namespace ranklab::mpi_detail {

/// What travels ahead of every payload.
struct WireHeader {
  static constexpr std::uint32_t kMagic = 0x726c6d31;  ///< "rlm1": sent by ranklab's backend
  std::uint32_t magic = kMagic;
  std::uint8_t dtype = 0;  ///< DataType of the send
  std::uint8_t reserved[3]{};
  std::uint64_t count = 0;  ///< elements sent
  MessageHeader message;    ///< the send's operation number and clock (recorder.hpp)
};

/// One message's bytes as MPI sees them (address, count, datatype). Built in place and never
/// moved: MPI holds its addresses while the request is in flight.
class WireBuffer {
 public:
  /// Payloads up to this many bytes are staged (one copy is cheaper than a derived datatype).
  static constexpr std::size_t kStageBytes = 64 * 1024;

  /// A send of `payload` behind `header`.
  WireBuffer(const WireHeader& header, ConstBuffer payload);
  /// A receive into `payload` (its capacity).
  explicit WireBuffer(MutableBuffer payload);
  ~WireBuffer();
  WireBuffer(const WireBuffer&) = delete;
  WireBuffer& operator=(const WireBuffer&) = delete;

  void* address() { return staged() ? static_cast<void*>(staging_.data()) : MPI_BOTTOM; }
  int count() const;
  MPI_Datatype type() const { return staged() ? MPI_BYTE : type_; }

  /// The sender's header, once a receive of `received` bytes completed; null when the
  /// message is too short for one or was not sent by ranklab's backend.
  const WireHeader* received_header(std::size_t received);
  /// A completed receive's payload (at most the buffer's capacity) in the caller's buffer;
  /// returns those bytes.
  std::span<const std::byte> finish_recv(std::size_t received);
  /// A staged send may be kept past its owner (MPI may still read it): its bytes.
  std::vector<std::byte> release_staging() { return std::move(staging_); }

 private:
  bool staged() const { return type_ == MPI_DATATYPE_NULL; }
  void describe_in_place(void* payload, std::size_t bytes);

  WireHeader header_;
  std::vector<std::byte> staging_;  ///< header + payload, when staged
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  MutableBuffer user_;  ///< a receive's own buffer
};

}  // namespace ranklab::mpi_detail
