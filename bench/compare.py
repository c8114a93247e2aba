#!/usr/bin/python3
"""ranklab beside its peers, on this machine, in one go (issue 8). Run it through bench/compare,
which installs the peers and builds the benchmarks first; this file runs the measurements.

    bench/compare.py --build BUILD_DIR [--rounds 3] [--out DIR] [--only step,allreduce,...]
                     [--dry-run]

Every measurement of a comparison is taken ROUNDS times, the sides alternating inside each
round (ranklab, then each peer), so the machine's load falls on all of them alike. Each run
records wall time, the CPU time of its process tree (user + system, from wait4) and its peak
resident memory, with the load average when it started. The raw results go to OUT/raw.json;
bench/compare_report.py turns them into bench/RESULTS.md's generated section.

Sections (--only picks some):
  step       the seed's hybrid step: ranklab (step_bench, trace off and on; the whole
             `ranklab run` main job) vs PyTorch Gloo (8 processes) and the threaded group
  allreduce  all_reduce of 1, 1 Ki, 1 Mi and 16 Mi floats at 8 ranks: ranklab vs Open MPI
             (8 processes, oversubscribed) and SMPI
  scale      `ranklab run --scenario allreduce` (one all_reduce + one barrier) at 8 ... 4,096
             ranks (and 65,536, threads 1 and 2) vs the same program under SMPI
  algorithms every all_reduce algorithm at 8 ranks and 4 B ... 64 MiB, the memcpy bound,
             broadcast and reduce direct vs tree, threads 1 and 2 (emulator_bench, once)
  dense      the dense forward+backward vs Eigen's FLOP rate, default and -march=native
  readers    the NCCL debug log reader beside the JSONL reader on the same 8-rank job, ops
             per second (import_bench, once; issue 29 §3)
  replay     `ranklab replay` events per second (replay_bench, once), and `ranklab replay FILE`
             end to end, reading included, on one core (taskset) on bench/big_trace.sh's
             512-rank, 1 M-event trace (3 runs)
  explore    `ranklab explore --run` schedules per second of the seed step with --jobs 1 and 2
             and their ratio (issue 19 §4), where the build has that command
  mpi        the MPI backend (issue 12 §6), 8 processes: all_reduce of 1, 1 Ki and 1 Mi floats
             (mpi_allreduce_bench, --algo mpi and direct) vs the same in-place MPI_Allreduce on
             raw Open MPI (bench/peers/mpi_allreduce.c), and the seed step (mpi_step_bench) vs
             PyTorch Gloo on 8 processes; every job through tests/mpi/mpirun.sh
--dry-run sets up every chosen section and prints the commands it would run, one round, without
running any (nor building the peers' programs, nor writing raw.json), then the files and
programs they need; it fails if one in the source tree is missing. CTest runs it (tests/
CMakeLists.txt, BenchCompareTest), so a section whose set-up breaks fails the suite in a second.
Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_DIR = os.path.normpath(os.path.join(ROOT, "..", "shared", "reference", "torch"))
MPI_DIR = os.path.normpath(os.path.join(ROOT, "..", "shared", "bench", "mpi"))
PYTHON = "/usr/bin/python3"  # Debian's, which has torch (README of the reference)
SECTIONS = ["step", "allreduce", "scale", "mpi", "algorithms", "dense", "replay", "explore",
            "torchrun", "readers"]
# The MPI jobs' launcher: oversubscribed, unbound, copy-in/copy-out shared memory (works in
# containers without ptrace rights), --allow-run-as-root when root; the same for both sides.
MPIRUN_SH = os.path.join(ROOT, "tests", "mpi", "mpirun.sh")

# all_reduce sizes in floats, with the iterations the peers' program runs for each (as
# ../shared/bench/mpi/run_*.sh: 1000 for small sizes, 50 for 1 Mi; 5 for 16 Mi).
ALLREDUCE_SIZES = {1: (1000, 100), 1024: (1000, 100), 1048576: (50, 5), 16777216: (5, 1)}
# The MPI section's sizes in floats, with the timed iterations of both sides for each.
MPI_SIZES = {1: 1000, 1024: 1000, 1048576: 50}
MPI_STEPS = 200  # mpi_step_bench's timed steps per run
SCALE_WORLDS = [8, 64, 512, 4096]
SCALE_RANKLAB_ONLY = [65536]
SCALE_MILLION = 1048576  # threads 1 only: issue 19 §3
EXPLORE_RUNS = 2000  # schedules per explore run (issue 19 §4)
EXPLORE_JOBS = [1, 2]
# The replay section's end-to-end trace (bench/big_trace.sh's), replayed pinned to one core
# (the floor is per core) this many times.
BIG_TRACE = ["--scenario", "allreduce", "--algo", "ring", "--world", "512", "--count", "512"]
ONE_CORE = ["taskset", "-c", "0"] if shutil.which("taskset") else []
# --dry-run: run() prints each command and runs nothing; the paths the commands name, by path.
DRY_RUN = False
DRY_PATHS = {}
REPLAY_END_TO_END_RUNS = 3

# SMPI's documented speed options (../shared/bench/mpi/README.md): "fast" for 8 ranks, plus
# log-depth collectives ("fast_tree") at scale.
SMPI_FAST = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/send-is-detached-thresh:0",
             "--cfg=contexts/stack-size:64"]
SMPI_TREE = ["--cfg=smpi/allreduce:redbcast", "--cfg=smpi/reduce:binomial",
             "--cfg=smpi/bcast:binomial_tree"]


def log(message):
    print(f"[compare {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run(cmd, timeout, cwd=None, env=None):
    """Runs cmd (a list) in its own session; returns rc, wall, CPU and peak RSS of its tree."""
    if DRY_RUN:
        return dry_run(cmd, cwd)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        load = loadavg()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                start_new_session=True)
        deadline = start + timeout
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = {
            "cmd": " ".join(cmd), "rc": 124 if timed_out else proc.returncode, "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss,
            "load": load, "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }
    if result["rc"] != 0:
        log(f"exit {result['rc']}: {result['cmd']}\n{result['stderr'][-2000:]}")
    return result


def dry_run(cmd, cwd):
    """--dry-run's run(): prints cmd and notes the programs and files it names."""
    print(f"  {' '.join(cmd)}" + (f"  (in {cwd})" if cwd else ""), flush=True)
    for i, arg in enumerate(cmd):
        if arg.startswith("-"):
            continue  # an option (gbench's --benchmark_out is a fresh temporary file)
        if os.path.isabs(arg):
            DRY_PATHS[arg] = os.path.exists(arg)
        elif i == 0:
            DRY_PATHS[arg] = shutil.which(arg) is not None
    return {"cmd": " ".join(cmd), "rc": 0, "wall_s": 0.0, "cpu_s": 0.0, "maxrss_kib": 0,
            "load": 0.0, "stdout": "", "stderr": "", "dry_run": True}


