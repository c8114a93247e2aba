// The frames between ranklab's coordinator and a PyTorch process of `ranklab torchrun`
// (python/ranklab_torch/wire.py writes and reads the same): a 12-byte prefix (the header's
// length as a little-endian uint32, the payload's as a uint64), the header as UTF-8 JSON,
// then the payload, the call's tensors' bytes one after another.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ranklab::torch_bridge {

struct WireMessage {
  nlohmann::json header;
  std::vector<std::byte> payload;
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
  void send(const nlohmann::json& header, std::span<const std::byte> payload = {});

  int fd() const { return fd_; }
  const std::string& peer() const { return peer_; }
  void set_peer(std::string peer) { peer_ = std::move(peer); }

  /// The other side closed the connection between frames.
  struct ConnectionClosed {};

 private:
  /// Reads exactly `out.size()` bytes; false at end of stream before the first of them.
  bool read_exactly(std::span<std::byte> out);
  void write_all(std::span<const std::byte> bytes);

  int fd_;
  std::string peer_;
};

}  // namespace ranklab::torch_bridge
