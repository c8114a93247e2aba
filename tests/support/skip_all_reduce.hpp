// Issue 28 §1's classic bug as a rank program, for the tests of every backend and input that
// must blame the rank whose call differs: after a first all_reduce that every rank makes,
// rank 0 all-reduces its loss (1 element) for a log line the others never make, and every
// rank then all-reduces its gradients (8 elements). Rank 0 is the odd one, 1 rank against
// the rest, whichever rank reaches the call first.
#pragma once

#include <span>
#include <vector>

#include "collectives/communicator.hpp"

namespace ranklab::testing {

inline void skip_all_reduce(Communicator& world) {
  std::vector<float> warmup(4, 1.0f);
  world.all_reduce(std::span(warmup));
  if (world.rank() == 0) {
    std::vector<float> loss(1, 1.0f);
    world.all_reduce(std::span(loss));  // only rank 0 calls this
  }
  std::vector<float> grads(8, 1.0f);
  world.all_reduce(std::span(grads));
}

}  // namespace ranklab::testing
