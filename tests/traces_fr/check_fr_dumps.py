#!/usr/bin/env python3
"""Reads a folder of Flight Recorder dumps the way PyTorch's analyzer reads them, and checks them.

This is NOT PyTorch's analyzer (torch.distributed.flight_recorder.fr_trace, which Debian's
torch 1.13 lacks); it mirrors, from that analyzer's public source, only what it reads first:
  - components/loader.py: the file prefix inferred from the names (<prefix><rank>), each file
    loaded with Python's own pickle.load, its "entries", "version" and "pg_config";
  - utils.check_version, utils.check_no_missing_dump_files, utils.align_trace_from_beginning;
  - builder.build_groups_memberships: ranks through ast.literal_eval, one desc per group;
  - types.Op: the keys and types it reads from every entry, the backend "nccl", the
    operation in COLLECTIVES | P2P | {"coalesced"}, send "A->B" / recv "A<-B";
  - the first finding of utils.error_analysis for collectives: the members of a process group
    without an entry of the earliest collective_seq_id that some member still has
    ("Not all ranks joining collective"), printed as "missing ranks: {..}".
It prints "ok: N dumps, M entries" and the findings; exit 1 with a reason for a dump the
analyzer could not read. Usage: check_fr_dumps.py DIR [--expect-missing R,R...|none]
"""

import ast
import os
import pickle
import re
import sys
from collections import defaultdict

COLLECTIVES = {
    "broadcast", "_broadcast_oop", "reduce", "_reduce_oop", "all_gather", "all_gather_single",
    "all_gather_v", "all_reduce", "_all_gather_base", "all_gather_into_tensor_coalesced",
    "reduce_scatter", "reduce_scatter_single", "reduce_scatter_v",
    "reduce_scatter_tensor_coalesced", "_reduce_scatter_base", "gather", "scatter",
    "all_to_all", "all_to_all_single", "all_to_all_v_single", "all_reduce_barrier", "barrier",
    "split", "new_window", "allreduce_coalesced", "ALLGATHER_coalesced",
    "REDUCE_SCATTER_coalesced",
}
P2P = {"send", "recv"}
ENTRY_KEYS = {  # what types.Op, EntryState and the matching read, with their types
    "record_id": int, "pg_id": int, "process_group": tuple, "collective_seq_id": int,
    "p2p_seq_id": int, "op_id": int, "profiling_name": str, "time_created_ns": int,
    "input_sizes": list, "input_dtypes": list, "output_sizes": list, "output_dtypes": list,
    "state": str, "is_p2p": bool, "frames": list, "retired": bool, "timeout_ms": int,
    "thread_name": str, "thread_id": str,
}


def fail(message):
    print(f"error: {message}")
    sys.exit(1)


def load(folder):
    files = sorted(f for f in os.listdir(folder) if os.path.isfile(os.path.join(folder, f)))
    prefixes = defaultdict(set)
    for f in files:
        m = re.search(r"([\w\-\_]*?)(\d+)$", f)
        if m:
            prefixes[m.group(1)].add(int(m.group(2)))
    if len(prefixes) != 1:
        fail(f"cannot infer one file prefix from {files}")
    prefix = next(iter(prefixes))
    dumps = {}
    for f in files:
        if prefix not in f:
            continue
        rank = int(f[f.find(prefix) + len(prefix):])
        with open(os.path.join(folder, f), "rb") as handle:
            dump = pickle.load(handle)
        dumps[rank] = {k: dump[k] for k in ("entries", "version", "pg_config")}
    return dumps


def check_entry(rank, e, memberships):
    where = f"rank {rank} record {e.get('record_id')}"
    for key, kind in ENTRY_KEYS.items():
        if not isinstance(e.get(key), kind):
            fail(f"{where}: {key} is {e.get(key)!r}, not {kind.__name__}")
    if len(e["process_group"]) != 2:
        fail(f"{where}: process_group is not (name, desc)")
    backend, name = e["profiling_name"].split(":")
    if backend not in ("nccl", "xccl"):
        fail(f"{where}: backend {backend}")
    parts = name.split(" ")
    if parts[0] not in COLLECTIVES | P2P | {"coalesced"}:
        fail(f"{where}: {parts[0]} is not a supported operation")
    if parts[0] == "send":
        src, dst = map(int, parts[1].split("->"))
    elif parts[0] == "recv":
        dst, src = map(int, parts[1].split("<-"))
    if parts[0] in P2P:
        size = len(memberships[e["process_group"][0]])
        if not (0 <= src < size and 0 <= dst < size):
            fail(f"{where}: {name} names a rank outside its group of {size}")
    for sizes in (e["input_sizes"], e["output_sizes"]):
        if not all(isinstance(s, list) and all(isinstance(d, int) for d in s) for s in sizes):
            fail(f"{where}: sizes {sizes}")
    if e["state"] not in ("scheduled", "started", "completed"):
        fail(f"{where}: state {e['state']}")
    for frame in e["frames"]:
        if not (isinstance(frame["name"], str) and isinstance(frame["filename"], str)
                and isinstance(frame["line"], int)):
            fail(f"{where}: frame {frame}")


def main():
    folder = sys.argv[1]
    expect = None
    if len(sys.argv) == 4 and sys.argv[2] == "--expect-missing":
        expect = set() if sys.argv[3] == "none" else {int(r) for r in sys.argv[3].split(",")}
    dumps = load(folder)
    versions = {d["version"] for d in dumps.values()}
    if len(versions) != 1:
        fail(f"versions differ: {versions}")
    major, minor = map(int, next(iter(versions)).split("."))
    memberships, descs = {}, {}
    for rank, dump in dumps.items():
        for pg, config in dump["pg_config"].items():
            ranks = set(ast.literal_eval(config["ranks"]))
            if memberships.setdefault(pg, ranks) != ranks or descs.setdefault(pg, config["desc"]) != config["desc"]:
                fail(f"pg {pg} differs between dumps")
    everyone = set().union(*memberships.values())
    if everyone - set(dumps):
        fail(f"Missing dump files from ranks {everyone - set(dumps)}")
    start = max((d["entries"][0]["record_id"] for d in dumps.values() if d["entries"]), default=0)
    entries = {r: [e for e in d["entries"] if e["record_id"] >= start] for r, d in dumps.items()}
    count = 0
    for rank, es in entries.items():
        for e in es:
            check_entry(rank, e, memberships)
            count += 1
    print(f"ok: {len(dumps)} dumps, {count} entries, version {major}.{minor}")
    # Not all ranks joining: per group, the earliest collective some member holds.
    found = set()
    for pg, members in sorted(memberships.items()):
        seqs = defaultdict(dict)
        for rank in members:
            for e in entries[rank]:
                if e["process_group"][0] == pg and not e["is_p2p"]:
                    seqs[e["collective_seq_id"]].setdefault(rank, e)
        for seq in sorted(seqs):
            missing = members - set(seqs[seq])
            if missing:
                name = next(iter(seqs[seq].values()))["profiling_name"]
                print(f"pg {pg} ({descs[pg]}): {name} collective_seq_id {seq}: missing ranks: {missing}")
                found |= missing
                break
    if expect is not None and found != expect:
        fail(f"expected missing ranks {expect}, found {found or 'none'}")


if __name__ == "__main__":
    main()
