#!/usr/bin/env python3
"""Writes the Flight Recorder example dumps of traces/examples/fr/.

These dumps were WRITTEN FROM THE FORMAT'S SOURCE, not recorded: no PyTorch with Flight
Recorder (2.6 or later) was at hand. They follow what torch/csrc/distributed/c10d/
FlightRecorder.hpp and FlightRecorderDetail.hpp write (version "2.4"): the pickle dumps a
timeout writes (`nccl_trace_rank_N`: a dict with `version`, `comm_lib_version`, `pg_config`,
`pg_status`, `entries`, each entry with its Python `frames`) and the JSON that
`torch._C._distributed_c10d._dump_fr_trace_json()` returns (`nccl_trace_rank_N.json`: the
same without frames; pg_status values as strings; absent timestamps as 0).

The pickle dumps of missing_rank and send_recv_cycle are written the way torch's C++
pickler (torch/csrc/jit/serialization/pickler.cpp) writes a dump: protocol 2, every dict and
list wrapped in torch.jit._pickle.restore_type_tag, strings memoized, 8-byte LONG1 for large
integers (TorchPickler below); size_mismatch uses Python's pickle, protocol 2, and healthy
protocol 4 (Python's default), so the reader is shown all three.

Each case is a 4-rank job, in both forms (CASE/nccl_trace_rank_N and
CASE/json/nccl_trace_rank_N.json):
  missing_rank/    rank 3 skips the last all_reduce; ranks 0-2 hang in it
  size_mismatch/   rank 3 all_reduces 1000 floats where the others all_reduce 1024
  send_recv_cycle/ ranks 0 and 1 both send before they receive (pipeline stages)
  healthy/         broadcast, all_reduce, a coalesced send/recv ring, all_gather,
                   reduce_scatter, all_to_all and sub-group all_reduces; all completed
  late_rank/       (version 2.10) all completed, but rank 3 entered the third all_reduce
                   4.2 s after the others: the timestamps say so

Run it from anywhere: python3 traces/examples/fr/make_examples.py (deterministic output).
Python's pickle module is used only to WRITE examples (protocol 2, as torch's C++ pickler,
and protocol 4 for the healthy case, as Python's own default); ranklab never unpickles with it.
"""

import json
import os
import pickle
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 4
TORCH = "/usr/lib/python3/dist-packages/torch/distributed"
TRAIN = "/home/user/train.py"


def frames(op, function, line):
    """A Python stack as Flight Recorder keeps it: innermost first, torch's wrappers on top."""
    return [
        {"name": op, "filename": f"{TORCH}/distributed_c10d.py", "line": 2501},
        {"name": "wrapper", "filename": f"{TORCH}/c10d_logger.py", "line": 83},
        {"name": function, "filename": TRAIN, "line": line},
        {"name": "main", "filename": TRAIN, "line": 120},
        {"name": "<module>", "filename": TRAIN, "line": 131},
    ]


class Rank:
    """One rank's recorder: entries in record order, as FlightRecorder::record makes them."""

    def __init__(self, rank):
        self.rank = rank
        self.entries = []
        self.seq = {}  # pg -> [collective_seq_id, p2p_seq_id, op_id]
        self.clock = 1_700_000_000_000_000_000 + rank * 1_000

    def record(self, pg, name, inputs, outputs, dtype, state, site, p2p=False, bump=True,
               times=None):
        seq = self.seq.setdefault(pg, [0, 0, 0])
        if bump:
            seq[1 if p2p else 0] += 1
        seq[2] += 1
        self.clock += 1_000_000
        if times:  # (created, completed) on this rank's host clock
            self.clock = times[0]
        started = self.clock + 1_000 if state in ("started", "completed") else None
        completed = self.clock + 5_000 if state == "completed" else None
        if times and state == "completed":
            completed = times[1]
        self.entries.append({
            "frames": frames(name.split(":")[1].split(" ")[0], *site),
            "record_id": len(self.entries),
            "pg_id": int(pg),
            "process_group": (pg, PG_DESC[pg]),
            "thread_name": "pt_main_thread",
            "thread_id": "140230000000000",
            "collective_seq_id": seq[0],
            "p2p_seq_id": seq[1],
            "op_id": seq[2],
            "profiling_name": name,
            "time_created_ns": self.clock,
            "input_sizes": inputs,
            "input_dtypes": [dtype] * len(inputs),
            "output_sizes": outputs,
            "output_dtypes": [dtype] * len(outputs),
            "state": state,
            "time_discovered_started_ns": started,
            "time_discovered_completed_ns": completed,
            "retired": state == "completed",
            "timeout_ms": 600_000,
            "is_p2p": p2p,
        })

    def collective(self, pg, op, inputs, outputs, state="completed", site=("train_step", 42),
                   dtype="Float", times=None):
        self.record(pg, f"nccl:{op}", inputs, outputs, dtype, state, site, times=times)

    def send(self, peer, shape, state="completed", site=("send_activations", 61), pg="0",
             bump=True):
        me = PG_RANKS[pg].index(self.rank)
        self.record(pg, f"nccl:send {me}->{peer}", [shape], [shape], "Float", state, site,
                    p2p=True, bump=bump)

    def recv(self, peer, shape, state="completed", site=("recv_activations", 66), pg="0",
             bump=True):
        me = PG_RANKS[pg].index(self.rank)
        self.record(pg, f"nccl:recv {me}<-{peer}", [shape], [shape], "Float", state, site,
                    p2p=True, bump=bump)

    def coalesced(self, pg, site):
        """Closes a coalesced batch: the ops before it that share its seq ids."""
        self.record(pg, "nccl:coalesced", [], [], "Float", "completed", site, p2p=True,
                    bump=False)


