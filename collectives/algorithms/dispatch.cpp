// Which point-to-point algorithm implements which collective.
#include "collectives/algorithms/algorithm.hpp"
#include "collectives/communicator.hpp"
#include "emulator/errors.hpp"

namespace ranklab {

void run_p2p_algorithm(Communicator& comm, Algorithm algorithm, const CollectiveArgs& args) {
  (void)comm;
  throw UsageError(fmt::format("algorithm {} does not implement {}", to_string(algorithm),
                               to_string(args.op)));
}

}  // namespace ranklab
