"""One DistributedDataParallel training step, timed: the script bench/compare's torchrun section
runs under `ranklab torchrun` and, with --keep-backend, on PyTorch's own Gloo. An MLP the size
of the seed's (hidden 32, intermediate 64, 4 layers, 8 samples of 16 tokens per rank), float32;
`--hidden 512` makes it 4.2 M parameters, so DDP's all_reduce carries 16 MiB buckets (the
payloads a real model's gradients give).

Prints, on rank 0: "torch step over N steps: median X ms, min Y, max Z".
"""
import argparse
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--warmup", type=int, default=5)
parser.add_argument("--hidden", type=int, default=32)
args = parser.parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(args.hidden, 2 * args.hidden), torch.nn.GELU(),
               torch.nn.Linear(2 * args.hidden, args.hidden)]
model = DistributedDataParallel(torch.nn.Sequential(*layers))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(8 * 16, args.hidden)
target = torch.randn(8 * 16, args.hidden)
times = []
for step in range(args.warmup + args.steps):
    dist.barrier()
    start = time.perf_counter()
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(data), target).backward()
    optimizer.step()
    if step >= args.warmup:
        times.append((time.perf_counter() - start) * 1e3)
if rank == 0:
    print(f"torch step over {len(times)} steps: median {statistics.median(times):.3f} ms, "
          f"min {min(times):.3f}, max {max(times):.3f}")
