// A native collective on MPI as at most two MPI collectives with a local step between them.
// The `direct` algorithm must give the emulator's results bit for bit, so it reduces in
// ascending group rank itself: a first stage moves every member's block j to member j
// (MPI_Alltoallv), the local step reduces the p operands in rank order, a second stage
// hands the blocks out (MPI_Allgatherv, MPI_Gatherv). The `mpi` algorithm is one call to
// MPI's own collective. Plans run blocking (one call, no handle) or staged (a Work that
// the progress engine advances, detail/progress.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/collective_args.hpp"

namespace ranklab::mpi_detail {

struct GroupState;

/// One collective call's stages. `first` and `second` post (blocking == false) or run
/// (blocking == true) one MPI collective and return its error code; `second` runs on the
/// group's second-stage communicator, in call order (progress.hpp says why).
struct CollectivePlan {
  using Stage = std::function<int(bool blocking, MPI_Request* request)>;
  Stage first;
  std::function<void()> local;  ///< between the stages (or after `first` alone); may be empty
  Stage second;                 ///< may be empty
  std::string what;             ///< `all_reduce via direct in tp[0,1]`, for error messages

  // Buffers the stages use, owned by the plan so that they live as long as the call.
  std::vector<std::byte> scratch;
  std::vector<int> counts, displs, counts2, displs2;
};

/// The plan of `args` (shape-checked: `signature`) on `group` as its member.
/// `library`: MPI's own collectives (`--algo mpi`); otherwise `direct`, bitwise the emulator's.
std::unique_ptr<CollectivePlan> make_plan(const GroupState& group, const CollectiveArgs& args,
                                          const CollectiveSignature& signature, bool library);

}  // namespace ranklab::mpi_detail
