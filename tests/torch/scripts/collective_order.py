"""Rank 1 calls its two collectives in the other order: the gradient's all_reduce on the
data-parallel group before the loss's on the world, where rank 0 does the reverse. Each
waits in its first call for the other."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
data_parallel = dist.new_group([0, 1])
loss, gradient = torch.ones(1), torch.ones(8)
if rank == 1:
    dist.all_reduce(gradient, group=data_parallel)
    dist.all_reduce(loss)
else:
    dist.all_reduce(loss)
    dist.all_reduce(gradient, group=data_parallel)
