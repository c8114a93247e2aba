"""How `ranklab torchrun` starts each process: `python -m ranklab_torch.launch SCRIPT ARGS...`.

It connects to the coordinator (RANKLAB_TORCH_COORDINATOR), registers the `ranklab` backend,
makes the script's gloo and nccl process groups ranklab's (unless RANKLAB_TORCH_KEEP_BACKEND
is set), runs the script as __main__, and tells the coordinator how it ended: normally, or
with its exception's traceback.
"""

import os
import runpy
import sys
import traceback

import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from . import deferred
from .process_group import RanklabProcessGroup, ReleasedError, world_barrier
from .wire import Connection

_REPLACED = ("gloo", "nccl")


def _backend_name(backend):
    return str(backend).lower() if backend is not None else None


def _install(connection, keep_backend, rank):
    def create(options, pg_options=None):
        return RanklabProcessGroup(connection, options.group_rank, options.group_size,
                                   options.global_ranks_in_group)

    dist.Backend.register_backend("ranklab", create, extended_api=True)
    deferred.install()
    if keep_backend:
        return

    # init_process_group and new_group end with a barrier on torch's store, which every
    # process of the world must reach: a collective the fabric must see, since a process
    # waiting there is waiting for the others outside any call. On ranklab it is a barrier
    # of the world, named for the call that made it.
    def store_based_barrier(rank, store, timeout):
        caller = sys._getframe(1).f_code.co_name
        world_barrier(connection, f"{caller} (torch's store barrier)")

    c10d._store_based_barrier = store_based_barrier

    warned = []

    def ranklab_instead(backend):
        name = _backend_name(backend)
        if name is None or not any(part in _REPLACED for part in name.split("|")):
            return backend
        if "nccl" in name and not warned:
            warned.append(True)
            print(f"ranklab: rank {rank}: the script's nccl process group runs on ranklab's fabric "
                  "with CPU tensors; its CUDA calls (torch.cuda.*, .cuda(), device='cuda') fail "
                  "on this CPU-only torch", file=sys.stderr)
        return "ranklab"

    original_init = c10d.init_process_group
    original_new_group = c10d.new_group
    original_monitored_barrier = c10d.monitored_barrier

    def init_process_group(backend=None, *args, **kwargs):
        return original_init(ranklab_instead(backend), *args, **kwargs)

    def new_group(ranks=None, timeout=c10d.default_pg_timeout, backend=None, pg_options=None):
        return original_new_group(ranks, timeout, ranklab_instead(backend), pg_options)

    # torch 1.13 allows monitored_barrier on Gloo only; on ranklab it is a barrier whose
    # missing ranks the coordinator names.
    def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
        if c10d._rank_not_in_group(group) or c10d.get_backend(group) != "ranklab":
            return original_monitored_barrier(group, timeout, wait_all_ranks)
        group = c10d._get_default_group() if group is None else group
        return group.monitored_barrier(timeout, wait_all_ranks)

    for module in (dist, c10d):
        module.init_process_group = init_process_group
        module.new_group = new_group
        module.monitored_barrier = monitored_barrier


def _run(script, args):
    sys.argv = [script] + list(args)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: python -m ranklab_torch.launch SCRIPT [ARGS...]")
    rank = int(os.environ["RANK"])
    connection = Connection(os.environ["RANKLAB_TORCH_COORDINATOR"])
    connection.send({"op": "hello", "rank": rank, "pid": os.getpid()})
    _install(connection, bool(os.environ.get("RANKLAB_TORCH_KEEP_BACKEND")), rank)
    status = 0
    try:
        _run(sys.argv[1], sys.argv[2:])
        connection.send({"op": "exit"})
    except ReleasedError as released:
        # The job ended elsewhere; ranklab's report says why.
        reason = str(released).removeprefix("ranklab: ").removeprefix(f"rank {rank}: ")
        print(f"ranklab: rank {rank} released: {reason}", file=sys.stderr)
        status = 1
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        if status == 0:
            connection.send({"op": "exit"})
        else:
            _report_failure(connection, f"the script exited with status {status}", "")
    except BaseException as error:  # noqa: B902 - every failure is reported, then re-raised
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        _report_failure(connection, text, traceback.format_exc())
        traceback.print_exc()
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def _report_failure(connection, error, trace):
    try:
        connection.send({"op": "error", "error": error, "traceback": trace})
    except OSError:
        pass  # the coordinator has ended the job already


if __name__ == "__main__":
    main()
