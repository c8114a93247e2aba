#!/usr/bin/env python3
"""One CTest case of `ranklab torchrun`: runs real PyTorch scripts (scripts/) through the
bridge and checks the exit code, the report's lines and, where Debian's Gloo has the calls,
the results against Gloo's on the same script (--keep-backend leaves its groups on Gloo).

    torchrun_case.py --ranklab BUILD/cli/ranklab CASE
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "scripts")
RANKLAB = None


def script(name):
    return os.path.join(SCRIPTS, name)


def torchrun(*args, expect_exit=0):
    """Runs `ranklab torchrun ARGS`; returns its stdout. Fails on another exit code."""
    command = [RANKLAB, "torchrun", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if done.returncode != expect_exit:
        sys.exit(f"FAIL: {' '.join(command)}\nexited {done.returncode}, expected {expect_exit}\n"
                 f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")
    return done.stdout


def expect_lines(output, *needles):
    for needle in needles:
        if needle not in output:
            sys.exit(f"FAIL: the report lacks {needle!r}:\n{output}")


def compare_with_gloo(name, nproc, *script_args):
    """The script's per-rank results through ranklab and on Gloo: bitwise equal."""
    import torch

    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as gloo:
        torchrun("--nproc-per-node", str(nproc), script(name), "--out", ours, *script_args)
        torchrun("--nproc-per-node", str(nproc), "--keep-backend", script(name), "--out", gloo,
                 *script_args)
        for rank in range(nproc):
            a = torch.load(os.path.join(ours, f"rank{rank}.pt"))
            b = torch.load(os.path.join(gloo, f"rank{rank}.pt"))
            if a.keys() != b.keys():
                sys.exit(f"FAIL: rank {rank}: ranklab has {sorted(a)}, Gloo {sorted(b)}")
            for key in a:
                if not torch.equal(a[key], b[key]):
                    sys.exit(f"FAIL: rank {rank}: {key}: ranklab {a[key]} vs Gloo {b[key]}")
        print(f"{name} at {nproc} processes: {len(a)} results per rank equal to Gloo's")


def seed_step(config, nproc, dtype, against_gloo):
    """The seed's step (scripts/seed_step.py, reference.SHIPPED[config]) through ranklab: each
    rank checks its loss and gradients against the dense step in the script; with
    `against_gloo`, also against Gloo's run of the same script, within the dtype's tolerance."""
    import torch

    tolerance = {"float32": 1e-5, "float64": 1e-12}[dtype]
    args = [script("seed_step.py"), "--config", str(config), "--dtype", dtype]
    if not against_gloo:
        torchrun("--nproc-per-node", str(nproc), *args)
        print(f"seed step config {config} {dtype} on {nproc} processes: as the dense step")
        return
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as gloo:
        torchrun("--nproc-per-node", str(nproc), *args, "--out", ours)
        torchrun("--nproc-per-node", str(nproc), "--keep-backend", *args, "--out", gloo)
        for rank in range(nproc):
            a = torch.load(os.path.join(ours, f"rank{rank}.pt"))
            b = torch.load(os.path.join(gloo, f"rank{rank}.pt"))
            pairs = [(x, y) for la, lb in zip(a["grads"], b["grads"]) for x, y in zip(la, lb)]
            if b["loss"] is not None:
                pairs.append((a["loss"], b["loss"]))
            for x, y in pairs:
                scale = float(y.abs().max()) or 1.0
                if float((x - y).abs().max()) > tolerance * scale:
                    sys.exit(f"FAIL: config {config} {dtype} rank {rank}: ranklab and Gloo differ "
                             f"by {float((x - y).abs().max())} (scale {scale})")
    print(f"seed step config {config} {dtype} on {nproc} processes: as Gloo's")


def seed_step_hybrid():
    # Every mode against Gloo in float32; float64 against the dense step only (a comparison
    # starts the 8 processes twice, each importing torch).
    seed_step(0, 8, "float32", against_gloo=True)
    seed_step(0, 8, "float64", against_gloo=False)


def seed_step_modes():
    for config, nproc in ((2, 2), (3, 4), (4, 4)):  # TP, PP and DP alone
        seed_step(config, nproc, "float32", against_gloo=True)


