#include "collectives/cluster.hpp"

#include "collectives/emulator_backend.hpp"
#include "emulator/rank.hpp"

namespace ranklab {

Cluster::Cluster(ClusterOptions options, Algorithm algorithm)
    : engine_(std::move(options)), algorithm_(algorithm) {}

RunReport Cluster::run(const RankProgram& program) {
  return engine_.run([&](RankContext& context) {
    Communicator world(make_emulator_backend(context, context.world()), algorithm_);
    program(world);
  });
}

}  // namespace ranklab
