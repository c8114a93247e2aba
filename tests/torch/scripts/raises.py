"""Rank 1 raises between two collectives; the others wait for it in the second."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dist.all_reduce(torch.ones(2))
if rank == 1:
    raise ValueError("bad batch on rank 1")
dist.all_reduce(torch.ones(2))
