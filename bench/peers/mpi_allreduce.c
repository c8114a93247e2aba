/*
 * mpi_allreduce.c -- the raw Open MPI twin of bench/mpi_allreduce_bench.cpp, for the MPI rows
 * of bench/RESULTS.md (bench/compare's `mpi` section runs both with the same mpirun flags).
 *
 *   mpirun -np 8 mpi_allreduce COUNT ITERS
 *
 * The same calls as ranklab's all_reduce of COUNT floats with `--algo mpi`: an in-place
 * MPI_Allreduce (MPI_FLOAT, MPI_SUM) on MPI_COMM_WORLD, the buffer refilled with ones before
 * each call (untimed), ITERS/10 (>= 1) untimed calls first. Timed as the shared MPI benchmark
 * (../shared/bench/mpi/allreduce_bench.c) times it: an MPI_Barrier before the loop, each
 * iteration's MPI_Wtime span on every rank, the slowest rank's per iteration (MPI_MAX), then
 * rank 0 prints the median, mean, min and max over iterations in the same RESULT format:
 *
 *   RESULT op=allreduce ranks=8 count=1 bytes=4 iters=1000 wtime_med_us=.. wtime_mean_us=..
 *          wtime_min_us=.. wtime_max_us=..
 *
 * Exit status 1 if the final result is not the number of ranks.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void fill(float *data, int count) {
  int i;
  for (i = 0; i < count; i++) data[i] = 1.0f;
}

int main(int argc, char **argv) {
  int rank, size, i, count, iters, warmup, bad;
  float *data;
  double *times, *slowest = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  count = argc > 1 ? atoi(argv[1]) : 1;
  iters = argc > 2 ? atoi(argv[2]) : 100;
  if (count < 1) count = 1;
  if (iters < 1) iters = 1;
  warmup = iters / 10 > 0 ? iters / 10 : 1;
  data = (float *)malloc(sizeof(float) * (size_t)count);
  times = (double *)calloc((size_t)iters, sizeof(double));
  if (rank == 0) slowest = (double *)calloc((size_t)iters, sizeof(double));

  for (i = 0; i < warmup; i++) {
    fill(data, count);
    MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (i = 0; i < iters; i++) {
    double start;
    fill(data, count);
    start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    times[i] = MPI_Wtime() - start;
  }
  bad = data[0] != (float)size || data[count - 1] != (float)size;
  if (bad) fprintf(stderr, "ERROR rank %d: all_reduce gave %f, not %d\n", rank, data[0], size);

  MPI_Reduce(times, slowest, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double mean = 0;
    qsort(slowest, (size_t)iters, sizeof(double), cmp_double);
    for (i = 0; i < iters; i++) mean += slowest[i];
    mean /= iters;
    printf("RESULT op=allreduce ranks=%d count=%d bytes=%ld iters=%d wtime_med_us=%.3f "
           "wtime_mean_us=%.3f wtime_min_us=%.3f wtime_max_us=%.3f\n",
           size, count, (long)count * (long)sizeof(float), iters, 1e6 * slowest[iters / 2],
           1e6 * mean, 1e6 * slowest[0], 1e6 * slowest[iters - 1]);
    fflush(stdout);
  }
  free(data);
  free(times);
  free(slowest);
  MPI_Finalize();
  return bad;
}
