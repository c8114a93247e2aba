#!/usr/bin/env python3
"""Writes the NCCL RAS snapshot examples of traces/examples/nccl_ras/.

These snapshots were WRITTEN FROM NCCL's SOURCE, not recorded: no GPU or NCCL was at hand.
They follow what NCCL 2.30.7's RAS client prints (NVIDIA/nccl, tag v2.30.7-1,
src/ras/client_support.cc; docs/userguide/source/troubleshooting/ras.rst):
  ras.txt   `ncclras` (the text form): rasClientRunInit's header and job summary, then
            rasClientRunComms' table ("%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s"), its Errors
            (INCOMPLETE processes, "#%d-%d (%016lx) INCOMPLETE" with "Rank %d -- GPU %s
            managed by process %d on node %s") and Warnings (TIMEOUT, "#%d-%d (%016lx)
            MISMATCH" with "Communicator ranks have different %s operation counts", "%d ranks
            have launched up to operation %ld", "Rank %d has launched up to operation %ld --
            GPU %s managed by process %d on node %s"). RAS names the ranks of a count group
            only when it is an outlier: one rank, or at most 25% of the communicator and 10.
  ras.json  `ncclras -f json` (NCCL 2.28.7 and later): rasDumpCommsToJSON's jsonWrite* calls,
            field for field and indented as NCCL indents them ("hash": "0x%lx", unpadded).
Communicators are listed largest first with their groups as rasAuxCommsCompareRev sorts them.

Each case is an 8-GPU job on two nodes (10.0.0.1 and 10.0.0.2, 4 processes of one GPU each):
a world communicator (8 ranks) and two tensor-parallel communicators of 4 (one per node).
  healthy/      every rank in step: world broadcast 1, all_reduce 18; TP all_reduce 36,
                all_gather 12, reduce_scatter 12
  rank_behind/  world rank 5 stopped at all_reduce 17 while the other 7 reached 18; ras_later.*
                is the query repeated a minute later: the same counts (stuck)
  node_behind/  world ranks 4-7 (the second node) stopped at all_reduce 17 while ranks 0-3
                reached 18: half the communicator, so the text form names neither half
  missing_rank/ world rank 6's process stopped answering: the world and its node's TP
                communicator have no data from it; RAS met 2 timeouts
  async_error/  world rank 3 reports an asynchronous error, ncclRemoteError (a peer or its
                network failed), every count in step
Run it from anywhere; it rewrites ras.txt and ras.json in each case folder.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "2.30.7"
FUNCS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
NODES = ["10.0.0.1", "10.0.0.2"]
WORLD_HASH = 0x27A079B828FF1A75
TP_HASHES = [0x9E17999AFAA87DBB, 0x0D3F5C2A11B04E96]


def proc(world_rank):
    """(host, pid, cuda_dev) of the process driving world rank r."""
    node, dev = divmod(world_rank, 4)
    return NODES[node], 4100 + world_rank, dev


def comms(world_counts):
    """The job's communicators: (hash, secondary, members as world ranks, counts per member)."""
    out = [(WORLD_HASH, (0x5D1C0BEEF0A1, 0x4100), list(range(8)), world_counts)]
    for t in range(2):
        members = list(range(4 * t, 4 * t + 4))
        tp = [0, 0, 12, 12, 36]
        out.append((TP_HASHES[t], (0x5D1C0BEEF0A1 + t, 0x4100 + 4 * t), members,
                    {r: tp for r in members}))
    return out


def text_header():
    return (f"NCCL version {VERSION} compiled with CUDA 13.0\n"
            "CUDA runtime version 13000, driver version 13000\n\n"
            "Job summary\n===========\n\n"
            "  Nodes  Processes         GPUs  Processes     GPUs\n"
            "(total)   per node  per process    (total)  (total)\n"
            f"{2:7d}  {4:9d}  {1:11d}  {8:9d}  {8:7d}\n"
            "\nCommunicators... (0.004s)\n=============\n\n"
            "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
            "    #  in group  per comm  per node  per comm  in group\n")