def pipeline_1f1b():
    """1F1B with batch_isend_irecv passes; its steady state unpaired hangs under rendezvous
    sends (exit 3) and is flagged under eager ones (exit 6), naming the exchange's lines."""
    out = torchrun("--nproc-per-node", "4", script("pipeline_1f1b.py"))
    expect_lines(out, "result: ok: 4 ranks finished")
    out = torchrun("--nproc-per-node", "4", script("pipeline_1f1b.py"), "--unpaired",
                   expect_exit=3)
    expect_lines(out, "culprit (send-cycle)", "pipeline_1f1b.py:56 (exchange)")
    out = torchrun("--nproc-per-node", "4", "--send-mode", "eager", script("pipeline_1f1b.py"),
                   "--unpaired", expect_exit=6)
    expect_lines(out, "culprit (potential-deadlock)", "pipeline_1f1b.py:57 (exchange)")


def order_and_forgotten_group():
    out = torchrun("--nproc-per-node", "2", script("collective_order.py"), expect_exit=4)
    expect_lines(out, "culprit (collective-order)", "world and group[0,1]")
    out = torchrun("--nproc-per-node", "4", script("forgotten_group.py"), expect_exit=3)
    expect_lines(out, "culprit (missing-participant): rank 3 returned while rank 1 waits",
                 "forgotten_group.py:11")


def collectives():
    for nproc in (1, 3):
        out = torchrun("--nproc-per-node", str(nproc), script("collectives.py"))
        processes = "1 process," if nproc == 1 else f"{nproc} processes,"
        expect_lines(out, processes, f"result: ok: {nproc} rank")
    # Two processes, their output kept in files; a second run refuses to overwrite them.
    with tempfile.TemporaryDirectory() as logs:
        torchrun("--nproc_per_node", "2", "--log-dir", logs, script("collectives.py"))
        for rank in range(2):
            with open(os.path.join(logs, f"rank{rank}", "stdout.log")) as out:
                expect_lines(out.read(), f"rank {rank}: ")
        refused = subprocess.run([RANKLAB, "torchrun", "--nproc-per-node", "2", "--log-dir", logs,
                                  script("collectives.py")], capture_output=True, text=True)
        if refused.returncode != 1 or "ranklab does not overwrite it" not in refused.stderr:
            sys.exit(f"FAIL: a second --log-dir run: exit {refused.returncode}, {refused.stderr}")


def collectives_vs_gloo():
    compare_with_gloo("collectives.py", 4, "--gloo-only")


def large_tensors():
    """Tensors of 128 KiB to 12 MiB go through the processes' shared regions: every call that
    carries them, checked in closed form (the script also checks that its region was used),
    then against Gloo's results."""
    out = torchrun("--nproc-per-node", "3", script("large_tensors.py"))
    expect_lines(out, "result: ok: 3 ranks finished")
    compare_with_gloo("large_tensors.py", 3, "--gloo-only")


def ddp_mixed_precision():
    """DDP under CPU autocast (float32 gradients) and on a bfloat16 model (bfloat16 gradients
    all-reduced through the fabric): Gloo 1.13 has no bfloat16, so the script checks against
    the full-batch model and across ranks itself."""
    out = torchrun("--nproc-per-node", "4", script("ddp_mixed.py"))  # each rank asserts
    expect_lines(out, "result: ok: 4 ranks finished")


def ddp_vs_gloo():
    compare_with_gloo("ddp.py", 2)


def async_collectives():
    """Collectives posted now and completed later: an async all_reduce outstanding across a
    ring of blocking sends, and DDP's buckets overlapping backward (five variants), against
    Gloo's results (at 2 processes, where a sum has one order: Gloo's ring adds 3 in
    another); then, at 3, one trace from three runs whose processes wait at random."""
    compare_with_gloo("async_collectives.py", 2)
    with tempfile.TemporaryDirectory() as folder:
        traces = set()
        for attempt in range(3):
            path = os.path.join(folder, f"t{attempt}.jsonl")
            torchrun("--nproc-per-node", "3", "--policy", "random:5", "--trace", path,
                     script("async_collectives.py"), "--sleep")
            with open(path, "rb") as trace:
                traces.add(trace.read())
        if len(traces) != 1:
            sys.exit("FAIL: three runs of async_collectives.py under random:5 wrote "
                     f"{len(traces)} different traces")


