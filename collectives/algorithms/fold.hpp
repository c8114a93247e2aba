// The fold that lets power-of-two schedules (recursive doubling, recursive halving) run on
// any group size (Thakur, Rabenseifner & Gropp 2005, sec. 4; MPICH's allreduce). With pof2
// the largest power of two <= p and rem = p - pof2, the first 2*rem ranks pair up: each even
// rank r sends its whole buffer to r+1 and sits out; the odd rank reduces it in (the even
// rank's data first). The pof2 remaining ranks are renumbered 0..pof2-1 (`newrank`), run the
// power-of-two schedule, and at the end each odd rank r < 2*rem sends the result back to r-1.
#pragma once

#include <cstddef>

#include "collectives/algorithms/peer_link.hpp"

namespace ranklab {

class PowerOfTwoFold {
 public:
  PowerOfTwoFold(int rank, int size);

  int pof2() const { return pof2_; }
  /// This rank's number in the power-of-two schedule, or -1 if it sits out.
  int newrank() const { return newrank_; }
  /// The group rank behind a newrank.
  int rank_of(int newrank) const { return newrank < rem_ ? 2 * newrank + 1 : newrank + rem_; }

  /// Step 1: the extra ranks hand their `count` elements at `data` to their neighbours.
  /// `scratch` holds at least `count` elements.
  void fold_in(PeerLink& link, std::byte* data, std::size_t count, std::byte* scratch) const;
  /// Last step: the ranks that sat out receive the result.
  void fold_out(PeerLink& link, std::byte* data, std::size_t count) const;

 private:
  int rank_;
  int pof2_;
  int rem_;
  int newrank_;
};

}  // namespace ranklab
