#include "collectives/algorithms/fold.hpp"

#include "collectives/algorithms/chunks.hpp"

namespace ranklab {

PowerOfTwoFold::PowerOfTwoFold(int rank, int size)
    : rank_(rank), pof2_(floor_pow2(size)), rem_(size - pof2_) {
  if (rank < 2 * rem_) {
    newrank_ = rank % 2 == 0 ? -1 : rank / 2;
  } else {
    newrank_ = rank - rem_;
  }
}

void PowerOfTwoFold::fold_in(PeerLink& link, std::byte* data, std::size_t count,
                             std::byte* scratch) const {
  if (rank_ >= 2 * rem_) return;
  if (rank_ % 2 == 0) {
    link.send(data, count, rank_ + 1);
  } else {
    link.recv(scratch, count, rank_ - 1);
    link.reduce_after(data, scratch, count);  // the even (lower) rank's data goes first
  }
}

void PowerOfTwoFold::fold_out(PeerLink& link, std::byte* data, std::size_t count) const {
  if (rank_ >= 2 * rem_) return;
  if (rank_ % 2 == 0) {
    link.recv(data, count, rank_ + 1);
  } else {
    link.send(data, count, rank_ - 1);
  }
}

}  // namespace ranklab
