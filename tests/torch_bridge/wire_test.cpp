// The coordinator's side of the bridge's wire (backends/torch/wire.hpp) against a process's
// side written here as python/ranklab_torch/wire.py writes frames: inline payloads, payloads
// in a shared region (which grows, is answered in place, and serves both ways), and the
// broken frames a foreign or buggy client could send, each refused in one Error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/torch/wire.hpp"
#include "traces/error.hpp"

namespace ranklab::torch_bridge {
namespace {

/// The process's side: a socket and, once made, its region (mapped here too).
class ProcessSide {
 public:
  explicit ProcessSide(int fd) : fd_(fd) {}
  ~ProcessSide() {
    unmap();
    ::close(fd_);
  }

  /// A memfd of `size` bytes, sealed against shrinking unless `sealed` is false; mapped here.
  int make_region(std::size_t size, bool sealed = true) {
    const int fd = ::memfd_create("wire-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    if (sealed) {
      EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    }
    unmap();
    region_ = static_cast<std::byte*>(
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    region_size_ = size;
    return fd;
  }

  /// Sends one frame: `flags` in the prefix, `passed_fd` (if >= 0) as SCM_RIGHTS, the
  /// payload after the header unless the flags put it in the region.
  void send(const std::string& header, const std::vector<std::byte>& payload, std::uint32_t flags,
            int passed_fd = -1) {
    std::vector<std::byte> frame(16);
    put(frame.data(), header.size(), 4);
    put(frame.data() + 4, flags, 4);
    put(frame.data() + 8, payload.size(), 8);
    for (const char c : header) frame.push_back(static_cast<std::byte>(c));
    if ((flags & kPayloadInRegion) != 0) {
      std::memcpy(region_, payload.data(), payload.size());
    } else {
      frame.insert(frame.end(), payload.begin(), payload.end());
    }
    iovec part{frame.data(), frame.size()};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (passed_fd >= 0) {
      message.msg_control = control;
      message.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&message);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &passed_fd, sizeof(int));
    }
    ASSERT_EQ(::sendmsg(fd_, &message, 0), static_cast<ssize_t>(frame.size()));
    if (passed_fd >= 0) ::close(passed_fd);
  }

  /// A frame whose prefix says `bytes` bytes lie in the region, whatever the region is.
  void announce_in_region(std::uint64_t bytes) {
    std::vector<std::byte> frame(18);
    put(frame.data(), 2, 4);
    put(frame.data() + 4, kPayloadInRegion, 4);
    put(frame.data() + 8, bytes, 8);
    frame[16] = std::byte{'{'};
    frame[17] = std::byte{'}'};
    ASSERT_EQ(::send(fd_, frame.data(), frame.size(), 0), 18);
  }

  /// The next answer's flags and payload (read from the region where the flags say so).
  std::pair<std::uint32_t, std::vector<std::byte>> receive() {
    std::byte prefix[16];
    read_exactly(prefix, sizeof(prefix));
    const auto header_bytes = get(prefix, 4);
    const auto flags = static_cast<std::uint32_t>(get(prefix + 4, 4));
    const auto payload_bytes = get(prefix + 8, 8);
    std::vector<std::byte> header(header_bytes);
    read_exactly(header.data(), header.size());
    std::vector<std::byte> payload(payload_bytes);
    if ((flags & kPayloadInRegion) != 0) {
      std::memcpy(payload.data(), region_, payload.size());
    } else {
      read_exactly(payload.data(), payload.size());
    }
    return {flags, payload};
  }

 private:
  static void put(std::byte* out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
  }
  static std::uint64_t get(const std::byte* in, int bytes) {
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= std::uint64_t(std::to_integer<unsigned>(in[i])) << (8 * i);
    return value;
  }
  void read_exactly(std::byte* out, std::size_t size) {
    for (std::size_t got = 0; got < size;) {
      const ssize_t n = ::recv(fd_, out + got, size - got, 0);
      ASSERT_GT(n, 0);
      got += static_cast<std::size_t>(n);
    }
  }
  void unmap() {
    if (region_ != nullptr) ::munmap(region_, region_size_);
    region_ = nullptr;
  }

  int fd_;
  std::byte* region_ = nullptr;
  std::size_t region_size_ = 0;
};

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 131 + seed) % 251);
  return bytes;
}

std::vector<std::byte> as_vector(std::span<const std::byte> bytes) {
  return {bytes.begin(), bytes.end()};
}

class WireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    coordinator_ = std::make_unique<WireConnection>(fds[0], "rank 3's process");
    process_ = std::make_unique<ProcessSide>(fds[1]);
  }

  std::unique_ptr<WireConnection> coordinator_;
  std::unique_ptr<ProcessSide> process_;
};

TEST_F(WireTest, SmallPayloadsGoThroughTheSocketBothWays) {
  const auto call = pattern(1000, 1);
  process_->send(R"({"op":"all_reduce"})", call, 0);
  const WireMessage message = coordinator_->receive();
  EXPECT_EQ(message.header.at("op"), "all_reduce");
  EXPECT_EQ(as_vector(message.payload), call);
  coordinator_->send({{"done", true}}, message.payload);
  const auto [flags, answer] = process_->receive();
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(answer, call);
}

// The shapes of the calls the bridge makes: an answer as large as its call, answered in
// place (the all_reduce computed where the payload lies), then one larger than the call
// (an all_gather), then a region that grows and replaces the first.
TEST_F(WireTest, LargePayloadsGoThroughTheRegionWhichGrows) {
  for (const std::size_t size : {kRegionMinBytes, std::size_t{3} << 20}) {
    const auto call = pattern(size, static_cast<unsigned>(size));
    process_->send("{}", call, kPayloadInRegion | kNewRegion, process_->make_region(4 * size));
    WireMessage message = coordinator_->receive();
    ASSERT_EQ(as_vector(message.payload), call);
    for (auto& byte : message.payload) byte = ~byte;  // answered in place
    coordinator_->send({}, message.payload);
    auto [flags, answer] = process_->receive();
    EXPECT_EQ(flags, kPayloadInRegion);
    for (auto& byte : answer) byte = ~byte;
    EXPECT_EQ(answer, call);

    const auto gathered = pattern(4 * size, 7);  // the answer four times the call
    process_->send("{}", call, kPayloadInRegion);
    message = coordinator_->receive();
    EXPECT_EQ(as_vector(message.payload), call);
    coordinator_->send({}, gathered);
    std::tie(flags, answer) = process_->receive();
    EXPECT_EQ(flags, kPayloadInRegion);
    EXPECT_EQ(answer, gathered);
  }
}

TEST_F(WireTest, AnAnswerLargerThanTheRegionGoesThroughTheSocket) {
  process_->send("{}", pattern(kRegionMinBytes, 2), kPayloadInRegion | kNewRegion,
                 process_->make_region(kRegionMinBytes));
  const WireMessage message = coordinator_->receive();
  const auto larger = pattern(2 * kRegionMinBytes, 3);
  coordinator_->send({}, larger);
  const auto [flags, answer] = process_->receive();
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(answer, larger);
}

void expect_refused(WireConnection& coordinator, const std::string& words) {
  try {
    (void)coordinator.receive();
    FAIL() << "the frame was accepted; expected an error saying '" << words << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3's process"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST_F(WireTest, BrokenRegionFramesAreRefused) {
  process_->send("{}", {}, kNewRegion);  // a new region without its descriptor
  expect_refused(*coordinator_, "flags 0x2 and no file descriptor");
}

TEST_F(WireTest, ADescriptorWithoutTheFlagIsRefused) {
  process_->send("{}", {}, 0, process_->make_region(kRegionMinBytes));
  expect_refused(*coordinator_, "flags 0x0 and a file descriptor");
}

TEST_F(WireTest, UnknownFlagsAreRefused) {
  process_->send("{}", {}, 8);
  expect_refused(*coordinator_, "flags 0x8");
}

TEST_F(WireTest, AnUnsealedRegionIsRefused) {
  process_->send("{}", {}, kNewRegion, process_->make_region(kRegionMinBytes, /*sealed=*/false));
  expect_refused(*coordinator_, "not a sealed, non-empty memfd");
}

TEST_F(WireTest, APayloadLargerThanItsRegionIsRefused) {
  process_->send("{}", {}, kNewRegion, process_->make_region(kRegionMinBytes));
  (void)coordinator_->receive();
  process_->announce_in_region(2 * kRegionMinBytes);
  expect_refused(*coordinator_, "a payload of 131072 bytes in a shared region of 65536");
}

TEST_F(WireTest, APayloadInARegionNeverPassedIsRefused) {
  process_->announce_in_region(16);
  expect_refused(*coordinator_, "a payload of 16 bytes in a shared region of 0");
}

}  // namespace
}  // namespace ranklab::torch_bridge