PG_RANKS = {"0": [0, 1, 2, 3], "1": [0, 1], "2": [2, 3]}
PG_DESC = {"0": "default_pg", "1": "tp", "2": "tp"}


def dump(rank, pgs, version="2.4"):
    status = {}
    for pg in pgs:
        seqs = [e["collective_seq_id"] for e in rank.entries if e["process_group"][0] == pg]
        done = [e["collective_seq_id"] for e in rank.entries
                if e["process_group"][0] == pg and e["state"] == "completed"]
        status[pg] = {"last_enqueued_collective": max(seqs, default=-1),
                      "last_started_collective": max(seqs, default=-1),
                      "last_completed_collective": max(done, default=-1)}
    return {
        "version": version,
        "pg_config": {pg: {"name": pg, "desc": PG_DESC[pg],
                           "ranks": "[" + ", ".join(map(str, PG_RANKS[pg])) + "]"} for pg in pgs},
        "comm_lib_version": "2.21.5",
        "pg_status": status,
        "entries": rank.entries,
    }


def as_json(d):
    """What dump_json writes: no frames, strings for pg_status, 0 for absent times."""
    out = dict(d)
    out["pg_status"] = {k: {f: str(v) for f, v in s.items()} for k, s in d["pg_status"].items()}
    entries = []
    for e in d["entries"]:
        e = {k: v for k, v in e.items() if k != "frames"}
        e["process_group"] = list(e["process_group"])
        for key in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            e[key] = e[key] or 0
        entries.append(e)
    out["entries"] = entries
    return out


