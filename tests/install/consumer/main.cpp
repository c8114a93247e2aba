// Four ranks all_reduce their rank numbers; prints the sum and exits 0 when it is 6.
#include <cstdio>
#include <vector>

#include <ranklab/collectives/cluster.hpp>
#include <ranklab/model/shape.hpp>

// The package's only include root is include/: ranklab's modules are not top-level folders
// on the user's path (a user's own "model/shape.hpp" must not meet ranklab's).
#if __has_include("model/shape.hpp") || __has_include("traces/types.hpp")
#error "the package exports include/ranklab as an include root"
#endif

int main() {
  ranklab::Cluster cluster({.world_size = 4});
  int sum = -1;
  const ranklab::RunReport report = cluster.run([&](ranklab::Communicator& world) {
    std::vector<int> value{world.rank()};
    world.all_reduce(std::span(value));
    if (world.rank() == 0) sum = value[0];
  });
  std::printf("status %s, sum %d\n", ranklab::to_string(report.status), sum);
  return report.ok() && sum == 6 ? 0 : 1;
}
