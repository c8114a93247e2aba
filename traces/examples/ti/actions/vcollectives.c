#include <mpi.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int buf[64] = {0}, out[64] = {0};
  int counts[3] = {1, 2, 3}, displs[3] = {0, 1, 3};
  MPI_Gatherv(buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(buf, counts, displs, MPI_INT, out, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
  int sc[3], rc[3], sd[3], rd[3];
  for (int j = 0; j < 3; ++j) { sc[j] = rank + j + 1; rc[j] = rank + j + 1; sd[j] = 10 * j; rd[j] = 10 * j; }
  MPI_Alltoallv(buf, sc, sd, MPI_INT, out, rc, rd, MPI_INT, MPI_COMM_WORLD);
  MPI_Reduce_scatter(buf, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