class TorchPickler:
    """The opcodes torch's C++ Pickler emits for plain data (pushIValue and friends)."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.memo = 0
        self.strings = {}
        self.globals = {}

    def _put(self):
        self.out += b"q" + bytes([self.memo]) if self.memo <= 255 else b"r" + struct.pack("<I", self.memo)
        self.memo += 1
        return self.memo - 1

    def _get(self, index):
        self.out += b"h" + bytes([index]) if index <= 255 else b"j" + struct.pack("<I", index)

    def _global(self, module, name):
        key = f"{module}\n{name}\n"
        if key in self.globals:
            self._get(self.globals[key])
        else:
            self.out += b"c" + key.encode()
            self.globals[key] = self._put()

    def _string(self, text):
        if text in self.strings:
            self._get(self.strings[text])
            return
        data = text.encode()
        self.out += b"X" + struct.pack("<I", len(data)) + data
        self.strings[text] = self._put()

    def _int(self, n):
        if 0 <= n <= 0xFF:
            self.out += b"K" + bytes([n])
        elif 0 <= n <= 0xFFFF:
            self.out += b"M" + struct.pack("<H", n)
        elif -2**31 <= n < 2**31:
            self.out += b"J" + struct.pack("<i", n)
        else:
            self.out += b"\x8a\x08" + struct.pack("<q", n)

    def value(self, v):
        if v is None:
            self.out += b"N"
        elif isinstance(v, bool):
            self.out += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            self._int(v)
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            self._string(v)
        elif isinstance(v, tuple):
            if 1 <= len(v) <= 3:
                for item in v:
                    self.value(item)
                self.out += bytes([0x84 + len(v)])
            else:
                self.out += b"("
                for item in v:
                    self.value(item)
                self.out += b"t"
        elif isinstance(v, list):
            self._global("torch.jit._pickle", "restore_type_tag")
            self.out += b"]("
            for item in v:
                self.value(item)
            self.out += b"e"
            self._string("List[Any]")
            self.out += b"\x86R"
        elif isinstance(v, dict):
            self._global("torch.jit._pickle", "restore_type_tag")
            self.out += b"}("
            for key, item in v.items():
                self.value(key)
                self.value(item)
            self.out += b"u"
            self._string("Dict[str, Any]")
            self.out += b"\x86R"
        else:
            raise TypeError(type(v))

    def dumps(self, v):
        self.value(v)
        return bytes(self.out + b".")


def write(case, ranks, pgs=("0",), protocol=2, version="2.4"):
    for form in ("pickle", "json"):
        # The pickle dumps in the case's folder itself (what a timeout leaves behind), the
        # JSON ones in json/ beside them.
        folder = os.path.join(HERE, case) if form == "pickle" else os.path.join(HERE, case, "json")
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if name.startswith("nccl_trace_rank_"):
                os.remove(os.path.join(folder, name))
        for r in ranks:
            d = dump(r, pgs, version)
            if form == "pickle":
                with open(os.path.join(folder, f"nccl_trace_rank_{r.rank}"), "wb") as f:
                    if protocol == "torch":
                        f.write(TorchPickler().dumps(d))
                    else:
                        pickle.dump(d, f, protocol=protocol)
            else:
                with open(os.path.join(folder, f"nccl_trace_rank_{r.rank}.json"), "w") as f:
                    json.dump(as_json(d), f, separators=(",", ":"))


def warmup(ranks):
    for r in ranks:
        r.collective("0", "broadcast", [[256]], [[256]], site=("sync_params", 30))
        r.collective("0", "all_reduce", [[1024]], [[1024]])


def missing_rank():
    ranks = [Rank(r) for r in range(WORLD)]
    warmup(ranks)
    for r in ranks[:3]:  # `if rank != 3: dist.all_reduce(loss)`: rank 3 never calls it
        r.collective("0", "all_reduce", [[1]], [[1]], state="started", site=("sync_loss", 47))
    write("missing_rank", ranks, protocol="torch")


def size_mismatch():
    ranks = [Rank(r) for r in range(WORLD)]
    warmup(ranks)
    for r in ranks:
        n = 1000 if r.rank == 3 else 1024
        r.collective("0", "all_reduce", [[n]], [[n]], state="started", site=("train_step", 42))
    write("size_mismatch", ranks)


def send_recv_cycle():
    ranks = [Rank(r) for r in range(WORLD)]
    warmup(ranks)
    shape = [64, 128]
    # Stages 0 and 1 both send first: each send waits for a receive the other never posts.
    ranks[0].send(1, shape, state="started")
    ranks[0].recv(1, shape, state="scheduled")
    ranks[1].send(0, shape, state="started")
    ranks[1].recv(0, shape, state="scheduled")
    # Stages 2 and 3 take turns, as they should.
    ranks[2].send(3, shape)
    ranks[3].recv(2, shape)
    ranks[3].send(2, shape)
    ranks[2].recv(3, shape)
    write("send_recv_cycle", ranks, protocol="torch")


def healthy():
    ranks = [Rank(r) for r in range(WORLD)]
    warmup(ranks)
    shape = [32, 32]
    for r in ranks:  # batch_isend_irecv ring: one coalesced batch (one p2p seq id) per rank
        r.send((r.rank + 1) % WORLD, shape, site=("exchange_halo", 73))
        r.recv((r.rank - 1) % WORLD, shape, site=("exchange_halo", 73), bump=False)
        r.coalesced("0", site=("exchange_halo", 73))
    for r in ranks:
        r.collective("0", "all_gather_into_tensor", [[512]], [[2048]], site=("gather_shards", 88))
        r.collective("0", "reduce_scatter_tensor", [[2048]], [[512]], site=("scatter_grads", 91))
        r.collective("0", "all_to_all", [[4, 64]], [[4, 64]], site=("route_tokens", 95))
    for r in ranks:
        pg = "1" if r.rank < 2 else "2"
        r.collective(pg, "all_reduce", [[4096]], [[4096]], site=("tp_reduce", 101),
                     dtype="BFloat16")
    for r in ranks:
        r.collective("0", "all_reduce", [[1]], [[1]], site=("sync_loss", 47))
    write("healthy", ranks, pgs=("0", "1", "2"), protocol=4)


def late_rank():
    """Version 2.10. Every rank completes, but rank 3 enters the third all_reduce 4.2 s after
    the others (its data loader stalled): a slow rank, not a hang. Ranks 2 and 3 run on a
    host whose clock is 0.8 ms ahead; a collective ends on every rank 2 ms after the last one
    enters it, seen by each watchdog a few microseconds apart."""
    ranks = [Rank(r) for r in range(WORLD)]
    offset = [0, 0, 800_000, 800_000]
    t = 1_700_000_000_000_000_000
    steps = [("broadcast", [[256]], ("sync_params", 30)), ("all_reduce", [[1024]], ("train_step", 42)),
             ("all_reduce", [[1024]], ("train_step", 42)), ("all_reduce", [[1]], ("sync_loss", 47))]
    for k, (op, shape, site) in enumerate(steps):
        enter = [t + 1_000 * r for r in range(WORLD)]
        if k == 2:
            enter[3] += 4_200_000_000
        done = max(enter) + 2_000_000
        for r in ranks:
            r.collective("0", op, shape, shape, site=site,
                         times=(enter[r.rank] + offset[r.rank], done + 5_000 * r.rank + offset[r.rank]))
        t = done + 100_000_000
    write("late_rank", ranks, protocol="torch", version="2.10")


if __name__ == "__main__":
    missing_rank()
    size_mismatch()
    send_recv_cycle()
    healthy()
    late_rank()
