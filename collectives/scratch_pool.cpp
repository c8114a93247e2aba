#include "collectives/scratch_pool.hpp"

#include <algorithm>
#include <utility>

namespace ranklab {

ScratchPool::Lease& ScratchPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    give_back();
    pool_ = std::exchange(other.pool_, nullptr);
    index_ = other.index_;
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

void ScratchPool::Lease::give_back() noexcept {
  if (pool_ != nullptr) pool_->buffers_[index_].leased = false;
  pool_ = nullptr;
  data_ = nullptr;
}

ScratchPool::Lease ScratchPool::take(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  std::size_t best = buffers_.size();     // the smallest free buffer that fits
  std::size_t largest = buffers_.size();  // else the largest free one, to grow
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const Buffer& b = buffers_[i];
    if (b.leased) continue;
    if (b.size >= bytes && (best == buffers_.size() || b.size < buffers_[best].size)) best = i;
    if (largest == buffers_.size() || b.size > buffers_[largest].size) largest = i;
  }
  if (best == buffers_.size()) {
    if (largest == buffers_.size()) {
      buffers_.emplace_back();
      largest = buffers_.size() - 1;
    }
    Buffer& b = buffers_[largest];
    b.data.reset();  // release first: the old and new buffers need not coexist
    b.data = std::make_unique_for_overwrite<std::byte[]>(bytes);
    b.size = bytes;
    best = largest;
  }
  buffers_[best].leased = true;
  return Lease(this, best, buffers_[best].data.get());
}

std::size_t ScratchPool::capacity() const {
  std::size_t total = 0;
  for (const Buffer& b : buffers_) total += b.size;
  return total;
}

}  // namespace ranklab
