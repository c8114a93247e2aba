"""Tensors of 128 KiB to 12 MiB through every call that carries them, so that their bytes
go through the process's shared region (and the region grows as the calls do, and an answer
is larger than its call): values are small integers, exact in any order of summation, each
checked in closed form. With --out, each rank writes its results (for the comparison with
Gloo's run of the same script)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="")
parser.add_argument("--gloo-only", action="store_true",
                    help="only the calls Debian's Gloo has (the comparison run)")
args = parser.parse_args()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
rank_sum = world * (world - 1) // 2
results = {}
SIZES = (32 << 10, 1 << 20, 3 << 20)  # elements: 128 KiB, 4 MiB, 12 MiB of float32


def check(name, got, expected):
    results[name] = got.clone()
    if not torch.equal(got, expected):
        wrong = (got != expected).nonzero()[0].tolist()
        raise AssertionError(f"rank {rank}: {name}: first wrong element at {wrong}")


def ramp(n, r, dtype=torch.float32):
    return (torch.arange(n) % 1000 + r).to(dtype)


for n in SIZES:
    for dtype in (torch.float32, torch.float64, torch.int64):
        t = ramp(n, rank, dtype)
        dist.all_reduce(t)
        check(f"all_reduce_{n}_{dtype}", t, (torch.arange(n) % 1000 * world + rank_sum).to(dtype))
    t = ramp(n, rank) if rank == world - 1 else torch.zeros(n)
    dist.broadcast(t, src=world - 1)
    check(f"broadcast_{n}", t, ramp(n, world - 1))
    t = torch.full((4,), float(rank))  # a small call between large ones goes through the socket
    dist.all_reduce(t)
    check(f"small_after_{n}", t, torch.full((4,), float(rank_sum)))

n = SIZES[0]
gathered = [torch.zeros(n) for _ in range(world)]  # the answer is `world` times the call
dist.all_gather(gathered, ramp(n, rank))
check("all_gather", torch.stack(gathered), torch.stack([ramp(n, r) for r in range(world)]))
t = ramp(n, rank)
dist.reduce(t, dst=0)
if rank == 0:
    check("reduce", t, (torch.arange(n) % 1000 * world + rank_sum).float())
gathered = [torch.zeros(n) for _ in range(world)] if rank == 0 else None
dist.gather(ramp(n, rank), gather_list=gathered, dst=0)
if rank == 0:
    check("gather", torch.stack(gathered), torch.stack([ramp(n, r) for r in range(world)]))
pieces = [ramp(n, r) for r in range(world)] if rank == 0 else None
out = torch.zeros(n)
dist.scatter(out, scatter_list=pieces, src=0)
check("scatter", out, ramp(n, rank))

if world > 1:
    right, left = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(n)
    if rank % 2 == 0:
        dist.send(ramp(n, rank), dst=right)
        dist.recv(got, src=left)
    else:
        dist.recv(got, src=left)
        dist.send(ramp(n, rank), dst=right)
    check("send_recv", got, ramp(n, left))
    got = torch.zeros(2 * n)
    requests = [dist.isend(ramp(2 * n, rank), dst=right), dist.irecv(got, src=left)]
    if args.gloo_only:
        requests[1].wait()  # Gloo 1.13 completes a receive only in wait()
    else:
        while not requests[1].is_completed():  # polled: the answer comes through test
            pass
    requests[0].wait()
    check("isend_irecv_polled", got, ramp(2 * n, left))

rows = 1 << 14  # all_to_all_single with uneven splits: rank r sends p+1 rows to peer p
send_splits = [p + 1 for p in range(world)]
recv_splits = [rank + 1] * world
inp = torch.cat([torch.full((p + 1, rows), float(rank * 10 + p)) for p in range(world)])
out = torch.zeros(sum(recv_splits), rows)
dist.all_to_all_single(out, inp, output_split_sizes=recv_splits, input_split_sizes=send_splits)
check("all_to_all_single_uneven", out,
      torch.cat([torch.full((rank + 1, rows), float(r * 10 + rank)) for r in range(world)]))

if not args.gloo_only:
    flat = torch.zeros(world * n)
    dist._all_gather_base(flat, ramp(n, rank))
    check("all_gather_base", flat, torch.cat([ramp(n, r) for r in range(world)]))
    out = torch.zeros(n)
    dist.reduce_scatter(out, [ramp(n, r + rank) for r in range(world)])
    check("reduce_scatter", out, (torch.arange(n) % 1000 * world + rank * world + rank_sum).float())

if dist.get_backend() == "ranklab":
    region = c10d._get_default_group()._connection._region
    largest = 2 * 8 * SIZES[-1]  # the largest call and answer: float64 all_reduce of 3 M
    if region is None or len(region) < largest // 2:
        raise AssertionError(f"rank {rank}: the large payloads did not go through a shared "
                             f"region ({0 if region is None else len(region)} bytes)")

if args.out:
    torch.save(results, os.path.join(args.out, f"rank{rank}.pt"))
print(f"rank {rank}: {len(results)} checks passed")
dist.destroy_process_group()
