"""DistributedDataParallel, unmodified, for a few steps of SGD on a small MLP. Every rank
checks its parameters against the same model trained in-process on the whole batch (DDP's
averaged gradient is the full batch's), and writes them with --out for Gloo's comparison."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="")
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)


def make_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).double()


data = torch.randn(world * 4, 8, dtype=torch.float64)
target = torch.randn(world * 4, 4, dtype=torch.float64)

model = DistributedDataParallel(make_model())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
reference = make_model()
reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
mine = slice(rank * 4, rank * 4 + 4)
for step in range(args.steps):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data[mine]), target[mine])
    loss.backward()
    optimizer.step()
    reference_optimizer.zero_grad()
    torch.nn.functional.mse_loss(reference(data), target).backward()
    reference_optimizer.step()

for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
    error = (p - q).abs().max().item()
    if error > 1e-12:
        raise AssertionError(f"rank {rank}: {name} differs from the full-batch model by {error}")
if args.out:
    torch.save({n: p.detach() for n, p in model.module.named_parameters()},
               os.path.join(args.out, f"rank{rank}.pt"))
print(f"rank {rank}: DDP matches the full-batch model after {args.steps} steps")
