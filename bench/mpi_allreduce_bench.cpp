// all_reduce through ranklab's MPI backend, measured as the raw Open MPI benchmark
// (shared/bench/mpi/allreduce_bench.c) measures MPI_Allreduce: per iteration the slowest
// rank's MPI_Wtime span, median over iterations, printed by rank 0 in its RESULT format.
// So `mpirun -np 8 mpi_allreduce_bench COUNT ITERS ALGO` and the raw program's lines compare
// directly (issue 12 §6). Each iteration also times the raw MPI_Allreduce on the same buffer
// (in place), alternating with ranklab's, so that the two medians of one run (op=raw_...)
// compare even on a machine whose load swings more than the difference between them.
//
//   mpi_allreduce_bench COUNT ITERS [ALGO]   ALGO: mpi (MPI's own, the default) or direct
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/mpi/mpi_session.hpp"

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 1;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 100;
  const std::string algo = argc > 3 ? argv[3] : "mpi";
  const int warmup = std::max(1, iters / 10);
  ranklab::MpiSession session(argc, argv, {.library_collectives = algo == "mpi"});
  ranklab::Communicator world = session.world();
  std::vector<float> data(static_cast<std::size_t>(count), 1.0f);
  std::vector<double> times(static_cast<std::size_t>(iters));
  std::vector<double> raw_times(static_cast<std::size_t>(iters));
  for (int i = 0; i < warmup; ++i) {
    std::fill(data.begin(), data.end(), 1.0f);
    world.all_reduce(std::span(data));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters; ++i) {
    std::fill(data.begin(), data.end(), 1.0f);  // in place, so refilled (untimed)
    const double start = MPI_Wtime();
    world.all_reduce(std::span(data));
    times[static_cast<std::size_t>(i)] = MPI_Wtime() - start;
    std::fill(data.begin(), data.end(), 1.0f);
    const double raw_start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    raw_times[static_cast<std::size_t>(i)] = MPI_Wtime() - raw_start;
  }
  std::fill(data.begin(), data.end(), 1.0f);
  world.all_reduce(std::span(data));
  if (data[0] != static_cast<float>(world.size())) {
    std::fprintf(stderr, "ERROR rank %d: all_reduce gave %f, not %d\n", world.rank(), data[0],
                 world.size());
    return 1;
  }
  const auto report = [&](const char* op, std::vector<double>& samples) {
    std::vector<double> slowest(samples.size());
    MPI_Reduce(samples.data(), slowest.data(), iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (world.rank() != 0) return;
    std::sort(slowest.begin(), slowest.end());
    double mean = 0;
    for (double t : slowest) mean += t;
    mean /= iters;
    std::printf("RESULT op=%s ranks=%d count=%d bytes=%zu iters=%d wtime_med_us=%.3f "
                "wtime_mean_us=%.3f wtime_min_us=%.3f wtime_max_us=%.3f\n",
                op, world.size(), count, sizeof(float) * static_cast<std::size_t>(count), iters,
                1e6 * slowest[slowest.size() / 2], 1e6 * mean, 1e6 * slowest.front(),
                1e6 * slowest.back());
  };
  report(("ranklab_allreduce_" + algo).c_str(), times);
  report("raw_allreduce_in_place", raw_times);
  return 0;
}
