"""Collectives that return before they complete. An async all_reduce stays outstanding across a
ring of blocking sends and receives (where an all_reduce that completed before returning would
wait for ranks still in the ring); then DDP, whose buckets' all_reduces are posted during
backward and completed at its end: plain, static graph (its first step launches every bucket
from a final callback), unused parameters, and two comm hooks (the group's own allreduce and
fp16 compression through dist.all_reduce(async_op=True)). Every rank's results go to --out for
the comparison with Gloo; with --sleep each process waits at random (the OS's timing, which
must not change the trace)."""
import argparse
import os
import random
import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="")
parser.add_argument("--sleep", action="store_true")
args = parser.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
on_ranklab = dist.get_backend() == "ranklab"
results = {}


def pause():
    if args.sleep:
        time.sleep(random.random() * 0.01)


# Rank 0 posts its all_reduce, then waits for the ring's message, which the last rank sends
# only after its receive: the all_reduce must not hold rank 0 until everyone has joined it.
total = torch.full((3,), float(rank + 1))
work = dist.all_reduce(total, async_op=True)
pause()
token = torch.zeros(1)
if world > 1:
    if rank == 0:
        dist.send(torch.tensor([1.0]), dst=1)
        dist.recv(token, src=world - 1)
    else:
        dist.recv(token, src=rank - 1)
        dist.send(token + 1, dst=(rank + 1) % world)
work.wait()
results["all_reduce"] = total
results["ring"] = token
gathered = [torch.zeros(2) for _ in range(world)]
future = dist.all_gather(gathered, torch.full((2,), float(rank)), async_op=True).get_future()
future.wait()
results["all_gather"] = torch.stack(gathered)


def fp16_hook(state, bucket):
    return default_hooks.fp16_compress_hook(state, bucket)


def group_allreduce_hook(state, bucket):
    return default_hooks.allreduce_hook(state, bucket)


class Spare(torch.nn.Module):
    """The network with a layer forward never uses: its gradient is DDP's unused map's."""

    def __init__(self, body):
        super().__init__()
        self.body = body
        self.spare = torch.nn.Linear(512, 2)

    def forward(self, x):
        return self.body(x)


VARIANTS = {
    "plain": ({}, None),
    "static_graph": ({"static_graph": True}, None),
    "unused": ({"find_unused_parameters": True}, None),
    "hook_allreduce": ({}, group_allreduce_hook),
    "hook_fp16": ({}, fp16_hook),
}
outstanding = []  # per bucket: whether its future was still pending when the hook returned


def observed(hook):
    def run(state, bucket):
        future = hook(state, bucket)
        outstanding.append(not future.done())
        return future
    return run


torch.manual_seed(0)
data = torch.randn(world * 4, 512)
for name, (options, hook) in VARIANTS.items():
    torch.manual_seed(1)
    net = torch.nn.Sequential(*[torch.nn.Linear(512, 512) for _ in range(3)],
                              torch.nn.Linear(512, 2))
    if options.get("find_unused_parameters"):
        net = Spare(net)
    model = DistributedDataParallel(net, bucket_cap_mb=1, **options)
    if hook is not None:
        model.register_comm_hook(None, observed(hook))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(2):
        optimizer.zero_grad()
        loss = model(data[rank * 4:rank * 4 + 4]).square().mean()
        pause()
        loss.backward()
        optimizer.step()
    for index, p in enumerate(model.module.parameters()):
        results[f"{name}.{index}"] = p.detach().clone()

if on_ranklab and world > 1 and not any(outstanding):
    raise AssertionError("no bucket's all_reduce was outstanding when its hook returned: "
                         "collectives launched during backward did not overlap it")
if args.out:
    torch.save(results, os.path.join(args.out, f"rank{rank}.pt"))
print(f"rank {rank}: {len(results)} results; buckets outstanding at return: "
      f"{sum(outstanding)} of {len(outstanding)}")
