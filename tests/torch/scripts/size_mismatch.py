"""One rank all-reduces a tensor of another size (a shape bug on one rank)."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
grad = torch.ones(8 if rank != 2 else 6)
dist.all_reduce(grad)