def row(group, count, nodes, per_node, per_comm, in_group, status, errors):
    return f"{group:5d}  {count:8d}  {nodes:8d}  {per_node:>8s}  {per_comm:8d}  {in_group:8d}  {status:>8s}  {errors:>6s}\n"


def rank_line(comm_rank, world_rank, tail=""):
    host, pid, dev = proc(world_rank)
    return f"  Rank {comm_rank}{tail} -- GPU {dev} managed by process {pid} on node {host}\n"


def outlier(count, total):
    return count == 1 or (count <= 10 and count <= total * 0.25)


def mismatch(label, comm_hash, members, counts):
    """A MISMATCH section for the collectives whose counts differ (comm ranks = positions)."""
    out = f"{label} ({comm_hash:016x}) MISMATCH\n"
    for f, name in enumerate(FUNCS):
        values = [counts[r][f] for r in members]
        if len(set(values)) == 1:
            continue
        out += f"  Communicator ranks have different {name} operation counts\n"
        groups = {}
        for i, v in enumerate(values):
            groups.setdefault(v, []).append(i)
        # Most frequent first, the higher count first among equals (rasValCountsCompareRev).
        for v, ranks in sorted(groups.items(), key=lambda kv: (-len(kv[1]), -kv[0])):
            if len(ranks) > 1:
                out += (f"  {len(ranks)} ranks have launched up to operation {v}\n" if v > 0
                        else f"  {len(ranks)} ranks have not launched any operations\n")
            if outlier(len(ranks), len(members)):
                for i in ranks:
                    if len(ranks) > 1:
                        out += rank_line(i, members[i])
                    else:
                        out += rank_line(i, members[i], f" has launched up to operation {v}" if v > 0
                                         else " has not launched any operations")
        out += "\n"
    return out


def json_snapshot(job, missing_world=(), async_errors=None):
    """async_errors: {world rank: ncclResult_t} of the world communicator's ranks."""
    async_errors = async_errors or {}
    lines = ["{", f'  "nccl_version": "{VERSION}",', '  "cuda_runtime_version": 13000,',
             '  "cuda_driver_version": 13000,', '  "timestamp": "2026-06-04 15:41:07",',
             f'  "communicators_count": {len(job)},', '  "communicators": [']
    out = "\n".join(lines) + "\n"
    for c, (h, (hh, ph), members, counts) in enumerate(job):
        if c:
            out += ",\n"
        present = [m for m in members if m not in missing_world]
        absent = [m for m in members if m in missing_world]
        out += ("    {\n" f'      "hash": "0x{h:x}",\n' f'      "secondary_hash": "0x{hh:x}:0x{ph:x}",\n'
                f'      "size": {len(members)},\n' f'      "ranks_count": {len(present)},\n'
                f'      "missing_ranks_count": {len(absent)},\n' '      "ranks": [\n')
        for i, m in enumerate(present):
            if i:
                out += ",\n"
            host, pid, dev = proc(m)
            out += ("        {\n" f'          "rank": {members.index(m)},\n' f'          "host": "{host}",\n'
                    f'          "pid": {pid},\n' f'          "cuda_dev": {dev},\n' f'          "nvml_dev": {dev},\n'
                    '          "status": {\n' '            "init_state": 0,\n'
                    f'            "async_error": {async_errors.get(m, 0) if c == 0 else 0},\n'
                    '            "finalize_called": false,\n' '            "destroy_flag": false,\n'
                    '            "abort_flag": false\n' '          },\n' '          "collective_counts": {\n')
            out += ",\n".join(f'            "{name}": {counts[m][f]}' for f, name in enumerate(FUNCS)) + "\n"
            out += "          }\n        }"
        out += "\n      ],\n" '      "missing_ranks": [\n'
        for i, m in enumerate(absent):
            if i:
                out += ",\n"
            host, pid, dev = proc(m)
            out += ("        {\n" f'          "rank": {members.index(m)},\n' f'          "host": "{host}",\n'
                    f'          "pid": {pid},\n' f'          "cuda_dev": {dev},\n' f'          "nvml_dev": {dev},\n'
                    '          "status": {\n' '            "unresponsive": true,\n'
                    '            "considered_dead": false\n' '          }\n        }')
        out += "\n      ]\n    }"
    timeouts = 2 if missing_world else 0
    out += ("\n  ],\n" '  "ras": {\n' f'    "collection_time_sec": {2.051 if missing_world else 0.004:.3f},\n'
            f'    "timeouts_count": {timeouts}\n' "  }\n}\n")
    return out


