"""The `ranklab` torch.distributed backend: a ProcessGroup whose every call goes to ranklab's
coordinator, which runs it on the emulator's fabric (one fiber per process) and answers.

A call returns at the coordinator's next decision point. A collective asked for with
async_op=True, or launched during backward (DDP's buckets: deferred.py), is posted and returns
a Work whose wait(), is_completed() and future go to the coordinator; any other collective
completes before it returns (its Work is done), as torch.distributed's blocking calls and C++
callers outside backward expect. Point-to-point operations are posted and return a handle
likewise, so a batch of isend/irecv is posted whole before anything waits, as NCCL's group
semantics give.
"""

import sys
import threading

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future

from . import deferred
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


class _PostedWork(dist.Work):
    """A posted operation, completed by the coordinator when waited or polled. Kept alive
    while C++ may still call it (deferred.py): a Python Work that only C++ holds loses its
    methods when Python collects it."""

    def __init__(self, group, handle, answer_bytes, fill, result):
        super().__init__()
        self._group = group
        self._handle = handle
        self._answer_bytes = answer_bytes
        self._fill = fill
        self._result = result
        self._future = torch.futures.Future()
        self._completed = False
        self._deferred = False

    def _finish(self, reply, payload):
        if not reply.get("done", True):
            return
        self._completed = True
        self._fill(reply, payload)
        self._future.set_result(self._result)

    def _complete(self, op):
        self._group._call({"op": op, "handle": self._handle},
                          answer_bytes=self._answer_bytes, fill=self._finish)

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

    def result(self):
        self.wait()
        return self._result

    def get_future(self):
        # Pending only where something completes it before C++ can wait on it: the end of
        # the current backward (a comm hook's dist.all_reduce(async_op=True).get_future()).
        if not self._completed and not self._deferred:
            if deferred.can_defer():
                self._deferred = True
                deferred.defer(self.wait)
            else:
                self.wait()
        return self._future


class _PointToPointWork(_PostedWork):
    """A posted send or receive; a receive knows its source once complete."""

    def __init__(self, group, handle, tensor):
        super().__init__(group, handle, tensor.numel() * tensor.element_size(), self._land,
                         [tensor])
        self._source = -1

    def _land(self, reply, payload):
        self._source = reply.get("source", -1)
        if payload:
            _fill(self._result[0], payload, 0)

    def get_future(self):
        self.wait()
        return self._future

    def _source_rank(self):
        self.wait()
        return self._source


def _async_asked():
    """torch.distributed's async_op when one of its functions made this call; None when
    C++ (DDP's reducer) or the script itself called the group's method."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None or not frame.f_code.co_filename.endswith("distributed_c10d.py"):
        return None
    return bool(frame.f_locals.get("async_op", False))


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

    def _collective(self, op, inputs, outputs, result, **fields):
        """Runs collective `op` on `inputs`' bytes, to fill `outputs` from the answer; returns
        its Work, whose result is `result`: done, or posted (see the module's comment)."""
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
        payloads = [_bytes(t) for t in inputs]
        asked = _async_asked()
        if not (asked if asked is not None else deferred.can_defer()):
            self._call(header, payloads, answer, fill)
            return _done(result)
        header["async"] = True
        work = _PostedWork(self, self._call(header, payloads)["handle"], answer, fill, result)
        if asked is None:  # launched during backward by C++ (DDP) or the script's hook
            work._deferred = True
            deferred.defer(work.wait)
        return work

    def allreduce(self, tensors, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        return self._collective("all_reduce", tensors, tensors, tensors, reduce=op)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        return self._collective("broadcast", tensors, tensors, tensors, root=root)

    def reduce(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        return self._collective("reduce", tensors, tensors, tensors, root=root, reduce=op)

    def allgather(self, output_tensors, input_tensors, opts=None):
        outputs = [t for per_input in output_tensors for t in per_input]
        return self._collective("all_gather", input_tensors, outputs, output_tensors)

    def _allgather_base(self, output, input, opts=None):
        return self._collective("all_gather", [input], [output], [output])

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        raise RuntimeError("ranklab: allgather_coalesced is not supported by the ranklab backend")

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        inputs = [t for per_output in input_tensors for t in per_output]
        return self._collective("reduce_scatter", inputs, output_tensors, output_tensors,
                                reduce=op)

    def _reduce_scatter_base(self, output, input, opts=None):
        op = _reduce_op(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        return self._collective("reduce_scatter", [input], [output], [output], reduce=op)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        def counts(tensor, splits):
            if not splits:
                return None
            row = tensor[0].numel() if tensor.dim() and tensor.shape[0] else 0
            return [s * row for s in splits]
        return self._collective("all_to_all", [input], [output], [output],
                                send_counts=counts(input, input_split_sizes),
                                recv_counts=counts(output, output_split_sizes))

    def alltoall(self, output_tensors, input_tensors, opts=None):
        return self._collective("all_to_all", input_tensors, output_tensors, output_tensors,
                                send_counts=[t.numel() for t in input_tensors],
                                recv_counts=[t.numel() for t in output_tensors])

    def gather(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        outputs = [t for per_input in output_tensors for t in per_input]
        return self._collective("gather", input_tensors, outputs, output_tensors, root=root)

    def scatter(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        inputs = [t for per_output in input_tensors for t in per_output]
        return self._collective("scatter", inputs, output_tensors, output_tensors, root=root)

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
