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

constexpr std::size_t kPrefixBytes = 16;
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

/// Takes the descriptors a message's control data passed: the first into `*passed_fd` (when
/// one is wanted and none came yet), every other one closed. False if any was unwanted.
bool take_passed_fds(msghdr& message, int* passed_fd) {
  bool wanted = true;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (passed_fd != nullptr && *passed_fd < 0) {
        *passed_fd = fd;
      } else {
        ::close(fd);
        wanted = false;
      }
    }
  }
  return wanted && (message.msg_flags & MSG_CTRUNC) == 0;
}

}  // namespace

WireConnection::WireConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

WireConnection::~WireConnection() { ::close(fd_); }

bool WireConnection::read_exactly(std::span<std::byte> out, int* passed_fd) {
  std::size_t got = 0;
  while (got < out.size()) {
    iovec part{out.data() + got, out.size() - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd_, &message, MSG_CMSG_CLOEXEC);
    if (n > 0 && !take_passed_fds(message, passed_fd)) {
      throw Error(fmt::format("{} passed a file descriptor where none was expected", peer_));
    }
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
  int passed_fd = -1;
  if (!read_exactly(prefix, &passed_fd)) throw ConnectionClosed{};
  const auto header_bytes = static_cast<std::uint32_t>(get_le(prefix, 4));
  const auto flags = static_cast<std::uint32_t>(get_le(prefix + 4, 4));
  const std::uint64_t payload_bytes = get_le(prefix + 8, 8);
  if ((flags & ~(kPayloadInRegion | kNewRegion)) != 0 ||
      ((flags & kNewRegion) != 0) != (passed_fd >= 0)) {
    if (passed_fd >= 0) ::close(passed_fd);
    throw Error(fmt::format("{} sent a frame with flags {:#x} and {} file descriptor", peer_,
                            flags, passed_fd >= 0 ? "a" : "no"));
  }
  if ((flags & kNewRegion) != 0) {
    region_.reset();  // the process has let go of the old one
    region_ = std::make_unique<SharedRegion>(passed_fd, peer_);
  }
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
  read_payload(message, (flags & kPayloadInRegion) != 0, payload_bytes);
  return message;
}

void WireConnection::read_payload(WireMessage& message, bool in_region, std::uint64_t bytes) {
  if (in_region) {
    if (region_ == nullptr || bytes > region_->bytes().size()) {
      throw Error(fmt::format("{} sent a payload of {} bytes in a shared region of {}", peer_,
                              bytes, region_ == nullptr ? 0 : region_->bytes().size()));
    }
    message.payload = region_->bytes().first(static_cast<std::size_t>(bytes));
    return;
  }
  message.owned.resize(bytes);
  if (bytes != 0 && !read_exactly(message.owned)) {
    throw Error(fmt::format("{} closed its connection inside a frame", peer_));
  }
  message.payload = message.owned;
}

void WireConnection::send(const nlohmann::json& header, std::span<const std::byte> payload) {
  const std::string text = header.dump();
  std::uint32_t flags = 0;
  if (region_ != nullptr && payload.size() >= kRegionMinBytes &&
      payload.size() <= region_->bytes().size()) {
    const std::span<std::byte> region = region_->bytes();
    if (payload.data() != region.data()) {
      std::memmove(region.data(), payload.data(), payload.size());
    }
    flags = kPayloadInRegion;
  }
  std::byte prefix[kPrefixBytes];
  put_le(prefix, text.size(), 4);
  put_le(prefix + 4, flags, 4);
  put_le(prefix + 8, payload.size(), 8);
  write_all(prefix);
  write_all(std::as_bytes(std::span(text.data(), text.size())));
  if (flags == 0) write_all(payload);
}

}  // namespace ranklab::torch_bridge
