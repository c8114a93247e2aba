// The seed's hybrid training step (TP2 PP2 DP2, B8 S16 H32 I64 L4, float32) on 8 MPI
// processes through ranklab's MPI backend, timed as step_bench.cpp times it on the emulator
// and shared/reference/torch/parallel_reference.py times PyTorch's: barrier, step, barrier,
// per sample; rank 0's MPI_Wtime; median over the samples (issue 12 §6: against PyTorch Gloo
// on 8 processes, bench/RESULTS.md).
//
//   mpirun -np 8 mpi_step_bench [STEPS] [ALGO]   ALGO: direct (default) or mpi
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/mpi/mpi_session.hpp"
#include "bench/seed_step.hpp"

int main(int argc, char** argv) {
  using namespace ranklab;
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string algo = argc > 2 ? argv[2] : "direct";
  constexpr int kWarmup = 3;  // as the reference's --warmup default
  using bench::kSeedLayout;
  MpiSession session(argc, argv, {.library_collectives = algo == "mpi"});
  if (session.size() != kSeedLayout.world_size()) {
    if (session.rank() == 0) std::fprintf(stderr, "mpi_step_bench needs mpirun -np 8\n");
    return 1;
  }
  const Problem<float> problem = make_problem<float>(ModelShape{}, kSeedLayout.dp);
  Communicator world = session.world();
  bench::SeedStep step(world, problem);
  for (int i = 0; i < kWarmup; ++i) step();
  std::vector<double> samples;
  for (int i = 0; i < steps; ++i) {
    world.barrier();
    const double start = MPI_Wtime();
    step();
    world.barrier();
    samples.push_back(MPI_Wtime() - start);
  }
  if (session.rank() == 0) {
    std::sort(samples.begin(), samples.end());
    std::printf("RESULT op=seed_step backend=mpi algo=%s ranks=8 steps=%d med_us=%.1f min_us=%.1f "
                "max_us=%.1f\n",
                algo.c_str(), steps, 1e6 * samples[samples.size() / 2], 1e6 * samples.front(),
                1e6 * samples.back());
  }
  return 0;
}
