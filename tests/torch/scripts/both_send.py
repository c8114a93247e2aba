"""Two pipeline stages that both send first: each blocks in its send until the other
receives, which neither does."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
activation = torch.ones(16)
received = torch.zeros(16)
dist.send(activation, dst=peer)
dist.recv(received, src=peer)
