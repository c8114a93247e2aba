#!/usr/bin/env python3
"""Writes the NCCL debug log examples of traces/examples/nccl/.

These logs were WRITTEN FROM NCCL's SOURCE, not recorded: no GPU or NCCL was at hand. They
follow what NCCL 2.30.7 (NVIDIA/nccl, tag v2.30.7-1) prints with
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL:
  prefix       src/debug.cc      "%s:%d:%d " hostname, pid, tid, then "[%d] NCCL INFO " cudaDev
  Init START   src/init.cc       "[Rank %d] %s comm %p rank %d nranks %d cudaDev %d nvmlDev %d
                                  busId %lx commId 0x%llx - Init START"
  Init COMPLETE src/init.cc      "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
                                  commId 0x%llx - Init COMPLETE", and for ncclCommSplit
                                 "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
                                  parent %p childCount %d color %d key %d - Init COMPLETE"
  operation    src/enqueue.cc    "%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d
                                  op %d root %d comm %p [nranks=%d] stream %p" (ncclEnqueueCheck;
                                  %s as src/collectives.cc names it: AllReduce, Send, ...)
opCount is the communicator's launch counter (src/proxy.cc, ncclProxyStart): every operation
enqueued in one ncclGroupStart/End prints the same value, and it advances once per launch
(these jobs use the network, so it advances). datatype and op are nccl.h's enums
(7 ncclFloat32, 9 ncclBfloat16; 0 ncclSum, 2 ncclMax). Other INIT lines (network, channels,
timings) are mixed in as NCCL prints them; ranklab skips them.

Each case is a 4-rank job on two hosts, one process per GPU, with a world communicator and a
split into two tensor-parallel pairs (color = rank / 2):
  healthy/          broadcast, all_reduces (world and TP), a pipeline exchange as one NCCL
                    group (both ranks send first: legal in a group), all_gather,
                    reduce_scatter, an all-to-all as grouped Send/Recv including self
  missing_rank/     rank 3 never enqueues the third world all_reduce; ranks 0-2 hang in it and
                    enqueue one more (NCCL calls return at once)
  count_mismatch/   rank 3's third all_reduce has 1000 elements where the others have 1024
  dtype_mismatch/   rank 2's is ncclFloat32 where the others' are ncclBfloat16
  op_mismatch/      rank 1 reduces with ncclMax where the others sum
  root_mismatch/    rank 3 takes root 1 for the broadcast where the others take root 0
  send_recv_cycle/  pipeline stages 0 and 1 both ncclSend before they ncclRecv, each in its
                    own launch (no group): each send waits for the other's receive
  interleaved/      the missing_rank job as one file: all four processes' lines interleaved,
                    as a launcher's combined output prints them
Per-process files are named as NCCL_DEBUG_FILE=nccl.%h.%p names them.

Run it from anywhere: python3 traces/examples/nccl/make_examples.py (deterministic output).
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 4
HOSTS = ["node-a", "node-b"]
BF16, F32 = 9, 7
SUM, MAX = 0, 2


class Rank:
    """One process (one GPU): its lines in order, its communicators and their opCounts."""

    def __init__(self, rank):
        self.rank = rank
        self.host = HOSTS[rank // 2]
        self.pid = 4100 + 17 * rank
        self.dev = rank % 2
        self.lines = []
        self.comms = {}  # name -> [address, rank in it, nranks, opCount]
        self.buf = 0x7F3A00000000 + rank * 0x10000000
        self.stream = 0x55D0C1A3B000 + rank * 0x100

    def info(self, text, tid=None):
        tid = self.pid + 5 if tid is None else tid
        self.lines.append(f"{self.host}:{self.pid}:{tid} [{self.dev}] NCCL INFO {text}")

    def init_world(self):
        addr = 0x55D0C2000000 + self.rank * 0x40000
        bus = f"{0x1b000 + self.dev * 0x1000:x}"
        cid = 0x5C2EA4F3B0E1D27A
        self.lines.append(f"{self.host}:{self.pid}:{self.pid} [{self.dev}] NCCL INFO Bootstrap: Using eth0:10.0.0.{1 + self.rank // 2}<0>")
        self.info(f"[Rank {self.rank}] ncclCommInitRankConfig comm {addr:#x} rank {self.rank} nranks {WORLD} "
                  f"cudaDev {self.dev} nvmlDev {self.dev} busId {bus} commId {cid:#x} - Init START")
        self.info("Using network Socket")
        self.info(f"comm {addr:#x} rank {self.rank} nRanks {WORLD} nNodes 2 localRanks 2 "
                  f"localRank {self.dev} MNNVL 0")
        self.info("P2P Chunksize set to 131072")
        self.info(f"ncclCommInitRankConfig comm {addr:#x} rank {self.rank} nranks {WORLD} cudaDev "
                  f"{self.dev} nvmlDev {self.dev} busId {bus} commId {cid:#x} - Init COMPLETE")
        self.info(f"Init timings - ncclCommInitRankConfig: rank {self.rank} nranks {WORLD} total 0.61 "
                  "(kernels 0.18, alloc 0.02, bootstrap 0.05, allgathers 0.01, topo 0.21, graphs 0.01, "
                  "connections 0.09, rest 0.04)")
        self.comms["world"] = [addr, self.rank, WORLD, 0]

    def split_tp(self):
        parent = self.comms["world"][0]
        addr = 0x55D0C2800000 + self.rank * 0x40000
        bus = f"{0x1b000 + self.dev * 0x1000:x}"
        color, key = self.rank // 2, self.rank % 2
        self.info(f"ncclCommSplit comm {addr:#x} rank {key} nranks 2 cudaDev {self.dev} nvmlDev "
                  f"{self.dev} busId {bus} parent {parent:#x} childCount 0 color {color} key {key}- Init START")
        self.info(f"ncclCommSplit comm {addr:#x} rank {key} nranks 2 cudaDev {self.dev} nvmlDev "
                  f"{self.dev} busId {bus} parent {parent:#x} childCount 0 color {color} key {key} - Init COMPLETE")
        self.comms["tp"] = [addr, key, 2, 0]

    def op(self, name, comm, count, dtype, op=0, root=0):
        addr, _, nranks, op_count = self.comms[comm]
        # Send and Recv pass their one buffer as recvbuff (collectives.cc: sendbuff NULL).
        p2p = name in ("Send", "Recv")
        send = "(nil)" if p2p else f"{self.buf:#x}"
        recv = f"{self.buf:#x}" if p2p else f"{self.buf + 0x200000:#x}"
        self.buf += 0x400000
        self.info(f"{name}: opCount {op_count:x} sendbuff {send} recvbuff {recv} count {count} "
                  f"datatype {dtype} op {op} root {root} comm {addr:#x} [nranks={nranks}] "
                  f"stream {self.stream:#x}", tid=self.pid)

    def launch(self, comm):
        """The end of a launch (a call outside a group, or ncclGroupEnd): opCount advances."""
        self.comms[comm][3] += 1

    def call(self, name, comm, count, dtype, op=0, root=0):
        self.op(name, comm, count, dtype, op, root)
        self.launch(comm)

    def say(self, text):
        """A line of the program's own output, beside NCCL's."""
        self.lines.append(text)


def program(rank, bug=None):
    """The job's NCCL calls as rank `rank` makes them; `bug` changes one call."""
    r = Rank(rank)
    r.init_world()
    r.split_tp()
    r.say(f"[rank{rank}] step 0: loading checkpoint")
    # Parameters from rank 0, the first gradient all_reduces.
    root = 1 if bug == "root_mismatch" and rank == 3 else 0
    r.call("Broadcast", "world", 4096, F32, SUM, root)
    r.call("AllReduce", "tp", 8192, BF16, SUM, 0)
    r.call("AllReduce", "world", 1024, BF16, SUM, 0)
    r.call("AllReduce", "world", 1024, BF16, SUM, 0)
    # The third world all_reduce, where the bugs are.
    count, dtype, op = 1024, BF16, SUM
    if bug == "count_mismatch" and rank == 3:
        count = 1000
    if bug == "dtype_mismatch" and rank == 2:
        dtype = F32
    if bug == "op_mismatch" and rank == 1:
        op = MAX
    if not (bug == "missing_rank" and rank == 3):
        r.call("AllReduce", "world", count, dtype, op, 0)
    if bug == "missing_rank":
        if rank != 3:
            r.call("AllGather", "world", 256, F32)  # enqueued behind the hung one
        return r
    # Pipeline stages 0 <-> 2 and 1 <-> 3 exchange activations.
    peer = (rank + 2) % WORLD
    if bug == "send_recv_cycle":
        if rank in (0, 2):
            r.call("Send", "world", 8192, BF16, SUM, peer)
            r.call("Recv", "world", 8192, BF16, SUM, peer)
        return r
    r.op("Send", "world", 8192, BF16, SUM, peer)  # one group: both send first, legal NCCL
    r.op("Recv", "world", 8192, BF16, SUM, peer)
    r.launch("world")
    r.call("AllGather", "world", 256, F32)
    r.call("ReduceScatter", "world", 512, F32, SUM, 0)
    for p in range(WORLD):  # all-to-all as torch's all_to_all_single does it: grouped p2p
        r.op("Send", "world", 64, F32, SUM, p)
        r.op("Recv", "world", 64, F32, SUM, p)
    r.launch("world")
    r.call("AllReduce", "tp", 8192, BF16, SUM, 0)
    r.say(f"[rank{rank}] step 0 done")
    return r


def write(case, ranks):
    folder = os.path.join(HERE, case)
    os.makedirs(folder, exist_ok=True)
    for r in ranks:
        with open(os.path.join(folder, f"nccl.{r.host}.{r.pid}"), "w") as out:
            out.write("\n".join(r.lines) + "\n")


def write_interleaved(case, ranks):
    """Every process's lines in one file, in the order a combined output could show them."""
    folder = os.path.join(HERE, case)
    os.makedirs(folder, exist_ok=True)
    lines = []
    for r in ranks:
        lines += [(i, r.rank, line) for i, line in enumerate(r.lines)]
    lines.sort()
    with open(os.path.join(folder, "job.log"), "w") as out:
        out.write("\n".join(line for _, _, line in lines) + "\n")


def main():
    write("healthy", [program(r) for r in range(WORLD)])
    for bug in ["missing_rank", "count_mismatch", "dtype_mismatch", "op_mismatch",
                "root_mismatch", "send_recv_cycle"]:
        write(bug, [program(r, bug) for r in range(WORLD)])
    write_interleaved("interleaved", [program(r, "missing_rank") for r in range(WORLD)])


if __name__ == "__main__":
    main()
