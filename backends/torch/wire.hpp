// The frames between ranklab's coordinator and a PyTorch process of `ranklab torchrun`
// (python/ranklab_torch/wire.py writes and reads the same): a 16-byte prefix (the header's
// length and the frame's flags as little-endian uint32s, the payload's length as a uint64),
// the header as UTF-8 JSON, then the payload, the call's tensors' bytes one after another.
//
// A large payload does not stream through a Unix socket: the process keeps a shared region
// (a sealed memfd it passes with the frame that introduces it, kNewRegion) sized for its
// call and the call's answer, and either side writes a payload of kRegionMinBytes or more
// there instead (kPayloadInRegion). Calls alternate with their answers, and each side is
// done with the region's bytes before it sends, so one region serves both ways.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/torch/shared_region.hpp"

namespace ranklab::torch_bridge {

/// The prefix's flags.
inline constexpr std::uint32_t kPayloadInRegion = 1;  ///< the payload is the region's start
inline constexpr std::uint32_t kNewRegion = 2;  ///< the frame passes the region's new memfd
/// Below this a payload goes through the socket: a region's round trip would cost more.
inline constexpr std::size_t kRegionMinBytes = 64 << 10;

/// One frame. Move-only: `payload` views `owned`, or the connection's shared region, which
/// stays valid until the connection's next send or receive.
struct WireMessage {
  WireMessage() = default;
  WireMessage(WireMessage&&) = default;
  WireMessage& operator=(WireMessage&&) = default;
  WireMessage(const WireMessage&) = delete;
  WireMessage& operator=(const WireMessage&) = delete;

  nlohmann::json header;
  std::span<std::byte> payload;
  std::vector<std::byte> owned;
};

/// One process's connected stream socket, owned: blocking reads and writes of whole frames.
class WireConnection {
 public:
  /// Takes `fd`; `peer` names the other side in errors ("rank 3's process").
  WireConnection(int fd, std::string peer);
  ~WireConnection();
  WireConnection(const WireConnection&) = delete;
  WireConnection& operator=(const WireConnection&) = delete;

  /// The next frame. Throws ConnectionClosed at a clean end of stream before a frame, Error
  /// for a broken frame.
  WireMessage receive();
  /// Sends a frame; a payload of kRegionMinBytes or more that fits the process's region is
  /// written there (not copied where it already is the region's start: an all_reduce
  /// computed in place).
  void send(const nlohmann::json& header, std::span<const std::byte> payload = {});

  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  void set_peer(std::string peer) { peer_ = std::move(peer); }

  /// The other side closed the connection between frames.
  struct ConnectionClosed {};

 private:
  /// Reads exactly `out.size()` bytes; false at end of stream before the first of them.
  /// The descriptor passed with them (SCM_RIGHTS), if any, goes to `passed_fd`.
  bool read_exactly(std::span<std::byte> out, int* passed_fd = nullptr);
  void write_all(std::span<const std::byte> bytes);
  /// The payload of `bytes` bytes a prefix announced: in the region or after the header.
  void read_payload(WireMessage& message, bool in_region, std::uint64_t bytes);

  int fd_;
  std::string peer_;
  std::unique_ptr<SharedRegion> region_;
};

}  // namespace ranklab::torch_bridge
