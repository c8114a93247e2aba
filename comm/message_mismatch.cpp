#include "comm/message_mismatch.hpp"

#include <fmt/format.h>

#include "comm/matching.hpp"

namespace ranklab {

const char* message_mismatch_reason(const MessageSide& send, const MessageSide& recv) {
  if (send.dtype != recv.dtype) return "the element types differ";
  if (send.count > recv.count) return "the receive buffer is smaller than the message";
  return nullptr;
}

std::string describe_message_mismatch(std::string_view group, const MessageSide& send, int send_tag,
                                      const MessageSide& recv, int recv_source, int recv_tag,
                                      std::string_view reason) {
  return fmt::format(
      "message mismatch in {}: rank {} (op #{}) sends {} x {} to rank {} tag {}; rank {} (op #{}) "
      "receives into {} x {} from {} tag {}: {}",
      group, send.rank, send.op, send.count, to_string(send.dtype), recv.rank, send_tag, recv.rank,
      recv.op, recv.count, to_string(recv.dtype),
      recv_source == kAnySource ? std::string("any source") : fmt::format("rank {}", recv_source),
      recv_tag == kAnyTag ? std::string("any") : std::to_string(recv_tag), reason);
}

}  // namespace ranklab
