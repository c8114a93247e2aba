"""The seed's TP x PP x DP training step, one rank per process: tests/reference's rank_step
(Megatron's column/row-parallel MLP, a pipeline of stages, data-parallel gradient averaging),
with its groups made by torch.distributed.new_group as a torchrun script makes them. Each
rank checks its loss and gradients against the dense step; with --out it writes them, for the
comparison with Gloo's run of the same script (--keep-backend)."""
import argparse
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "reference"))
import torch_reference as reference  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--config", type=int, default=0, help="index into reference.SHIPPED")
parser.add_argument("--dtype", choices=sorted(reference.DTYPES), default="float32")
parser.add_argument("--out", default="")
args = parser.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
config = reference.SHIPPED[args.config]
if world != config.world:
    sys.exit(f"{config.name} needs {config.world} processes, not {world}")
problem = reference.make_problem(config, reference.DTYPES[args.dtype][0])

# new_group is collective over the world: every rank makes every group, in one order.
groups = {}
layouts = [[[config.rank(d, p, t) for t in range(config.tp)]
            for d in range(config.dp) for p in range(config.pp)],
           [[config.rank(d, p, t) for p in range(config.pp)]
            for d in range(config.dp) for t in range(config.tp)],
           [[config.rank(d, p, t) for d in range(config.dp)]
            for p in range(config.pp) for t in range(config.tp)]]
for kind in layouts:
    for ranks in kind:
        groups[tuple(ranks)] = dist.new_group(ranks)
reference.process_group = lambda store, prefix, ranks, member: groups[tuple(ranks)]

result = reference.rank_step(problem, None, rank)
worst = reference.check_against_dense(problem, reference.dense_step(problem), [result])
if args.out:
    torch.save({"loss": result.loss, "grads": result.grads},
               os.path.join(args.out, f"rank{rank}.pt"))
print(f"rank {rank}: {config.name} {args.dtype}: within {worst:.1e} of the dense step")
