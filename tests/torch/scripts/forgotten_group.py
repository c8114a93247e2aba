"""Rank 3 forgets the data-parallel all_reduce of its gradients (it skips DP when its loss is
zero, say); rank 1, its data-parallel peer, waits for it forever."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
dp = [dist.new_group([0, 2]), dist.new_group([1, 3])]
gradient = torch.ones(8)
if rank != 3:
    dist.all_reduce(gradient, group=dp[rank % 2])
dist.barrier(group=dp[0]) if rank % 2 == 0 else None
