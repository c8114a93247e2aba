// Scratch buffers of the point-to-point collective algorithms, kept from one call to the next.
//
// Why: an algorithm's scratch is as large as its messages (recursive doubling and
// halving-doubling: the whole buffer; ring: two blocks). A fresh std::vector per call zeroes
// it, and above glibc's mmap threshold (32 MiB at most) maps new pages on every call: for an
// all_reduce of 64 MiB per rank over 8 ranks, 131k page faults and about 0.24 s of a 0.42 s
// halving-doubling call on this project's machine (bench/RESULTS.md). Each Backend (one
// rank's view of one group) owns a pool; its buffers are reused, uninitialised, by the next
// call, and freed with the backend.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace ranklab {

/// Not thread-safe: one rank's algorithms use it, one call at a time.
class ScratchPool {
 public:
  /// A buffer of the pool, in use until the lease is destroyed (or moved from). Its bytes
  /// are uninitialised.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { give_back(); }

    std::byte* data() const { return data_; }

   private:
    friend class ScratchPool;
    Lease(ScratchPool* pool, std::size_t index, std::byte* data)
        : pool_(pool), index_(index), data_(data) {}
    void give_back() noexcept;

    ScratchPool* pool_ = nullptr;
    std::size_t index_ = 0;
    std::byte* data_ = nullptr;
  };

  ScratchPool() = default;
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  /// A buffer of at least `bytes` bytes (never null), distinct from every other lease held.
  /// Reuses the smallest free buffer that is large enough, else grows a free one, else adds
  /// one; buffers never shrink.
  Lease take(std::size_t bytes);

  /// Bytes held by the pool's buffers, leased or free.
  std::size_t capacity() const;

 private:
  struct Buffer {
    std::unique_ptr<std::byte[]> data;
    std::size_t size = 0;
    bool leased = false;
  };
  std::vector<Buffer> buffers_;
};

}  // namespace ranklab
