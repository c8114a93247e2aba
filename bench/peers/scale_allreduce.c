/*
 * scale_allreduce.c -- the MPI twin of `ranklab run --scenario allreduce --world N --count 1`,
 * for the scale rows of bench/RESULTS.md (bench/compare runs it under SimGrid SMPI).
 *
 * Every rank: x = 1000 * rank, MPI_Allreduce (int64, SUM) of that one element, a check
 * against the closed form 1000 * n(n-1)/2, then one MPI_Barrier: the same work as the
 * ranklab scenario, so the whole run's wall time and peak memory compare directly.
 * Exit status 1 (after MPI_Finalize) if any rank's result is wrong.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, bad, any_bad = 0;
  int64_t x, expected;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  x = 1000 * (int64_t)rank;
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  expected = 1000 * (int64_t)size * (size - 1) / 2;
  bad = x != expected;
  if (bad) fprintf(stderr, "rank %d: all_reduce gave %lld, expected %lld\n", rank, (long long)x,
                   (long long)expected);
  MPI_Barrier(MPI_COMM_WORLD);
  /* Only rank 0 reports; no extra collective, so the work stays one all_reduce + one barrier. */
  if (rank == 0 && !bad) printf("all_reduce of 1 x i64 over %d ranks matches the closed form\n", size);
  any_bad = bad;
  MPI_Finalize();
  return any_bad;
}
