#include "collectives/cluster.hpp"

#include "collectives/emulator_backend.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"

namespace ranklab {

// Making an Engine checks the options, so a bad configuration fails here, at construction;
// each run makes its own. The Engine stays out of cluster.hpp, and RankContext with it.
Cluster::Cluster(ClusterOptions options, Algorithm algorithm)
    : options_(Engine(std::move(options)).options()), algorithm_(algorithm) {}

RunReport Cluster::run(const RankProgram& program) {
  return Engine(options_).run(
      [&](RankContext& context) { run_on_world(context, algorithm_, program); });
}

}  // namespace ranklab
