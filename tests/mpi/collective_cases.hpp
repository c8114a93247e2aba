// One rank program for both backends: every collective with every algorithm that implements
// it, every dtype and reduce op, blocking and not. Each call's result (the bytes this rank
// holds afterwards) is recorded, so a process of the MPI job can compare its rank's results
// with the same rank's on the emulator.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "collectives/communicator.hpp"

namespace ranklab::testing {

struct CollectiveCase {
  OpKind op = OpKind::all_reduce;
  Algorithm algorithm = Algorithm::direct;
  DataType dtype = DataType::f32;
  ReduceOp reduce_op = ReduceOp::sum;
  std::size_t count = 0;  ///< the signature's per-rank unit
  int root = 0;
  bool nonblocking = false;

  std::string name() const;
};

/// Every case for a world of `world` ranks.
std::vector<CollectiveCase> collective_cases(int world);

/// Runs `c` on `comm` and returns what this rank holds afterwards.
std::vector<std::byte> run_case(Communicator& comm, const CollectiveCase& c);

/// Several non-blocking direct collectives in flight at once, waited for in an order that
/// depends on the rank, interleaved with a point-to-point ring all_reduce; their results.
std::vector<std::byte> run_overlapping(Communicator& comm);

/// Groups: split into even and odd ranks, a reversed new_group, collectives in each.
std::vector<std::byte> run_groups(Communicator& comm);

}  // namespace ranklab::testing
