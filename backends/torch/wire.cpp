#include "backends/torch/wire.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include "traces/error.hpp"

namespace ranklab::torch_bridge {
namespace {

constexpr std::size_t kPrefixBytes = 12;
// A header is a call's description (sites, shapes, split sizes), never its tensors: a
// larger one is a broken frame, refused before anything is allocated for it.
constexpr std::uint32_t kMaxHeaderBytes = 64u << 20;

void put_le(std::byte* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

std::uint64_t get_le(const std::byte* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t(std::to_integer<unsigned>(in[i])) << (8 * i);
  return value;
}

}  // namespace

WireConnection::WireConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

WireConnection::~WireConnection() { ::close(fd_); }

bool WireConnection::read_exactly(std::span<std::byte> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::recv(fd_, out.data() + got, out.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0) {
      if (got == 0) return false;
      throw Error(fmt::format("{} closed its connection inside a frame", peer_));
    } else if (errno != EINTR) {
      if (got == 0 && errno == ECONNRESET) return false;
      throw Error(fmt::format("reading from {}: {}", peer_, std::strerror(errno)));
    }
  }
  return true;
}

void WireConnection::write_all(std::span<const std::byte> bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno != EINTR) {
      throw Error(fmt::format("writing to {}: {}", peer_, std::strerror(errno)));
    }
  }
}

WireMessage WireConnection::receive() {
  std::byte prefix[kPrefixBytes];
  if (!read_exactly(prefix)) throw ConnectionClosed{};
  const auto header_bytes = static_cast<std::uint32_t>(get_le(prefix, 4));
  const std::uint64_t payload_bytes = get_le(prefix + 4, 8);
  if (header_bytes > kMaxHeaderBytes) {
    throw Error(fmt::format("{} sent a frame header of {} bytes (at most {})", peer_,
                            header_bytes, kMaxHeaderBytes));
  }
  std::string text(header_bytes, '\0');
  if (header_bytes != 0 &&
      !read_exactly(std::as_writable_bytes(std::span(text.data(), text.size())))) {
    throw Error(fmt::format("{} closed its connection inside a frame", peer_));
  }
  WireMessage message;
  message.header = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!message.header.is_object()) {
    throw Error(fmt::format("{} sent a frame whose header is not a JSON object", peer_));
  }
  message.payload.resize(payload_bytes);
  if (payload_bytes != 0 && !read_exactly(message.payload)) {
    throw Error(fmt::format("{} closed its connection inside a frame", peer_));
  }
  return message;
}

void WireConnection::send(const nlohmann::json& header, std::span<const std::byte> payload) {
  const std::string text = header.dump();
  std::byte prefix[kPrefixBytes];
  put_le(prefix, text.size(), 4);
  put_le(prefix + 4, payload.size(), 8);
  write_all(prefix);
  write_all(std::as_bytes(std::span(text.data(), text.size())));
  write_all(payload);
}

}  // namespace ranklab::torch_bridge
