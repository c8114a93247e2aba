/* Small MPI programs, one per mode, each with the bug (or the false alarm) its name says. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  int buf[5000] = {0};
  double dbuf[8] = {0};
  MPI_Status st;
  if (!strcmp(mode, "missing_recv")) {
    if (rank == 0) MPI_Send(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "wrong_tag")) {
    if (rank == 0) MPI_Send(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "missing_reduce")) {
    if (rank != 2) MPI_Reduce(buf, buf + 8, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "recv_small")) {
    if (rank == 0) MPI_Send(buf, 5000, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 1000, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "type_mismatch")) {
    if (rank == 0) MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(dbuf, 4, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "bsend_self")) {
    int bsize = 4 * sizeof(int) + MPI_BSEND_OVERHEAD;
    void* b = malloc(bsize);
    MPI_Buffer_attach(b, bsize);
    MPI_Bsend(buf, 4, MPI_INT, rank, 0, MPI_COMM_WORLD);
    MPI_Recv(buf + 8, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &st);
    MPI_Buffer_detach(&b, &bsize);
    free(b);
  } else if (!strcmp(mode, "inplace_gather")) {
    if (rank == 0) MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, buf, 2, MPI_INT, 0, MPI_COMM_WORLD);
    else MPI_Gather(buf, 2, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "anysource_loop")) {
    for (int it = 0; it < 3; ++it) {
      if (rank == 0) {
        for (int i = 1; i < size; ++i) MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
      } else {
        MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (!strcmp(mode, "open_request")) {
    MPI_Request r;
    if (rank == 0) MPI_Irecv(buf, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "derived")) {
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    if (rank == 0) MPI_Send(buf, 2, three, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 6, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
    MPI_Type_free(&three);
  } else if (!strcmp(mode, "derived_same")) {
    /* the same derived datatype on both sides, in a message, a bcast and a gather */
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    if (rank == 0) MPI_Send(buf, 2, three, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 2, three, 0, 0, MPI_COMM_WORLD, &st);
    MPI_Bcast(buf, 1, three, 0, MPI_COMM_WORLD);
    MPI_Gather(buf, 1, three, buf + 100, 1, three, 0, MPI_COMM_WORLD);
    MPI_Type_free(&three);
  } else if (!strcmp(mode, "derived_short")) {
    /* two elements of a derived datatype sent, room for one received */
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    if (rank == 0) MPI_Send(buf, 2, three, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 1, three, 0, 0, MPI_COMM_WORLD, &st);
    MPI_Type_free(&three);
  } else if (!strcmp(mode, "test_loop")) {
    /* requests completed by MPI_Test in a loop, never waited: then one of the same envelope waited */
    MPI_Request r;
    for (int it = 0; it < 3; ++it) {
      int flag = 0;
      if (rank == 0) MPI_Irecv(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
      if (rank == 1) MPI_Isend(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
      if (rank < 2) while (!flag) MPI_Test(&r, &flag, &st);
    }
    if (rank == 0) { MPI_Irecv(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, &st); }
    if (rank == 1) MPI_Send(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "request_free")) {
    /* send requests released by MPI_Request_free once posted, whose messages the receiver
     * completes */
    MPI_Request r;
    if (rank == 0) {
      MPI_Isend(buf, 4, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
      MPI_Request_free(&r);
      MPI_Isend(buf + 4, 4, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
      MPI_Request_free(&r);
    }
    if (rank == 1) {
      MPI_Recv(buf, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
      MPI_Irecv(buf + 4, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(mode, "free_unreceived")) {
    /* both sides release their requests unfinished: nothing ever completes the message */
    MPI_Request r;
    if (rank == 0) { MPI_Isend(buf, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &r); MPI_Request_free(&r); }
    if (rank == 1) { MPI_Irecv(buf, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, &r); MPI_Request_free(&r); }
  } else if (!strcmp(mode, "cancel_test")) {
    /* a receive cancelled, completed by MPI_Test in a loop; the message it would have taken
     * is received later by another */
    MPI_Request r;
    int flag = 0;
    if (rank == 0) {
      MPI_Irecv(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
      MPI_Cancel(&r);
      while (!flag) MPI_Test(&r, &flag, &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) MPI_Send(buf, 4, MPI_INT, 0, 6, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(buf, 4, MPI_INT, 1, 6, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "cancel_reuse")) {
    /* a receive cancelled and waited for; a message of its envelope sent later is received
     * by another */
    MPI_Request r;
    if (rank == 0) {
      MPI_Irecv(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
      MPI_Cancel(&r);
      MPI_Wait(&r, &st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) MPI_Send(buf, 4, MPI_INT, 0, 5, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "nbc_test")) {
    /* nonblocking collectives completed by MPI_Test in a loop, never waited for */
    MPI_Request r;
    int flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    while (!flag) MPI_Test(&r, &flag, &st);
    flag = 0;
    MPI_Iallreduce(buf, buf + 8, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    while (!flag) MPI_Test(&r, &flag, &st);
  } else if (!strcmp(mode, "unsigned_recv")) {
    /* MPI_UNSIGNED sent, MPI_INT received: the same size, another type (record with
     * --cfg=smpi/errors-are-fatal:no, or SMPI aborts before writing rank 1's actions) */
    unsigned ubuf[4] = {0};
    if (rank == 0) MPI_Send(ubuf, 4, MPI_UNSIGNED, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "unsigned_ok")) {
    unsigned ubuf[4] = {0};
    if (rank == 0) MPI_Send(ubuf, 4, MPI_UNSIGNED, 1, 0, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(ubuf, 4, MPI_UNSIGNED, 0, 0, MPI_COMM_WORLD, &st);
    if (rank == 1) MPI_Send(buf, 2, MPI_INT, 2, 1, MPI_COMM_WORLD);
    if (rank == 2) MPI_Recv(buf, 2, MPI_INT, 1, 1, MPI_COMM_WORLD, &st);
  } else if (!strcmp(mode, "nonblocking")) {
    MPI_Request r;
    MPI_Ibcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Iallreduce(buf, buf + 8, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
  }
  MPI_Finalize();
  return 0;
}
