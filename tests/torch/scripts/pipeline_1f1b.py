"""A 1F1B pipeline, one stage per process, its steady-state exchanges paired with
batch_isend_irecv as Megatron pairs them (send the activation forward while receiving the
gradient back). Activations and gradients are numbers each stage can check: after stage s a
micro-batch m carries m + s + 1 forward; its gradient entering stage s is 100 * m + s.
--unpaired sends first and receives after, with blocking calls, in the steady state: the
classic bug, which hangs under rendezvous sends (two neighbours both sending) and passes only
by buffering under eager ones."""
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--microbatches", type=int, default=4)
parser.add_argument("--unpaired", action="store_true")
args = parser.parse_args()

dist.init_process_group("gloo")
stage, stages = dist.get_rank(), dist.get_world_size()
first, last = stage == 0, stage == stages - 1
M = args.microbatches


def recv_forward(m):
    if first:
        return torch.full((4,), float(m))
    x = torch.zeros(4)
    dist.recv(x, src=stage - 1)
    assert torch.equal(x, torch.full((4,), float(m + stage))), (stage, m, x)
    return x


def recv_backward(m):
    if last:
        return torch.full((4,), float(100 * m + stage))
    g = torch.zeros(4)
    dist.recv(g, src=stage + 1)
    return g


def check_gradient(m, g):
    assert torch.equal(g, torch.full((4,), float(100 * m + stage))), (stage, m, g)


def forward(x):
    return x + 1


def backward(g):
    return g - 1


def exchange(send_tensor, send_to, recv_tensor, recv_from):
    """One paired exchange, as Megatron's send_forward_recv_backward and its mirror."""
    if args.unpaired:
        dist.send(send_tensor, dst=send_to)
        dist.recv(recv_tensor, src=recv_from)
        return
    ops = [dist.P2POp(dist.isend, send_tensor, send_to), dist.P2POp(dist.irecv, recv_tensor, recv_from)]
    for request in dist.batch_isend_irecv(ops):
        request.wait()


warmup = min(stages - stage - 1, M)
outputs = {}
for m in range(warmup):
    outputs[m] = forward(recv_forward(m))
    if not last:
        dist.send(outputs[m], dst=stage + 1)
next_forward = warmup
next_backward = 0
if next_forward < M:
    x = recv_forward(next_forward)
while next_forward < M:
    m = next_forward
    outputs[m] = forward(x)
    g = torch.zeros(4)
    if last:
        g = recv_backward(next_backward)
    else:
        exchange(outputs[m], stage + 1, g, stage + 1)
    check_gradient(next_backward, g)
    back = backward(g)
    next_forward += 1
    if next_forward < M and not first:
        x = torch.zeros(4)
        exchange(back, stage - 1, x, stage - 1)
        assert torch.equal(x, torch.full((4,), float(next_forward + stage)))
    else:
        if next_forward < M:
            x = recv_forward(next_forward)
        if not first:
            dist.send(back, dst=stage - 1)
    next_backward += 1
while next_backward < M:
    g = recv_backward(next_backward)
    check_gradient(next_backward, g)
    if not first:
        dist.send(backward(g), dst=stage - 1)
    next_backward += 1
print(f"stage {stage}: {M} micro-batches forward and backward")
