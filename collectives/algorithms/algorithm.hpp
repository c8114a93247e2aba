// The collective algorithms that are written as point-to-point message patterns. Each lives
// in its own file, <collective>_<algorithm>.cpp, with its schedule and reference on top.
#pragma once

#include "collectives/options.hpp"
#include "emulator/collective_args.hpp"

namespace ranklab {

class Communicator;

/// Runs `args` over `comm` with `algorithm` (never `direct` or `automatic`), as sends and
/// receives. Throws UsageError naming both if the algorithm does not implement args.op.
void run_p2p_algorithm(Communicator& comm, Algorithm algorithm, const CollectiveArgs& args);

}  // namespace ranklab
