#!/usr/bin/python3
"""PyTorch reference of ranklab's training step; exports the golden sets the C++ tests read.

The step is the seed's (shared/seeds/000, ``parallel_all_in_one_test.py``): an L-layer MLP,
layer l = ``linear(gelu(linear(x, W1, b1)), W2) + b2`` (W1 [I,H], b1 [I], W2 [H,I], b2 [H],
exact erf GELU, no residual, no norm), MSE loss (mean over B*S*H) per DP replica.

* dense: one process, full model, every replica; gradients averaged over the replicas.
* TP x PP x DP (TP, PP and DP alone are the layouts with the other degrees 1): every rank is
  a thread of this process with real ``torch.distributed`` Gloo process groups on 127.0.0.1
  (world, and its TP, PP and DP groups). TP is Megatron's: rank t holds rows
  [t*I/TP, (t+1)*I/TP) of W1 and b1, the same columns of W2 and all of b2; the layer input
  goes through copy-to-TP (identity forward, all_reduce SUM of its gradient backward) and the
  partial outputs through reduce-from-TP (all_reduce SUM forward, identity backward) before
  ``+ b2``. PP stage p holds layers [p*L/PP, (p+1)*L/PP) and sends activations forward and
  their gradients backward; the last stage computes the loss. DP all_reduces (SUM) every
  gradient over the DP group and divides by DP. rank = d*(PP*TP) + p*TP + t.

Every distributed gradient is checked against the dense one before anything is written
(|error| <= rtol * max|dense| per group; rtol 1e-5 float32, 1e-12 float64).

Weights and data: N(0, std^2) drawn in float64 from ``torch.Generator().manual_seed(s)`` and
cast, with ranklab's seed scheme (model/init.hpp): W1 std 1/sqrt(H) seed 10000*k+100+10*l,
b1 std 0.1 (+1), W2 std 1/sqrt(I) (+2), b2 std 0.1 (+3); inputs of replica d std 1 seed
10000*k+3000+d, targets std 0.5 seed 10000*k+4000+d.

Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3)::

    /usr/bin/python3 tests/reference/torch_reference.py regenerate     # the shipped sets
    /usr/bin/python3 tests/reference/torch_reference.py export --tp 2 --pp 1 --dp 4 \\
        --batch 4 --seq 8 --hidden 16 --inter 32 --layers 2 --seed 7 --out DIR

Golden layout (NumPy .npy, little endian, C order; every name ends in .f32.npy or .f64.npy):
``layer{l}.{w1,b1,w2,b2}`` full weights, ``replica{d}.{inputs,targets,output}`` [B,S,H],
``dense.loss`` [DP], ``dense.grad.layer{l}.*`` DP-averaged dense gradients, ``hybrid.loss``
[DP] (last stage, TP rank 0), ``hybrid.rank{r}.grad.layer{l}.*`` rank r's TP shard after DP
averaging (l global), and manifest.json (config, ranks and their shards, every file).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import threading
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.distributed as dist
from torch.nn import functional

PARAMETERS = ("w1", "b1", "w2", "b2")
DTYPES = {"float32": (torch.float32, "f32"), "float64": (torch.float64, "f64")}
RELATIVE_TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}
# The loader (model/golden.cpp) reads this format; ranklab's save_golden writes the same string.
FORMAT = "parallel_reference golden data, version 1 (NumPy .npy, little endian, C order)"
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "tests/reference/torch_reference.py"
GLOO_TIMEOUT = datetime.timedelta(seconds=60)


@dataclass(frozen=True)
class Config:
    tp: int
    pp: int
    dp: int
    batch: int
    seq: int
    hidden: int
    inter: int
    layers: int
    seed: int

    @property
    def world(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def name(self) -> str:
        return (f"tp{self.tp}pp{self.pp}dp{self.dp}_b{self.batch}s{self.seq}h{self.hidden}"
                f"i{self.inter}l{self.layers}_seed{self.seed}")

    def rank(self, d: int, p: int, t: int) -> int:
        return d * self.pp * self.tp + p * self.tp + t

    def coords(self, rank: int) -> Tuple[int, int, int]:
        return rank // (self.pp * self.tp), (rank // self.tp) % self.pp, rank % self.tp

    def stage_layers(self, p: int) -> List[int]:
        per_stage = self.layers // self.pp
        return list(range(p * per_stage, (p + 1) * per_stage))

    def shard(self, t: int) -> Tuple[int, int]:
        local = self.inter // self.tp
        return t * local, (t + 1) * local

    def check(self) -> None:
        sizes = (self.tp, self.pp, self.dp, self.batch, self.seq, self.hidden, self.inter, self.layers)
        if min(sizes) <= 0 or self.seed < 0:
            raise SystemExit(f"{SCRIPT}: every size must be positive and the seed non-negative: {self}")
        if self.layers % self.pp:
            raise SystemExit(f"{SCRIPT}: --layers {self.layers} does not divide by --pp {self.pp}")
        if self.inter % self.tp:
            raise SystemExit(f"{SCRIPT}: --inter {self.inter} does not divide by --tp {self.tp}")


# The sets shipped under tests/reference/golden: the seed's configuration, a 24-rank hybrid
# with TP4 and DP3, and TP, PP and DP alone, each on its own small shape and seed.
SHIPPED = (
    Config(tp=2, pp=2, dp=2, batch=8, seq=16, hidden=32, inter=64, layers=4, seed=0),
    Config(tp=4, pp=2, dp=3, batch=2, seq=3, hidden=8, inter=16, layers=2, seed=1),
    Config(tp=2, pp=1, dp=1, batch=2, seq=4, hidden=8, inter=16, layers=2, seed=2),
    Config(tp=1, pp=4, dp=1, batch=2, seq=3, hidden=6, inter=12, layers=4, seed=3),
    Config(tp=1, pp=1, dp=4, batch=1, seq=5, hidden=4, inter=8, layers=2, seed=4),
)


# ----------------------------------------------------------------------------- the problem


@dataclass
class Problem:
    config: Config
    dtype: torch.dtype
    layers: List[Tuple[torch.Tensor, ...]]  # per layer (w1, b1, w2, b2), full
    inputs: List[torch.Tensor]               # per replica, [B,S,H]
    targets: List[torch.Tensor]              # per replica, [B,S,H]


def normal(shape: Sequence[int], seed: int, std: float, dtype: torch.dtype) -> torch.Tensor:
    """N(0, std^2), drawn in float64 (so float32 data is the rounded float64 data)."""
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(tuple(shape), generator=generator, dtype=torch.float64) * std).to(dtype)


def make_problem(c: Config, dtype: torch.dtype) -> Problem:
    base = 10000 * c.seed
    layers = []
    for l in range(c.layers):
        seed = base + 100 + 10 * l
        layers.append((normal((c.inter, c.hidden), seed + 0, c.hidden ** -0.5, dtype),
                       normal((c.inter,), seed + 1, 0.1, dtype),
                       normal((c.hidden, c.inter), seed + 2, c.inter ** -0.5, dtype),
                       normal((c.hidden,), seed + 3, 0.1, dtype)))
    activation = (c.batch, c.seq, c.hidden)
    inputs = [normal(activation, base + 3000 + d, 1.0, dtype) for d in range(c.dp)]
    targets = [normal(activation, base + 4000 + d, 0.5, dtype) for d in range(c.dp)]
    return Problem(c, dtype, layers, inputs, targets)


# ----------------------------------------------------------------------------- dense step


@dataclass
class DenseResult:
    outputs: List[torch.Tensor]              # per replica
    losses: List[torch.Tensor]               # per replica, 0-d
    grads: List[Tuple[torch.Tensor, ...]]    # per layer, averaged over the replicas


def dense_step(problem: Problem) -> DenseResult:
    outputs, losses, grads = [], [], None
    for x, target in zip(problem.inputs, problem.targets):
        params = [tuple(p.clone().requires_grad_(True) for p in layer) for layer in problem.layers]
        y = x
        for w1, b1, w2, b2 in params:
            y = functional.linear(functional.gelu(functional.linear(y, w1, b1)), w2) + b2
        loss = functional.mse_loss(y, target)
        loss.backward()
        outputs.append(y.detach())
        losses.append(loss.detach())
        replica = [tuple(p.grad for p in layer) for layer in params]
        grads = replica if grads is None else [tuple(a + b for a, b in zip(g, r))
                                               for g, r in zip(grads, replica)]
    dp = len(problem.inputs)
    return DenseResult(outputs, losses, [tuple(g / dp for g in layer) for layer in grads])


# ----------------------------------------------------------------------------- distributed step


class CopyToTensorParallel(torch.autograd.Function):
    """Identity forward; all_reduce (SUM) of the input gradient over the TP group backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, gradient):
        gradient = gradient.contiguous().clone()
        ctx.group.allreduce([gradient]).wait()
        return gradient, None


