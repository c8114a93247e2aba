// When the two sides of a matched message disagree, and the one line that says so: the same
// check and the same words on every backend (the emulator's fabric checks each match; the MPI
// backend's receiver checks the header every message carries), so a report reads alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "traces/types.hpp"

namespace ranklab {

/// One side of a message as its report names it.
struct MessageSide {
  int rank = 0;               ///< global rank
  std::uint64_t op = 0;       ///< the rank's operation number (rank_seq)
  std::size_t count = 0;      ///< elements sent, or the receive buffer's capacity
  DataType dtype = DataType::u8;
};

/// Why a send of `send` cannot land in a receive of `recv`: null when it can. The element
/// types are checked first, then the size (a smaller message is a short receive, not a
/// mismatch, as in MPI).
const char* message_mismatch_reason(const MessageSide& send, const MessageSide& recv);

/// "message mismatch in GROUP: rank S (op #N) sends C x T to rank R tag G; rank R (op #M)
/// receives into C x T from SOURCE tag TAG: REASON". `recv_source` is a global rank or
/// kAnySource, `recv_tag` a tag or kAnyTag.
std::string describe_message_mismatch(std::string_view group, const MessageSide& send, int send_tag,
                                      const MessageSide& recv, int recv_source, int recv_tag,
                                      std::string_view reason);

}  // namespace ranklab
