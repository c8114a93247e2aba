"""Collectives that complete after they return, during backward, as DDP's overlap needs.

DDP's reducer launches each bucket's all_reduce from an autograd hook while backward goes on,
takes the Work's future at once, and waits on it from C++ at the end of backward, where no
Python runs and no call reaches the coordinator. So a collective launched during backward is
posted (it returns at the next decision point), and its completion is asked for at the end of
that backward: a callback of the autograd engine, queued ahead of the reducer's own, waits
for each such collective in the order they were posted and completes their futures. Between
the post and that wait the process computes the rest of backward: the overlap.

Where that cannot be promised, a collective completes before it returns: outside backward
(no graph task to queue on), and inside a final callback queued from Python (DDP's static
graph launches every bucket from one, then waits inside it: a callback queued then would run
too late).
"""

import threading

from torch.autograd import Variable

_local = threading.local()


class _CallbackScopedEngine:
    """The autograd engine, with callbacks queued from Python marked while they run."""

    def __init__(self, engine):
        self._engine = engine

    def queue_callback(self, callback):
        def scoped():
            _local.callback_depth = getattr(_local, "callback_depth", 0) + 1
            try:
                callback()
            finally:
                _local.callback_depth -= 1

        return self._engine.queue_callback(scoped)

    def __getattr__(self, name):
        return getattr(self._engine, name)


def install():
    """Marks the final callbacks queued from Python (once per process)."""
    if not isinstance(Variable._execution_engine, _CallbackScopedEngine):
        Variable._execution_engine = _CallbackScopedEngine(Variable._execution_engine)


def _engine():
    engine = Variable._execution_engine
    return engine._engine if isinstance(engine, _CallbackScopedEngine) else engine


def can_defer():
    """Whether a collective posted now can be completed at the end of the current backward
    (a callback then waits for what defer() was given); False outside backward and inside
    a final callback queued from Python."""
    if getattr(_local, "callback_depth", 0) > 0:
        return False
    if getattr(_local, "pending", None) is None:
        try:
            _engine().queue_callback(_flush)
        except RuntimeError:  # not inside backward: no graph task to queue on
            return False
        _local.pending = []
    return True


def defer(complete):
    """Asks for `complete()` at the end of the current backward; only after can_defer()."""
    _local.pending.append(complete)


def _flush():
    pending, _local.pending = _local.pending, None
    for complete in pending:
        complete()
    # Kept (with the Works they are bound to) until the next backward's flush: DDP waits on
    # one of them (its unused-parameter map) from C++ after this callback, and a Python
    # Work that only C++ holds loses its methods when Python collects it.
    _local.completed = pending