class ReduceFromTensorParallel(torch.autograd.Function):
    """all_reduce (SUM) of the partial outputs over the TP group forward; identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.contiguous().clone()
        group.allreduce([x]).wait()
        return x

    @staticmethod
    def backward(ctx, gradient):
        return gradient, None


def shard_of(full: torch.Tensor, name: str, first: int, end: int) -> torch.Tensor:
    if name in ("w1", "b1"):
        return full[first:end]
    return full[:, first:end] if name == "w2" else full


@dataclass
class RankResult:
    rank: int
    loss: Optional[torch.Tensor]             # last stage only
    grads: List[Tuple[torch.Tensor, ...]]    # per stage layer, the rank's shard


def process_group(store, prefix: str, ranks: List[int], rank: int):
    """A Gloo group of `ranks` on the loopback interface (nothing leaves the machine)."""
    options = dist.ProcessGroupGloo._Options()
    options._devices = [dist.ProcessGroupGloo.create_device(interface="lo")]
    options._timeout = GLOO_TIMEOUT
    return dist.ProcessGroupGloo(dist.PrefixStore(prefix, store), ranks.index(rank), len(ranks),
                                 options)


def rank_step(problem: Problem, store, rank: int) -> RankResult:
    """One rank of the TP x PP x DP step, with its own Gloo groups."""
    c = problem.config
    d, p, t = c.coords(rank)
    tp_ranks = [c.rank(d, p, k) for k in range(c.tp)]
    pp_ranks = [c.rank(d, k, t) for k in range(c.pp)]
    dp_ranks = [c.rank(k, p, t) for k in range(c.dp)]
    # Every rank builds the groups in the same order, so their rendezvous cannot deadlock.
    tp_group = process_group(store, f"tp.{d}.{p}", tp_ranks, rank)
    pp_group = process_group(store, f"pp.{d}.{t}", pp_ranks, rank)
    dp_group = process_group(store, f"dp.{p}.{t}", dp_ranks, rank)

    first, end = c.shard(t)
    params = [tuple(shard_of(full, name, first, end).clone().contiguous().requires_grad_(True)
                    for name, full in zip(PARAMETERS, problem.layers[l]))
              for l in c.stage_layers(p)]
    activation = problem.inputs[d]
    if p > 0:
        activation = torch.empty_like(activation)
        pp_group.recv([activation], p - 1, 0).wait()
        activation.requires_grad_(True)
    y = activation
    for w1, b1, w2, b2 in params:
        y = CopyToTensorParallel.apply(y, tp_group)
        partial = functional.linear(functional.gelu(functional.linear(y, w1, b1)), w2)
        y = ReduceFromTensorParallel.apply(partial, tp_group) + b2

    loss = None
    if p < c.pp - 1:
        pp_group.send([y.detach().contiguous()], p + 1, 0).wait()
        gradient = torch.empty_like(y)
        pp_group.recv([gradient], p + 1, 1).wait()
        y.backward(gradient)
    else:
        loss = functional.mse_loss(y, problem.targets[d])
        loss.backward()
    if p > 0:
        pp_group.send([activation.grad.contiguous()], p - 1, 1).wait()

    grads = []
    for layer in params:
        averaged = []
        for param in layer:
            gradient = param.grad.contiguous()
            dp_group.allreduce([gradient]).wait()
            averaged.append(gradient / c.dp)
        grads.append(tuple(averaged))
    return RankResult(rank, None if loss is None else loss.detach(), grads)


def distributed_step(problem: Problem) -> List[RankResult]:
    """Runs every rank as a thread; the results are indexed by rank."""
    store = dist.HashStore()
    results: List[Optional[RankResult]] = [None] * problem.config.world
    errors: List[str] = []

    def body(rank: int) -> None:
        try:
            results[rank] = rank_step(problem, store, rank)
        except Exception as error:  # reported below; the other ranks time out on Gloo
            errors.append(f"rank {rank}: {error!r}")

    threads = [threading.Thread(target=body, args=(r,)) for r in range(problem.config.world)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"{SCRIPT}: {problem.config.name}: the distributed step failed: {errors[0]}")
    return results


# ----------------------------------------------------------------------------- check and export


def check_against_dense(problem: Problem, dense: DenseResult, ranks: List[RankResult]) -> float:
    """Largest relative error (to each group's largest dense magnitude) of the distributed
    losses and gradients; exits if it exceeds the dtype's tolerance."""
    c, worst = problem.config, 0.0
    def relative(pairs) -> float:
        scale = max(float(b.abs().max()) for _, b in pairs)
        error = max(float((a - b).abs().max()) for a, b in pairs)
        return error / scale if scale > 0 else error
    for result in ranks:
        d, p, t = c.coords(result.rank)
        first, end = c.shard(t)
        pairs = [(g, shard_of(full, name, first, end))
                 for l, layer in zip(c.stage_layers(p), result.grads)
                 for name, g, full in zip(PARAMETERS, layer, dense.grads[l])]
        if result.loss is not None:
            pairs.append((result.loss.reshape(1), dense.losses[d].reshape(1)))
        worst = max(worst, relative(pairs))
    if worst > RELATIVE_TOLERANCE[problem.dtype]:
        raise SystemExit(f"{SCRIPT}: {c.name} {problem.dtype}: distributed step differs from the "
                         f"dense one by {worst:.2e} (tolerance {RELATIVE_TOLERANCE[problem.dtype]:.0e})")
    return worst


class Writer:
    """Writes .npy files into one directory and keeps their manifest entries."""

    def __init__(self, directory: str, suffix: str):
        self.directory, self.suffix, self.files = directory, suffix, []

    def add(self, stem: str, tensor, role: str, meaning: str) -> None:
        array = np.ascontiguousarray(tensor.detach().numpy() if torch.is_tensor(tensor) else tensor)
        name = f"{stem}.{self.suffix}.npy"
        np.save(os.path.join(self.directory, name), array)
        self.files.append({"name": name, "shape": list(array.shape), "dtype": str(array.dtype),
                           "role": role, "meaning": meaning})

    def layer(self, stem: str, tensors, role: str, meaning: str) -> None:
        for name, tensor in zip(PARAMETERS, tensors):
            self.add(f"{stem}.{name}", tensor, role, f"{meaning} {name}")


def write_dtype(directory: str, problem: Problem, dense: DenseResult, ranks: List[RankResult],
                suffix: str) -> List[dict]:
    c, out = problem.config, Writer(directory, suffix)
    for l, layer in enumerate(problem.layers):
        out.layer(f"layer{l}", layer, "input", f"full (unsharded) layer {l}")
    for d in range(c.dp):
        out.add(f"replica{d}.inputs", problem.inputs[d], "input", f"inputs [B,S,H] of DP replica {d}")
        out.add(f"replica{d}.targets", problem.targets[d], "input", f"MSE targets of DP replica {d}")
        out.add(f"replica{d}.output", dense.outputs[d], "output",
                f"dense output of the last layer for replica {d}")
    out.add("dense.loss", torch.stack(dense.losses), "output", "dense mse_loss per DP replica")
    for l, layer in enumerate(dense.grads):
        out.layer(f"dense.grad.layer{l}", layer, "output",
                  f"dense gradient, averaged over DP, of layer {l}")
    # A replica's loss as its last stage's TP rank 0 computed it.
    losses = {c.coords(r.rank)[0]: r.loss for r in ranks
              if r.loss is not None and c.coords(r.rank)[2] == 0}
    out.add("hybrid.loss", torch.stack([losses[d] for d in range(c.dp)]), "output",
            "loss of the TP/PP/DP run per replica (last stage, TP rank 0)")
    for result in ranks:
        for l, layer in zip(c.stage_layers(c.coords(result.rank)[1]), result.grads):
            out.layer(f"hybrid.rank{result.rank}.grad.layer{l}", layer, "output",
                      f"rank {result.rank} local gradient after DP averaging, layer {l}")
    return out.files


def manifest(c: Config, dtype_names: List[str], files: List[dict], command: str) -> dict:
    ranks = []
    for rank in range(c.world):
        d, p, t = c.coords(rank)
        shard = list(c.shard(t))
        ranks.append({"rank": rank, "d": d, "p": p, "t": t, "layers": c.stage_layers(p),
                      "w1_rows": shard, "b1_range": shard, "w2_cols": shard, "b2": "full copy"})
    return {
        "format": FORMAT,
        "generator": command,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "config": {"tp": c.tp, "pp": c.pp, "dp": c.dp, "world_size": c.world, "batch": c.batch,
                   "seq": c.seq, "hidden": c.hidden, "inter": c.inter, "layers": c.layers,
                   "seed": c.seed, "dtypes": dtype_names},
        "file_suffix": {name: DTYPES[name][1] for name in dtype_names},
        "model": {
            "layer": "y = linear(gelu(linear(x, w1, b1)), w2) + b2; gelu is the exact erf form; "
                     "no residual, no norm",
            "loss": "mse_loss(y_last, targets), mean over all B*S*H elements, one loss per DP replica",
            "dp_gradient": "per-replica gradients summed over the DP group, then divided by DP",
            "distributed": "ranks as threads of one process over torch.distributed Gloo groups",
        },
        "rank_mapping": "rank = d*(PP*TP) + p*TP + t",
        "ranks": ranks,
        "files": files,
    }


def clear_golden_directory(directory: str) -> None:
    """Makes `directory` an empty place for a set: a set is always written whole, so no
    stale file survives. Only an earlier golden set (it has manifest.json) is cleared;
    anything else that is not empty is refused."""
    if not os.path.exists(directory):
        os.makedirs(directory)
        return
    if not os.path.isdir(directory):
        raise SystemExit(f"{SCRIPT}: {directory}: exists and is not a directory")
    names = os.listdir(directory)
    if names and "manifest.json" not in names:
        raise SystemExit(f"{SCRIPT}: {directory}: not empty and not a golden set; "
                         f"give a new directory")
    for name in names:
        if name == "manifest.json" or name.endswith(".npy"):
            os.remove(os.path.join(directory, name))


def export(c: Config, directory: str, dtype_names: List[str], command: str) -> None:
    c.check()
    clear_golden_directory(directory)
    files = []
    for name in dtype_names:
        dtype, suffix = DTYPES[name]
        problem = make_problem(c, dtype)
        dense = dense_step(problem)
        ranks = distributed_step(problem)
        worst = check_against_dense(problem, dense, ranks)
        files += write_dtype(directory, problem, dense, ranks, suffix)
        print(f"{c.name} {name}: {c.world} ranks match the dense step (relative error {worst:.1e})")
    with open(os.path.join(directory, "manifest.json"), "w") as handle:
        json.dump(manifest(c, dtype_names, files, command), handle, indent=1)
        handle.write("\n")


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog=SCRIPT, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    regenerate = commands.add_parser("regenerate", help="rewrite every shipped golden set")
    regenerate.add_argument("--out", default=os.path.join(HERE, "golden"),
                            help="parent directory (default: tests/reference/golden)")
    one = commands.add_parser("export", help="export one golden set")
    for key in ("tp", "pp", "dp"):
        one.add_argument(f"--{key}", type=int, default=1)
    defaults = {"batch": 8, "seq": 16, "hidden": 32, "inter": 64, "layers": 4, "seed": 0}
    for key, value in defaults.items():
        one.add_argument(f"--{key}", type=int, default=value, help=f"default {value}")
    one.add_argument("--dtype", default="float32,float64", help="comma-separated: float32, float64")
    one.add_argument("--out", required=True, help="directory to write (replaced if it exists)")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)  # one intra-op thread per rank: reproducible, bit for bit
    if args.command == "regenerate":
        for c in SHIPPED:
            export(c, os.path.join(args.out, c.name), list(DTYPES), f"{SCRIPT} regenerate")
        return 0
    names = [name.strip() for name in args.dtype.split(",") if name.strip()]
    unknown = [name for name in names if name not in DTYPES]
    if unknown or not names:
        parser.error(f"--dtype: expected float32 and/or float64, got {args.dtype!r}")
    c = Config(args.tp, args.pp, args.dp, args.batch, args.seq, args.hidden, args.inter,
               args.layers, args.seed)
    command = (f"{SCRIPT} export --tp {c.tp} --pp {c.pp} --dp {c.dp} --batch {c.batch} --seq {c.seq} "
               f"--hidden {c.hidden} --inter {c.inter} --layers {c.layers} --seed {c.seed} "
               f"--dtype {','.join(names)} --out {os.path.basename(os.path.normpath(args.out))}")
    export(c, args.out, names, command)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
