// Every process of the job all_reduces its rank over ranklab's MPI backend; rank 0 prints the
// sum, and every process exits 0 when it is 0 + 1 + ... + (size - 1).
#include <cstdio>
#include <vector>

#include <ranklab/collectives/mpi/mpi_session.hpp>

int main(int argc, char** argv) {
  ranklab::MpiSession session(argc, argv);
  ranklab::Communicator world = session.world();
  std::vector<int> value{world.rank()};
  world.all_reduce(std::span(value));
  const int want = world.size() * (world.size() - 1) / 2;
  if (world.rank() == 0) std::printf("mpi sum %d of %d processes\n", value[0], world.size());
  return value[0] == want ? 0 : 1;
}
