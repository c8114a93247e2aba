#include "backends/torch/shared_region.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traces/error.hpp"

namespace ranklab::torch_bridge {

SharedRegion::SharedRegion(int fd, const std::string& peer) {
  struct stat status {};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  const bool sized = ::fstat(fd, &status) == 0;
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0 || !sized || status.st_size <= 0) {
    ::close(fd);
    throw Error(fmt::format("{} passed a payload region that is not a sealed, non-empty memfd",
                            peer));
  }
  size_ = static_cast<std::size_t>(status.st_size);
  void* mapped = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) {
    throw Error(fmt::format("mapping {}'s payload region of {} bytes: {}", peer, size_,
                            std::strerror(mmap_errno)));
  }
  data_ = static_cast<std::byte*>(mapped);
}

SharedRegion::~SharedRegion() { ::munmap(data_, size_); }

}  // namespace ranklab::torch_bridge
