"""The `ranklab` torch.distributed backend: a ProcessGroup whose every call goes to ranklab's
coordinator, which runs it on the emulator's fabric (one fiber per process) and answers.

Collectives complete before they return (their Work is done; DDP's reducer reads its future),
so the coordinator sees each process's calls in program order. Point-to-point operations are
posted and return a handle: wait(), is_completed() and the source of a receive go to the
coordinator too, so a batch of isend/irecv is posted whole before anything waits, as NCCL's
group semantics give.
"""

import threading

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

from .sites import user_stack

_DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.bfloat16: "bf16",
    torch.float16: "f16",
}
_REDUCE_OPS = {
    dist.ReduceOp.SUM: "sum",
    dist.ReduceOp.PRODUCT: "prod",
    dist.ReduceOp.MIN: "min",
    dist.ReduceOp.MAX: "max",
    dist.ReduceOp.AVG: "avg",
    dist.ReduceOp.BAND: "band",
    dist.ReduceOp.BOR: "bor",
    dist.ReduceOp.BXOR: "bxor",
}


class ReleasedError(RuntimeError):
    """The job ended elsewhere (a deadlock, another rank's failure): this process is released."""


def _dtype(tensor):
    try:
        return _DTYPES[tensor.dtype]
    except KeyError:
        supported = ", ".join(str(t).replace("torch.", "") for t in _DTYPES)
        raise RuntimeError(
            f"ranklab: dtype {tensor.dtype} is not supported by the ranklab backend "
            f"(supported: {supported})") from None


def _reduce_op(op):
    for known, name in _REDUCE_OPS.items():
        if op == known:
            return name
    raise RuntimeError(
        f"ranklab: reduce op {op} is not supported by the ranklab backend "
        f"(supported: SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR)")


def _host(tensor):
    if tensor.device.type != "cpu":
        raise RuntimeError(
            f"ranklab: a {tensor.device.type} tensor reached the ranklab backend, which takes "
            "CPU tensors on this torch")
    return tensor


def _bytes(tensor):
    """The tensor's elements as a flat bytes-like view (a copy only if not contiguous)."""
    flat = _host(tensor).detach().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy() if flat.numel() else b""


def _fill(tensor, payload, offset):
    """Copies the tensor's elements from `payload` at `offset`; returns the offset after them."""
    count = tensor.numel()
    if count:
        source = torch.frombuffer(payload, dtype=tensor.dtype, count=count, offset=offset)
        with torch.no_grad():
            tensor.copy_(source.view(tensor.shape))
    return offset + count * tensor.element_size()