def world_counts(behind, at=17):
    return {r: [1, 0, 0, 0, at if r in behind else 18] for r in range(8)}


def write(case, text, job, missing_world=(), name="ras", async_errors=None):
    folder = os.path.join(HERE, case)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".txt"), "w") as f:
        f.write(text)
    with open(os.path.join(folder, name + ".json"), "w") as f:
        f.write(json_snapshot(job, missing_world, async_errors))


def in_step_case():
    job = comms(world_counts(()))
    text = (text_header() + row(0, 1, 2, "4", 8, 8, "RUNNING", "OK") +
            row(1, 2, 1, "4", 4, 8, "RUNNING", "OK") +
            "\nErrors\n======\n\n" "Warnings\n========\n\n")
    write("healthy", text, job)


def behind_case(case, behind, name="ras"):
    job = comms(world_counts(behind))
    text = (text_header() + row(0, 1, 2, "4", 8, 8, "RUNNING", "MISMATCH") +
            row(1, 2, 1, "4", 4, 8, "RUNNING", "OK") +
            "\nErrors\n======\n\n" "Warnings\n========\n\n" +
            mismatch("#0-0", WORLD_HASH, list(range(8)), job[0][3]))
    write(case, text, job, name=name)


def missing_case():
    gone = 6
    job = comms(world_counts(()))
    host, pid, dev = proc(gone)
    text = (text_header() + row(0, 1, 2, "3-4", 8, 7, "RUNNING", "INCOMPLETE") +
            row(1, 1, 1, "3", 4, 3, "RUNNING", "INCOMPLETE") +
            row(2, 1, 1, "4", 4, 4, "RUNNING", "OK") +
            "\nErrors\n======\n\n"
            "INCOMPLETE\n  Missing communicator data from 1 job process\n"
            f"  Process {pid} on node {host} managing GPU {dev}\n\n"
            f"#0-0 ({WORLD_HASH:016x}) INCOMPLETE\n  Missing communicator data from 1 rank\n" +
            rank_line(gone, gone) + "\n" +
            f"#1-0 ({TP_HASHES[1]:016x}) INCOMPLETE\n  Missing communicator data from 1 rank\n" +
            rank_line(gone - 4, gone) + "\n" +
            "Warnings\n========\n\n"
            "TIMEOUT\n  Encountered 2 communication timeouts while gathering communicator data\n\n")
    write("missing_rank", text, job, missing_world=(gone,))


def async_error_case():
    failed = 3
    job = comms(world_counts(()))
    text = (text_header() + row(0, 1, 2, "4", 8, 8, "RUNNING", "ERROR") +
            row(1, 2, 1, "4", 4, 8, "RUNNING", "OK") +
            "\nErrors\n======\n\n"
            f"#0-0 ({WORLD_HASH:016x}) ERROR\n"
            "  Asynchronous error on 1 rank\n" +
            rank_line(failed, failed, " reported Remote process error") + "\n" +
            "Warnings\n========\n\n")
    write("async_error", text, job, async_errors={failed: 6})  # 6: ncclRemoteError


if __name__ == "__main__":
    in_step_case()
    behind_case("rank_behind", {5})
    behind_case("rank_behind", {5}, name="ras_later")  # a minute later: nothing moved
    behind_case("node_behind", {4, 5, 6, 7})
    missing_case()
    async_error_case()