def gbench(binary, bench_filter, extra=(), timeout=900):
    """Runs a Google Benchmark binary; returns its run plus the JSON benchmarks by name."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        r = run([binary, f"--benchmark_filter={bench_filter}", f"--benchmark_out={out.name}",
                 "--benchmark_out_format=json", *extra], timeout)
        try:
            with open(out.name) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {"benchmarks": []}
    r["benchmarks"] = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"]
    r["context"] = data.get("context", {})
    r.pop("stdout")
    return r


class Compare:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = lambda *p: os.path.join(self.build, *p)
        self.work = tempfile.mkdtemp(prefix="ranklab-compare.")
        # bench/compare names itself as a user types it, without this machine's paths.
        command = os.environ.get("RANKLAB_COMPARE_COMMAND", " ".join(sys.argv))
        self.raw = {"samples": {}, "machine": {} if DRY_RUN else machine(), "command": command,
                    "started": now_utc(), "rounds": args.rounds}

    def add(self, key, sample):
        self.raw["samples"].setdefault(key, []).append(sample)

    # ------------------------------------------------------------------ peers' binaries
    def build_peers(self):
        mpi = os.path.join(self.work, "mpi")
        os.makedirs(mpi)
        src = os.path.join(MPI_DIR, "allreduce_bench.c")
        scale = os.path.join(ROOT, "bench", "peers", "scale_allreduce.c")
        for cmd in (["mpicc", "-O2", "-o", f"{mpi}/allreduce_ompi", src],
                    ["smpicc", "-O2", "-o", f"{mpi}/allreduce_smpi", src],
                    ["smpicc", "-O2", "-o", f"{mpi}/scale_smpi", scale]):
            if run(cmd, 300)["rc"] != 0:
                sys.exit(f"compare: could not build the peers' programs: {' '.join(cmd)}")
        # The platform of ../shared/bench/mpi/run_smpi.sh: 4,096 single-core hosts, 10 GB/s
        # 1 us links, a 100 GB/s backbone; one rank per host.
        with open(f"{mpi}/cluster.xml", "w") as f:
            f.write("<?xml version='1.0'?>\n"
                    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                    '<platform version="4.1">\n'
                    '  <cluster id="cluster" prefix="node-" suffix="" radical="0-4095"\n'
                    '           speed="1Gf" bw="10GBps" lat="1us" bb_bw="100GBps" bb_lat="0us"/>\n'
                    "</platform>\n")
        with open(f"{mpi}/hosts", "w") as f:
            f.write("".join(f"node-{i}\n" for i in range(4096)))
        # Not self.mpi: that name is the mpi section's method, which main() looks up by name.
        self.peers = mpi

    def build_mpi_peer(self):
        """The raw Open MPI side of the mpi section (bench/peers/mpi_allreduce.c)."""
        self.mpi_raw = os.path.join(self.work, "mpi_allreduce_raw")
        cmd = ["mpicc", "-O2", "-o", self.mpi_raw,
               os.path.join(ROOT, "bench", "peers", "mpi_allreduce.c")]
        if run(cmd, 300)["rc"] != 0:
            sys.exit(f"compare: could not build the raw Open MPI peer: {' '.join(cmd)}")

    def smpirun(self, np_, program, args, tree):
        return ["smpirun", "-platform", f"{self.peers}/cluster.xml", "-hostfile",
                f"{self.peers}/hosts", "-np", str(np_), "-no-privatize", program, *args,
                *SMPI_FAST, *(SMPI_TREE if tree else [])]

    # ------------------------------------------------------------------ sections
    def step(self, round_):
        r = gbench(self.bin("bench", "step_bench"), "BM_SeedStep/",
                   ["--benchmark_min_time=1"])
        self.add("step/ranklab", r)
        r = run([self.bin("cli", "ranklab"), "run"], 300, cwd=self.work)
        r["stdout"] = r["stdout"][-3000:]
        self.add("step/ranklab_run", r)
        for backend in ("gloo", "threads"):
            r = run([PYTHON, os.path.join(TORCH_DIR, "parallel_reference.py"), "--mode",
                     "hybrid", "--steps", "30", "--backend", backend], 600, cwd=self.work)
            r.update(parse_torch(r["stdout"]))
            r["stdout"] = r["stdout"][-3000:]
            self.add(f"step/torch_{backend}", r)

    def allreduce(self, round_):
        counts = "|".join(str(c) for c in ALLREDUCE_SIZES)
        # With the floor under any fiber design beside it: eight bare Boost.Fiber fibers meeting.
        r = gbench(self.bin("bench", "emulator_bench"),
                   f"BM_AllReduce/threads:1/count:({counts})/world:8/algo:0/|BM_FiberRendezvous")
        self.add("allreduce/ranklab", r)
        for count, (iters, warmup) in ALLREDUCE_SIZES.items():
            args = [str(count), str(iters), str(warmup), "allreduce"]
            r = run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "8",
                     f"{self.peers}/allreduce_ompi", *args], 600)
            r.update(parse_mpi(r["stdout"]))
            r.pop("stdout")
            self.add(f"allreduce/ompi/{count}", r)
            r = run(self.smpirun(8, f"{self.peers}/allreduce_smpi", args, tree=False), 600)
            r.update(parse_mpi(r["stdout"]))
            r.pop("stdout")
            self.add(f"allreduce/smpi/{count}", r)

    def scale(self, round_):
        ranklab = self.bin("cli", "ranklab")
        for n in SCALE_WORLDS + SCALE_RANKLAB_ONLY:
            for threads in ([1, 2] if n in SCALE_RANKLAB_ONLY else [1]):
                r = run([ranklab, "run", "--scenario", "allreduce", "--world", str(n), "--count",
                         "1", "--threads", str(threads)], 300)
                r.pop("stdout")
                self.add(f"scale/ranklab/{n}/t{threads}", r)
            if n in SCALE_WORLDS:
                r = run(self.smpirun(n, f"{self.peers}/scale_smpi", [], tree=True), 600)
                r.pop("stdout")
                self.add(f"scale/smpi/{n}", r)
        r = run([ranklab, "run", "--scenario", "allreduce", "--world", str(SCALE_MILLION),
                 "--count", "1"], 300)
        r.pop("stdout")
        self.add(f"scale/ranklab/{SCALE_MILLION}/t1", r)
        # Issue 30 §2: the floor each large run is judged against, in the same round: as
        # many bare fibers on the same stacks, each switched through once.
        for n in SCALE_RANKLAB_ONLY + [SCALE_MILLION]:
            r = run([self.bin("bench", "bare_fibers"), str(n)], 300)
            r.pop("stdout")
            self.add(f"scale/bare/{n}", r)

    def mpi(self, round_):
        self.raw["mpi_steps"] = MPI_STEPS
        mpirun = lambda program, *args: [MPIRUN_SH, "mpirun", "8", program, *map(str, args)]  # noqa: E731
        for count, iters in MPI_SIZES.items():
            for algo in ("mpi", "direct"):
                r = run(mpirun(self.bin("bench", "mpi_allreduce_bench"), count, iters, algo), 600)
                r.update(parse_results(r["stdout"]))
                r.pop("stdout")
                self.add(f"mpi/allreduce/ranklab_{algo}/{count}", r)
            r = run(mpirun(self.mpi_raw, count, iters), 600)
            r.update(parse_results(r["stdout"]))
            r.pop("stdout")
            self.add(f"mpi/allreduce/raw/{count}", r)
        for algo in ("direct", "mpi"):
            r = run(mpirun(self.bin("bench", "mpi_step_bench"), MPI_STEPS, algo), 600)
            r.update(parse_results(r["stdout"]))
            r.pop("stdout")
            self.add(f"mpi/step/ranklab_{algo}", r)
        r = run([PYTHON, os.path.join(TORCH_DIR, "parallel_reference.py"), "--mode", "hybrid",
                 "--steps", "30", "--backend", "gloo"], 600, cwd=self.work)
        r.update(parse_torch(r["stdout"]))
        r["stdout"] = r["stdout"][-3000:]
        self.add("mpi/step/torch_gloo", r)

    def algorithms(self, round_):
        r = gbench(self.bin("bench", "emulator_bench"),
                   "BM_(AllReduce|Broadcast|Reduce)/threads:[12]/count:[0-9]+/world:8/|BM_Memcpy",
                   ["--benchmark_repetitions=3", "--benchmark_min_time=0.2"], timeout=1800)
        self.add("algorithms/ranklab", r)

    def dense(self, round_):
        # Both binaries in each round; inside each, its variants (the step on every ISA's
        # kernels) randomly interleaved, so the load falls on all of them alike.
        for name in ("dense_bench", "dense_bench_native"):
            path = self.bin("bench", name)
            if os.path.exists(path) or DRY_RUN:
                r = gbench(path, ".", ["--benchmark_repetitions=3",
                                       "--benchmark_enable_random_interleaving=true"])
                r["kernels"] = r.pop("context", {}).get("kernels")
                self.add(f"dense/{name}", r)

    def replay(self, round_):
        r = gbench(self.bin("bench", "replay_bench"), "BM_Replay",
                   ["--benchmark_repetitions=2"], timeout=900)
        self.add("replay/ranklab", r)
        # Issue 17 §3: `ranklab replay FILE` end to end (reading and replay) on one core, on
        # bench/big_trace.sh's trace: a ring all_reduce of 512 i64 over 512 ranks, 1,047,040
        # events, 259 MB, made by ranklab itself.
        ranklab = self.bin("cli", "ranklab")
        trace = os.path.join(self.work, "big.jsonl")
        made = run([ranklab, "run", *BIG_TRACE, "--trace", trace], 600)
        if made["rc"] != 0:
            return
        for _ in range(REPLAY_END_TO_END_RUNS):
            r = run([*ONE_CORE, ranklab, "replay", trace], 600)
            m = re.search(r"operations: (\d+) of (\d+) re-issued", r["stdout"])
            r["events"] = int(m.group(2)) if m else None
            r["trace_mib"] = os.path.getsize(trace) / 2**20 if not DRY_RUN else None
            r["stdout"] = r["stdout"][-2000:]
            self.add("replay/end_to_end", r)
        if not DRY_RUN:
            os.remove(trace)

    def readers(self, round_):
        # Issue 29 §3: the NCCL log reader at least as fast as the JSONL reader per operation.
        r = gbench(self.bin("bench", "import_bench"), ".", ["--benchmark_repetitions=5"],
                   timeout=900)
        self.add("readers/ranklab", r)

    def explore(self, round_):
        ranklab = self.bin("cli", "ranklab")
        commands = run([ranklab, "--help"], 60)["stdout"]
        if not DRY_RUN and not re.search(r"^\s+explore\b", commands, re.M):
            self.raw["explore_missing"] = True
            return
        # One job, then two, in each round: the two see the same load, and each round's
        # ratio is what the jobs scale by at that moment.
        for jobs in EXPLORE_JOBS:
            r = run([ranklab, "explore", "--run", "--runs", str(EXPLORE_RUNS), "--jobs",
                     str(jobs), "--strategy", "random"], 600, cwd=self.work)
            m = re.search(r"([0-9.]+) schedules/s", r["stdout"])
            r["schedules_per_s"] = float(m.group(1)) if m else None
            r["round"] = round_
            r["stdout"] = r["stdout"][-2000:]
            self.add(f"explore/ranklab/j{jobs}", r)

    # ------------------------------------------------------------------ driver
    def torchrun(self, round_):
        """`ranklab torchrun` beside Gloo on the same 8-process DDP script (the seed's size,
        and hidden 512, whose 16 MiB buckets go through the shared regions), and a hang's
        report."""
        ranklab = self.bin("cli", "ranklab")
        script = os.path.join(ROOT, "bench", "torch_ddp_step.py")
        sides = [("ranklab", []), ("gloo", ["--keep-backend"])]
        models = [("", []), ("_h512", ["--hidden", "512", "--steps", "10", "--warmup", "2"])]
        for model, model_args in models:
            for name, flags in sides if round_ % 2 == 0 else sides[::-1]:
                r = run([ranklab, "torchrun", "--nproc-per-node", "8", "--no-trace", *flags,
                         script, *model_args], 600, cwd=self.work)
                r.update(parse_torch(r["stderr"]))
                r.pop("stdout")
                r["stderr"] = r["stderr"][-2000:]
                self.add(f"torchrun/{name}{model}", r)
        stamp = os.path.join(self.work, "hang_blocked_at")
        r = run([ranklab, "torchrun", "--nproc-per-node", "2",
                 os.path.join(ROOT, "bench", "torch_hang.py"), stamp], 300, cwd=self.work)
        if not DRY_RUN and r["rc"] == 3:
            with open(stamp) as f:
                r["hang_to_exit_s"] = time.time() - float(f.read())
        r.pop("stdout")
        self.add("torchrun/hang", r)

    def main(self):
        wanted = self.args.only.split(",") if self.args.only else SECTIONS
        for name in wanted:
            if name not in SECTIONS:
                sys.exit(f"compare: unknown section '{name}' (known: {', '.join(SECTIONS)})")
        if DRY_RUN:
            print("peers:", flush=True)
        if {"allreduce", "scale"} & set(wanted):
            self.build_peers()
        if "mpi" in wanted:
            self.build_mpi_peer()
        # Compared sections alternate the sides in each round; the others run once.
        alternating = [s for s in wanted
                       if s in ("step", "allreduce", "scale", "mpi", "dense", "explore",
                                "torchrun")]
        once = [s for s in wanted if s not in alternating]
        if DRY_RUN:
            return self.dry_run(alternating + once)
        start = time.monotonic()
        for round_ in range(self.args.rounds):
            for name in alternating:
                log(f"round {round_ + 1}/{self.args.rounds}: {name} (load {loadavg():.1f})")
                getattr(self, name)(round_)
        for name in once:
            log(f"{name} (load {loadavg():.1f})")
            getattr(self, name)(0)
        self.raw["finished"] = now_utc()
        self.raw["total_s"] = time.monotonic() - start
        os.makedirs(self.args.out, exist_ok=True)
        path = os.path.join(self.args.out, "raw.json")
        with open(path, "w") as f:
            json.dump(self.raw, f, indent=1)
        shutil.rmtree(self.work, ignore_errors=True)
        log(f"raw results: {path} ({self.raw['total_s']:.0f} s)")
        return path

    def dry_run(self, sections):
        """--dry-run: one round of each section's commands, then what they need. Fails when a
        file of the source tree that a command names is missing; the build's programs, the
        peers' tools and ../shared are listed, present or not (a test build lacks them)."""
        for name in sections:
            print(f"{name}:", flush=True)
            getattr(self, name)(0)
        shutil.rmtree(self.work, ignore_errors=True)
        print("needs:")
        missing = []
        for path, present in sorted(DRY_PATHS.items()):
            if path.startswith(self.work + os.sep):
                continue  # made by the run itself
            print(f"  {'present' if present else 'absent '}  {path}")
            in_source = (path.startswith(ROOT + os.sep)
                         and not path.startswith(self.build + os.sep))
            if in_source and not present:
                missing.append(path)
        if missing:
            sys.exit("compare: the dry run's commands name files missing from the source tree: "
                     + ", ".join(missing))
        if len(sections) == len(SECTIONS):
            return f"compare: dry run: every section set up ({len(SECTIONS)})"
        return f"compare: dry run: {len(sections)} of {len(SECTIONS)} sections set up"


