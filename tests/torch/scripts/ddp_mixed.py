"""DistributedDataParallel in mixed precision, unmodified: a float32 model trained under CPU
autocast to bfloat16 (its gradients stay float32), and a model held in bfloat16 (its
gradients are all-reduced in bfloat16; torch 1.13 has no float16 matmul on the CPU). Every rank checks that all ranks hold the same
parameters bit for bit after each step, and that they are within the dtype's rounding of the
same model trained in-process on the whole batch."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
data = torch.randn(world * 4, 8)
target = torch.randn(world * 4, 4)
mine = slice(rank * 4, rank * 4 + 4)


def make_model(dtype):
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(),
                               torch.nn.Linear(16, 4)).to(dtype)


def same_on_every_rank(model, what):
    flat = torch.cat([p.detach().reshape(-1).float() for p in model.parameters()])
    low, high = flat.clone(), flat.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    if not torch.equal(low, high):
        raise AssertionError(f"rank {rank}: {what}: the ranks' parameters differ")


def train(dtype, autocast, tolerance, steps=3):
    what = f"{dtype}{' under autocast' if autocast else ''}"
    model = DistributedDataParallel(make_model(dtype))
    reference = make_model(dtype)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    for _ in range(steps):
        for m, optimizer, x, y in ((model, optimizers[0], data[mine], target[mine]),
                                   (reference, optimizers[1], data, target)):
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = torch.nn.functional.mse_loss(m(x.to(dtype)).float(), y)
            loss.backward()
            optimizer.step()
        same_on_every_rank(model, what)
    error = max((p.float() - q.float()).abs().max().item()
                for p, q in zip(model.module.parameters(), reference.parameters()))
    if error > tolerance:
        raise AssertionError(f"rank {rank}: {what}: {error} from the full-batch model")
    print(f"rank {rank}: DDP in {what}: every rank equal, {error:.1e} from the full batch")


train(torch.float32, autocast=True, tolerance=1e-3)
train(torch.bfloat16, autocast=False, tolerance=1e-2)
dist.destroy_process_group()
