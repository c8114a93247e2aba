#include "collectives/cluster.hpp"

#include <chrono>
#include <memory>

#include "collectives/emulator_backend.hpp"
#include "emulator/engine.hpp"
#include "emulator/rank.hpp"
#include "traces/sink.hpp"

namespace ranklab {

// Making an Engine checks the options, so a bad configuration fails here, at construction;
// each run makes its own. The Engine stays out of cluster.hpp, and RankContext with it.
Cluster::Cluster(ClusterOptions options, Algorithm algorithm)
    : options_(Engine(std::move(options)).options()), algorithm_(algorithm) {}

RunReport Cluster::run(const RankProgram& program) {
  return Engine(options_).run(
      [&](RankContext& context) { run_on_world(context, algorithm_, program); });
}

EmulatorLauncher::EmulatorLauncher(ClusterOptions options)
    : options_(Engine(std::move(options)).options()) {}

// Each run gets a copy of the options: the launcher can run again, with a fresh sink.

Launched EmulatorLauncher::launch(const LaunchOptions& options, const GatheringProgram& program,
                                  bool gather) {
  ClusterOptions cluster_options = options_;
  std::shared_ptr<MemorySink> sink;
  if (options.record) {
    sink = std::make_shared<MemorySink>();
    cluster_options.trace_sink = sink;
    cluster_options.trace_config = options.trace_config;
  }
  Launched out;
  if (gather) out.results.resize(static_cast<std::size_t>(options_.world_size));
  const auto start = std::chrono::steady_clock::now();
  // As Cluster::run runs: the options were checked once, when this launcher was made.
  const Cluster::RankProgram rank_program = [&](Communicator& world) {
    // Each rank writes only its own slot, so threads never share an element.
    std::string bytes = program(world);
    if (gather) out.results[static_cast<std::size_t>(world.rank())] = std::move(bytes);
  };
  out.report = Engine(std::move(cluster_options)).run([&](RankContext& context) {
    run_on_world(context, options.algorithm, rank_program);
  });
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count();
  if (sink) out.trace = sink->take();  // a million ranks' events: moved, not copied
  return out;
}

}  // namespace ranklab