def parse_torch(text):
    """The figures parallel_reference.py prints for --mode hybrid --steps N (and
    bench/torch_ddp_step.py, through ranklab torchrun)."""
    out = {}
    m = re.search(r"over (\d+) steps: median ([0-9.]+) ms, min ([0-9.]+), max ([0-9.]+)", text)
    if m:
        out.update(steps=int(m.group(1)), step_median_ms=float(m.group(2)),
                   step_min_ms=float(m.group(3)), step_max_ms=float(m.group(4)))
    m = re.search(r"run wall time \(.*\) ([0-9.]+) s", text)
    if m:
        out["run_wall_s"] = float(m.group(1))
    out["passed"] = "ALL CHECKS PASSED" in text
    return out


def parse_mpi(text):
    """allreduce_bench's RESULT line for the all_reduce (real clock: the emulation's cost)."""
    m = re.search(r"RESULT op=allreduce .*", text)
    if not m:
        return {}
    fields = dict(re.findall(r"(\w+)=([^\s]+)", m.group(0)))
    return {"real_med_us": float(fields["real_med_us"]),
            "real_mean_us": float(fields["real_mean_us"]), "iters": int(fields["iters"])}


def parse_results(text):
    """Every RESULT line of an MPI benchmark, by its op: {op: {field: number or text}}."""
    results = {}
    for line in re.findall(r"^RESULT .*", text, re.M):
        fields = dict(re.findall(r"(\w+)=([^\s]+)", line))
        for key, value in fields.items():
            try:
                fields[key] = float(value)
            except ValueError:
                pass
        results[fields.pop("op")] = fields
    return {"results": results}


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def machine():
    info = {"nproc": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()}
    with open("/proc/cpuinfo") as f:
        text = f.read()
    m = re.search(r"model name\s*:\s*(.*)", text)
    info["cpu"] = m.group(1).strip() if m else "?"
    m = re.search(r"cpu MHz\s*:\s*([0-9.]+)", text)
    info["mhz"] = float(m.group(1)) if m else None
    flags = re.search(r"flags\s*:\s*(.*)", text)
    info["simd"] = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f")
                    if flags and f" {f} " in f" {flags.group(1)} "]
    with open("/proc/meminfo") as f:
        info["mem_kib"] = int(re.search(r"MemTotal:\s*(\d+)", f.read()).group(1))
    for name, cmd in (("gcc", ["g++", "--version"]), ("git", ["git", "-C", ROOT, "rev-parse",
                                                               "--short", "HEAD"]),
                      ("ompi", ["mpirun", "--version"]), ("smpi", ["smpirun", "--version"])):
        try:
            info[name] = subprocess.run(cmd, capture_output=True, text=True,
                                        timeout=30).stdout.splitlines()[0].strip()
        except (OSError, IndexError, subprocess.TimeoutExpired):
            info[name] = "?"
    try:
        info["torch"] = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"],
                                       capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        info["torch"] = "?"
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="ranklab build folder with the benchmarks")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds [3]")
    parser.add_argument("--only", help=f"comma list out of {','.join(SECTIONS)} [all]")
    parser.add_argument("--dry-run", action="store_true",
                        help="print each section's commands (one round) and run none")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "ranklab-compare"),
                        help="where raw.json goes [$TMPDIR/ranklab-compare]")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    global DRY_RUN
    DRY_RUN = args.dry_run
    print(Compare(args).main())


if __name__ == "__main__":
    main()