def skip_all_reduce():
    """Rank 0, the odd one, is blamed whichever rank reaches the call first (issue 28 §1),
    with every rank's call in the table."""
    for policy in ("rank-order", "random:1", "random:2", "random:3"):
        out = torchrun("--nproc-per-node", "4", "--policy", policy, script("skip_all_reduce.py"),
                       expect_exit=4)
        expect_lines(out, "skip_all_reduce.py:11", "skip_all_reduce.py:12",
                     "rank 0 is the odd one: 1 rank vs 3",
                     "culprit (collective-mismatch): rank 0 called all_reduce(sum, f32, count=1)")
        if "never called" in out or "not called yet" in out:
            sys.exit(f"FAIL: under {policy}, a rank's call is missing from the table:\n{out}")


def both_send():
    out = torchrun("--nproc-per-node", "2", script("both_send.py"), expect_exit=3)
    expect_lines(out, "both_send.py:11", "culprit (send-cycle)")
    report = json.loads(torchrun("--nproc-per-node", "2", "--json", script("both_send.py"),
                                 expect_exit=3))
    if report["culprit"]["kind"] != "send-cycle" or report["exit_code"] != 3:
        sys.exit(f"FAIL: --json says {report['culprit']}, exit {report['exit_code']}")
    for rank in ("0", "1"):
        frames = report["python_stacks"][rank]
        if [frames[0]["file"].endswith("both_send.py"), frames[0]["line"]] != [True, 11]:
            sys.exit(f"FAIL: rank {rank}'s Python stack is {frames}")


def both_send_eager():
    out = torchrun("--nproc_per_node", "2", "--send-mode", "eager", script("both_send.py"),
                   expect_exit=6)
    expect_lines(out, "both_send.py:11", "potential-deadlock")


def size_mismatch():
    out = torchrun("--nproc-per-node", "4", script("size_mismatch.py"), expect_exit=4)
    expect_lines(out, "size_mismatch.py:8", "rank 2 is the odd one: 1 rank vs 3")


def raises():
    out = torchrun("--nproc-per-node", "3", script("raises.py"), expect_exit=5)
    expect_lines(out, "rank 1", "ValueError: bad batch on rank 1", "raises.py")


def deterministic_trace():
    with tempfile.TemporaryDirectory() as folder:
        traces = []
        for attempt in range(3):
            path = os.path.join(folder, f"t{attempt}.jsonl")
            torchrun("--nproc-per-node", "4", "--policy", "random:7", "--trace", path,
                     script("any_source.py"))
            with open(path, "rb") as trace:
                traces.append(trace.read())
        if len(set(traces)) != 1:
            sys.exit("FAIL: three runs under random:7 wrote different traces")
        print(f"3 runs, one trace ({len(traces[0])} bytes)")


def free_port_pair():
    """A port P with P + 1 free too (the script's store and the coordinator), on loopback."""
    import socket
    for _ in range(100):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
                return port
    sys.exit("FAIL: no two adjacent free ports")


def two_nodes():
    """Two "nodes" on loopback: node 1's processes join node 0's coordinator over TCP."""
    port = str(free_port_pair())
    common = ["torchrun", "--nnodes", "2", "--nproc-per-node", "2", "--master-port", port]
    node1 = subprocess.Popen([RANKLAB, *common, "--node-rank", "1", script("collectives.py")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = torchrun(*common[1:], "--node_rank", "0", script("collectives.py"))
    expect_lines(out, "4 processes,", "result: ok: 4 ranks finished")
    worker_out, worker_err = node1.communicate(timeout=120)
    if node1.returncode != 0:
        sys.exit(f"FAIL: node 1 exited {node1.returncode}\n{worker_out}\n{worker_err}")
    expect_lines(worker_out, "node 1 of 2: ranks 2-3", "rank 3: exit status 0")


CASES = {f.__name__: f for f in (
    two_nodes, pipeline_1f1b, order_and_forgotten_group, seed_step_hybrid, seed_step_modes,
    collectives, collectives_vs_gloo, large_tensors, ddp_vs_gloo, ddp_mixed_precision,
    async_collectives,
    skip_all_reduce, both_send, both_send_eager, size_mismatch, raises, deterministic_trace)}


def main():
    global RANKLAB
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranklab", required=True)
    parser.add_argument("case", choices=sorted(CASES))
    args = parser.parse_args()
    RANKLAB = args.ranklab
    CASES[args.case]()
    print(f"{args.case}: passed")


if __name__ == "__main__":
    main()
