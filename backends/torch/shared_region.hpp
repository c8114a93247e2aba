// A process's shared payload region as the coordinator maps it: a sealed memfd the process
// created and passed over its Unix socket (SCM_RIGHTS), so that a large tensor's bytes are
// written once into memory both sides map instead of streaming through the socket.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace ranklab::torch_bridge {

class SharedRegion {
 public:
  /// Maps all of `fd` (and closes it). The process must have sealed its size
  /// (F_SEAL_SHRINK): a region that could shrink under the coordinator would fault it.
  /// Throws Error naming `peer`.
  SharedRegion(int fd, const std::string& peer);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  std::span<std::byte> bytes() const { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace ranklab::torch_bridge
