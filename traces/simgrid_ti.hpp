// SimGrid SMPI time-independent (TI) traces as ranklab traces, so `ranklab replay --format
// simgrid-ti` re-issues an MPI application's recorded communication on the fabric (with
// deadlock detection) and times it with the cost model.
//
// What SMPI writes (`smpirun -trace-ti --cfg=tracing/filename:trace.txt`): trace.txt lists
// one file per rank, relative to itself; with `tracing/smpi/format/ti-one-file:yes` it holds
// the actions themselves. An action is one line `RANK ACTION ARGS...` (ranks of
// MPI_COMM_WORLD from 0; counts in elements; DTYPE an index into SMPI's datatype table):
//   init | finalize | comm_size N | comm_split | comm_dup | location ... | test   (no-ops)
//   compute FLOPS | sleep SECONDS                                  -> compute before the next op
//   send|isend|ssend|issend|bsend|ibsend|rsend|irsend DST TAG COUNT [DTYPE]
//                                           (bsend, ibsend: buffered, never waited for)
//   recv|irecv SRC TAG COUNT [DTYPE]        SRC -333/-555: any source; TAG -444: any tag
//   wait SRC DST TAG | waitall [N]          the rank waits for its open isend/irecv (a wait
//                                           naming none: its oldest nonblocking collective)
//   test SRC DST TAG                        completes the request it names for the leak
//                                           check (MPI records no test of a completed one)
//   testall | testany | testsome            no-ops (TI does not say which request completed)
//   Start ENDPOINT TAG BYTES [DTYPE]        a persistent request posted again: a send to
//                                           ENDPOINT, or (ENDPOINT the rank itself) a
//                                           receive from any source; waited like an isend
//   sendRecv SENDCOUNT DST RECVCOUNT SRC [DT1 [DT2]]   (SMPI records no tags: tag 0)
//   barrier | bcast COUNT [ROOT [DT]] | reduce COUNT COMP [ROOT [DT]] | allreduce COUNT COMP [DT]
//   alltoall|allgather SENDCOUNT RECVCOUNT [DT1 [DT2]] | gather|scatter SEND RECV [ROOT [DT1
//   [DT2]]] (SMPI leaves out a RECVCOUNT of 0: SEND ROOT DT1 DT2) | reducescatter RECVCOUNT x P
//   COMP [DT] (unequal blocks: a reduce to rank 0, then its scatter as messages) | gatherv SEND
//   RECVCOUNTS... [ROOT [DT1 [DT2]]] | scatterv SENDCOUNTS... RECV [ROOT [DT1 [DT2]]] |
//   allgatherv SEND RECVCOUNTS... [DT1 [DT2]] | alltoallv SENDSIZE SENDCOUNTS... RECVSIZE
//   RECVCOUNTS... [DT1 [DT2]] (SMPI writes zeros for counts a rank does not use): the
//   messages they consist of, each pair its own count, in a group `vcollectives`
//   scan|exscan COUNT COMP [DT]             the linear algorithm's messages, rank r to r + 1,
//                                           in that group
//   ibarrier, ibcast, ireduce, iallreduce, iallgather, igather, iscatter, ialltoall,
//   ireducescatter                          the collective, open until waited for
//   waitany | waitsome                      which request completed, TI does not say: its
//                                           requests stay open to the next wait naming them
// Refused, TI recording too little to replay them: Startall (which requests), cancel
// (whether it succeeded; SMPI 3.32 writes none), MPI_Reduce_scatter_block (`reducescatter 0
// 0 DTYPE`: no count), a Start of a derived datatype (its bytes against counts of an
// unknown size). An irecv waited for without any message was cancelled: it becomes
// pending, dropped.
// Collectives run on the world (SMPI's replay does the same); COMP, the reduction's FLOPs,
// becomes compute after it; reductions sum. Datatypes: 0 double (f64), 1 int (i32), 2 char,
// 6 byte (u8), 3 short (2 bytes), 4 long (i64), 5 float (f32), and the rest of SMPI's table
// by size; counts are in elements of their type, whatever it is (SMPI 3.29 and later). A
// message whose two SMPI types differ where ranklab's cannot (integers of the other
// signedness: MPI_UNSIGNED sent, MPI_INT received) is listed in config.type_mismatches. A
// derived type (id -1; SMPI 3.32 writes its count, never its size) replays by count as
// opaque 1-byte elements equal only to a derived type (against another type, or received
// into fewer: config.type_mismatches), config.notes saying the sizes are unknown; only a
// Start of one is refused (its bytes compare with no count). A
// count that makes more than 2^48 of ranklab's elements (2^48 long doubles are 2^52 bytes) is
// refused, as the JSONL reader refuses it.
//
// The result is a trace of format 1.1 (traces/FORMAT.md, "Imported from SimGrid TI"):
// rank_seq in line order, wait points from the waits, messages matched by MPI's rules
// (TraceBuilder; receives keep their own count and type where the message does not fit
// them), compute from compute/sleep lines. A recording that stopped in a deadlock (SMPI
// aborts it) ends with operations that never completed: an unmatched message or incomplete
// collective that is its rank's last action (or still open then) becomes a pending
// operation, `blocked` when that last action waited for it. A send nobody receives or a
// collective another rank never joined that the rank went on past is the program's bug:
// it stays completed, for replay to show the deadlock. Requests open at finalize are listed
// in config.unfinished_requests, but for one a test named and one whose message the other
// side completed (released by MPI_Request_free, unrecorded). A receive gone past without a
// message takes the one an earlier irecv that a wait completed took (that irecv was
// cancelled); without one it, and every malformed line, is a TraceError "FILE:LINE: reason".
#pragma once

#include <filesystem>
#include <string_view>

#include "traces/event.hpp"

namespace ranklab {

/// The largest world a TI trace may describe here (the emulator's tested scale).
inline constexpr int kMaxTiRanks = 65536;

/// Reads a TI trace: the index file smpirun wrote, a directory holding `trace.txt`, or a
/// file of actions (one-file format, or a single rank's file).
Trace read_simgrid_ti(const std::filesystem::path& path);

/// The actions of one file, `name` being what errors call it.
Trace parse_simgrid_ti(std::string_view text, std::string_view name);

}  // namespace ranklab
