"""Rank 0 receives from any source, in whatever order the fabric matches: with --trace under a
random policy, the same seed gives the same order (the determinism test runs it N times)."""
import random
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
for round_ in range(3):
    time.sleep(random.random() * 0.02)  # the OS's timing, which must not matter
    if rank == 0:
        order = []
        for _ in range(world - 1):
            got = torch.zeros(1)
            order.append(dist.recv(got))
        print("round", round_, "order", order)
    else:
        dist.send(torch.tensor([float(rank)]), dst=0)
    dist.all_reduce(torch.ones(1))
