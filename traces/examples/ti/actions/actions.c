#include <mpi.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  int buf[64] = {0}, out[64] = {0};
  MPI_Status st;
  MPI_Request r[4];
  int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
  if (!strcmp(mode, "scan")) {
    MPI_Scan(buf, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(buf, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "waitany")) {
    int idx;
    if (rank == 0) { MPI_Irecv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]); MPI_Irecv(buf+1, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &r[1]);
      MPI_Waitany(2, r, &idx, &st); MPI_Waitany(2, r, &idx, &st); }
    else MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "testall")) {
    int flag = 0;
    if (rank == 0) { MPI_Irecv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]); while (!flag) MPI_Testall(1, r, &flag, MPI_STATUSES_IGNORE); }
    else if (rank == 1) MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "persistent")) {
    if (rank == 0) { MPI_Send_init(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]); for (int i = 0; i < 2; ++i) { MPI_Start(&r[0]); MPI_Wait(&r[0], &st); } MPI_Request_free(&r[0]); }
    else if (rank == 1) { MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st); MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st); }
  } else if (!strcmp(mode, "rs_block")) {
    MPI_Reduce_scatter_block(buf, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "gatherv")) {
    MPI_Gatherv(buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(buf, counts, displs, MPI_INT, out, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(buf, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce_scatter(buf, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "cancel")) {
    if (rank == 0) { MPI_Irecv(buf, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &r[0]); MPI_Cancel(&r[0]); MPI_Wait(&r[0], &st); }
  } else if (!strcmp(mode, "iall")) {
    MPI_Iallgather(buf, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &r[0]);
    MPI_Ialltoall(buf, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
