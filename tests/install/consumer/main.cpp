// Four ranks all_reduce their rank numbers; prints the sum and exits 0 when it is 6.
#include <cstdio>
#include <vector>

#include <ranklab/collectives/cluster.hpp>

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
