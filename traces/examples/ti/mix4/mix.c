#include <mpi.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
  double out[64], in[64]; float f[32]; int iv[8]; long lv[4]; char c[16];
  for (int i = 0; i < 64; i++) out[i] = r + i;
  MPI_Request req[2];
  MPI_Irecv(in, 64, MPI_DOUBLE, (r + n - 1) % n, 3, MPI_COMM_WORLD, &req[0]);
  MPI_Isend(out, 64, MPI_DOUBLE, (r + 1) % n, 3, MPI_COMM_WORLD, &req[1]);
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  MPI_Request one;
  MPI_Isend(f, 32, MPI_FLOAT, (r + 1) % n, 4, MPI_COMM_WORLD, &one);
  MPI_Recv(f, 32, MPI_FLOAT, (r + n - 1) % n, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&one, MPI_STATUS_IGNORE);
  if (r == 0) { for (int i = 1; i < n; i++) MPI_Recv(iv, 8, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  else MPI_Send(iv, 8, MPI_INT, 0, 5, MPI_COMM_WORLD);
  MPI_Sendrecv(lv, 4, MPI_LONG, (r + 1) % n, 6, lv, 4, MPI_LONG, (r + n - 1) % n, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Reduce(out, in, 8, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
  MPI_Allgather(c, 2, MPI_CHAR, c, 2, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Gather(iv, 1, MPI_INT, iv, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatter(f, 2, MPI_FLOAT, f, 2, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Alltoall(out, 4, MPI_DOUBLE, in, 4, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Bcast(lv, 4, MPI_LONG, 2, MPI_COMM_WORLD);
  long long ll[2]; MPI_Allreduce(ll, ll, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  int counts[16]; for (int i = 0; i < n; i++) counts[i] = 1;
  MPI_Reduce_scatter(out, in, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