def _done(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


class _PointToPointWork(dist.Work):
    """A posted send or receive, completed by the coordinator when waited or polled."""

    def __init__(self, group, handle, tensor):
        super().__init__()
        self._group = group
        self._handle = handle
        self._tensor = tensor
        self._source = -1
        self._completed = False

    def _finish(self, reply, payload):
        if not reply.get("done", True):
            return
        self._completed = True
        self._source = reply.get("source", -1)
        if payload:
            _fill(self._tensor, payload, 0)

    def _complete(self, op):
        answer = self._tensor.numel() * self._tensor.element_size()
        self._group._call({"op": op, "handle": self._handle}, answer_bytes=answer,
                          fill=self._finish)

    def wait(self, timeout=None):
        if not self._completed:
            self._complete("wait")
        return True

    def is_completed(self):
        if not self._completed:
            self._complete("test")
        return self._completed

    def is_success(self):
        return self.is_completed()

    def _source_rank(self):
        self.wait()
        return self._source

    def result(self):
        self.wait()
        return [self._tensor]

    def get_future(self):
        self.wait()
        future = torch.futures.Future()
        future.set_result([self._tensor])
        return future


def call(connection, header, payloads=(), answer_bytes=0, fill=None):
    """Every call goes through here: the coordinator's answer, or its error raised.
    `fill(answer, payload)` reads the answer's payload (`answer_bytes` long): before another
    call can reuse the shared region it may lie in."""
    stack = user_stack()
    header["site"] = stack[0] if stack else None
    header["stack"] = stack
    with _lock:
        try:
            connection.send(header, payloads, answer_bytes)
            reply, payload = connection.receive()
        except ConnectionError as closed:
            raise ReleasedError("the job has ended") from closed
        if "error" in reply:
            if reply.get("released"):
                raise ReleasedError(reply["error"])
            raise RuntimeError(reply["error"])
        if fill is not None:
            fill(reply, payload)
    return reply


def world_barrier(connection, label):
    """A barrier of the whole world, named `label` in ranklab's reports."""
    call(connection, {"op": "barrier", "label": label, "group": None})


class RanklabProcessGroup(dist.ProcessGroup):
    """One process group (the world or a new_group) of one process."""

    def __init__(self, connection, rank, size, global_ranks):
        super().__init__(rank, size)
        self._connection = connection
        # The group's global ranks as torch.distributed builds it; None for the world.
        self._global_ranks = list(global_ranks) if global_ranks else None

    def getBackendName(self):
        return "ranklab"

    def _call(self, header, payloads=(), answer_bytes=0, fill=None):
        header["group"] = self._global_ranks
        return call(self._connection, header, payloads, answer_bytes, fill)

    def _collective(self, op, inputs, outputs, **fields):
        """Runs collective `op` on `inputs`' bytes; fills `outputs` from the answer."""
        header = {"op": op, "dtype": _dtype(inputs[0] if inputs else outputs[0])}
        header.update(fields)
        header["counts"] = [t.numel() for t in inputs]
        header["out_counts"] = [t.numel() for t in outputs]
        for t in list(inputs) + list(outputs):
            if _dtype(t) != header["dtype"]:
                raise RuntimeError(
                    f"ranklab: {op} mixes dtypes {inputs[0].dtype} and {t.dtype} in one call")
        def fill(_, payload):
            offset = 0
            for t in outputs:
                offset = _fill(t, payload, offset)

        answer = sum(t.numel() * t.element_size() for t in outputs)
        self._call(header, [_bytes(t) for t in inputs], answer, fill)

    def allreduce(self, tensors, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        self._collective("all_reduce", tensors, tensors, reduce=op)
        return _done(tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        self._collective("broadcast", tensors, tensors, root=root)
        return _done(tensors)

    def reduce(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        self._collective("reduce", tensors, tensors, root=root, reduce=op)
        return _done(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        outputs = [t for per_input in output_tensors for t in per_input]
        self._collective("all_gather", input_tensors, outputs)
        return _done(output_tensors)

    def _allgather_base(self, output, input, opts=None):
        self._collective("all_gather", [input], [output])
        return _done([output])

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        raise RuntimeError("ranklab: allgather_coalesced is not supported by the ranklab backend")

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        inputs = [t for per_output in input_tensors for t in per_output]
        self._collective("reduce_scatter", inputs, output_tensors, reduce=op)
        return _done(output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        self._collective("reduce_scatter", [input], [output], reduce=op)
        return _done([output])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        def counts(tensor, splits):
            if not splits:
                return None
            row = tensor[0].numel() if tensor.dim() and tensor.shape[0] else 0
            return [s * row for s in splits]
        self._collective("all_to_all", [input], [output],
                         send_counts=counts(input, input_split_sizes),
                         recv_counts=counts(output, output_split_sizes))
        return _done([output])

    def alltoall(self, output_tensors, input_tensors, opts=None):
        self._collective("all_to_all", input_tensors, output_tensors,
                         send_counts=[t.numel() for t in input_tensors],
                         recv_counts=[t.numel() for t in output_tensors])
        return _done(output_tensors)

    def gather(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        outputs = [t for per_input in output_tensors for t in per_input]
        self._collective("gather", input_tensors, outputs, root=root)
        return _done(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        inputs = [t for per_output in input_tensors for t in per_output]
        self._collective("scatter", inputs, output_tensors, root=root)
        return _done(output_tensors)

    def barrier(self, opts=None):
        self._call({"op": "barrier"})
        return _done([])

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        self._call({"op": "barrier", "label": "monitored_barrier"})

    def _point_to_point(self, op, tensors, peer, tag):
        if len(tensors) != 1:
            raise RuntimeError(f"ranklab: {op} takes one tensor, got {len(tensors)}")
        tensor = tensors[0]
        header = {"op": op, "dtype": _dtype(tensor), "counts": [tensor.numel()],
                  "peer": peer, "tag": tag}
        payloads = [_bytes(tensor)] if op == "isend" else []
        reply = self._call(header, payloads)
        return _PointToPointWork(self, reply["handle"], tensor)

    def send(self, tensors, dstRank, tag=0):
        return self._point_to_point("isend", tensors, dstRank, tag)

    def recv(self, tensors, srcRank, tag=0):
        return self._point_to_point("irecv", tensors, srcRank, tag)

    def recv_anysource(self, tensors, tag=0):
        return self._point_to_point("irecv", tensors, None, tag)

    # batch_isend_irecv's coalescing: every send and receive is posted without waiting, so
    # the batch reaches the fabric whole before any of its handles is waited on.
    def _start_coalescing(self):
        pass

    def _end_coalescing(self, reqs):
        pass


# One connection per process, shared by its groups: calls from two threads (the script's and
# autograd's) take turns.
_lock = threading.Lock()
