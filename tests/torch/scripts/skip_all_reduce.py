"""The classic bug: rank 0 all-reduces its loss for a log line; the other ranks never make
that call and go on to their next collective."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
grad = torch.ones(8)
loss = torch.tensor([float(rank)])
if rank == 0:
    dist.all_reduce(loss)  # only rank 0 calls this
dist.all_reduce(grad)
