"""Where the search runs: the torch device, how many threads torch and BLAS use there, and
which objects the garbage collector traverses meanwhile.

Thread counts and the collector's frozen objects are settings of the whole process, which
fits running at the same time in threads (joblib's threading backend, a grid search, Dask
workers) share. Each is set when the first such fit enters and restored when the last one
leaves: a fit that ends first must not give the others back the threads they asked to do
without, nor leave the process with a fit's setting after all end.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from functools import partial
from typing import Callable

import threadpoolctl
import torch
from threadpoolctl import threadpool_limits

__all__ = ["blas_threads", "older_objects_frozen", "resolve_device", "torch_threads"]

# One lock for every setting: they are entered and left a few times per fit.
_LOCK = threading.Lock()


def resolve_device(device: str | torch.device) -> torch.device:
    """Turn ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"`` into a usable device.

    ``"auto"`` picks CUDA when available, else CPU. A requested device that
    is absent raises ``ValueError``.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"Unknown device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'."
        ) from None
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available here.")
        index = 0 if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise ValueError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} "
                "CUDA device(s) exist."
            )
        return torch.device("cuda", index)
    if dev.type == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise ValueError("device='mps' was requested but MPS is not available here.")
        return dev
    raise ValueError(
        f"Unsupported device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'."
    )


class _Holders:
    """How many blocks hold a process setting now, and how to undo it when none does."""

    def __init__(self) -> None:
        self.count = 0
        self.undo: Callable[[], None] | None = None  # puts back what the first holder found

    @contextmanager
    def held(self, make: Callable[[], Callable[[], None]]):
        """A block holding the setting: the first one in makes it (``make()`` returns how
        to undo it), the last one out undoes it, whichever thread that is."""
        with _LOCK:
            if self.count == 0:
                self.undo = make()
            self.count += 1
        try:
            yield
        finally:
            with _LOCK:
                self.count -= 1
                if self.count == 0:
                    self.undo()


_TORCH = _Holders()
_BLAS = _Holders()
_GC = _Holders()


@contextmanager
def torch_threads(n: int | None):
    """Run torch on ``n`` intra-op threads inside the block (``None``: leave as is).

    The policy is tiny (E = 10), so extra threads mostly spin: on 2 cores one
    thread samples as fast as two when idle and several times faster under any
    other load (cross-validation, benchmarks). One thread also makes CPU runs
    independent of the machine's core count, which keeps results reproducible.

    Safe in concurrent threads (see the module's notes), for blocks asking the
    same ``n``. With OpenMP (torch's CPU backend) the count is kept per thread,
    plus a default for threads that have not run torch yet, which
    :func:`torch.set_num_threads` sets both of: every block sets its own
    thread's count on entry and gives it back on exit, and the last block out
    puts back the count the first one found.
    """
    if n is None:
        yield
        return
    with _LOCK:
        own = torch.get_num_threads()
        if _TORCH.count == 0:
            _TORCH.undo = partial(torch.set_num_threads, own)
        _TORCH.count += 1
        torch.set_num_threads(n)
    try:
        yield
    finally:
        with _LOCK:
            _TORCH.count -= 1
            if _TORCH.count == 0:
                _TORCH.undo()
            else:  # the others run on in their own threads: only this one's count goes back
                torch.set_num_threads(own)


@contextmanager
def blas_threads(n: int):
    """Run NumPy's BLAS on ``n`` threads inside the block (threadpoolctl).

    OpenBLAS as NumPy's and SciPy's wheels ship it keeps one pool for the
    whole process: the first of concurrent blocks (asking the same ``n``) sets
    it, the last restores what the first found, from whichever thread leaves
    last. A BLAS that threadpoolctl limits per thread (one built on OpenMP) is
    limited in the first block's thread only, and given back when the last
    block leaves.
    """
    def limit() -> Callable[[], None]:
        with _any_thread_sets_openblas():
            restore = threadpool_limits(n, user_api="blas").restore_original_limits

        def undo() -> None:
            with _any_thread_sets_openblas():
                restore()
        return undo

    with _BLAS.held(limit):
        yield


@contextmanager
def older_objects_frozen():
    """Keep the objects that exist when the block starts out of the collector's passes.

    A search allocates objects at a steady rate, so CPython's cyclic garbage collector
    makes a full pass every few seconds, and a full pass visits every object the
    process holds: about half a million once torch, SymPy and scikit-learn are
    imported, some 0.1 s a pass (a process running one 30-epoch fit of the realistic
    case made 8 of them, about 1 s in all). The objects older than the search are not its garbage;
    :func:`gc.freeze` moves them to a generation no pass visits, and the last block
    out moves them back (:func:`gc.unfreeze`), where the next pass collects those
    that have become garbage meanwhile. A process that froze objects itself (as
    before forking workers), or turned the collector off, is left as it is.
    """
    def freeze() -> Callable[[], None]:
        if not gc.isenabled() or gc.get_freeze_count():
            return lambda: None
        gc.freeze()
        return gc.unfreeze

    with _GC.held(freeze):
        yield


@contextmanager
def _any_thread_sets_openblas():
    """Let this thread set OpenBLAS's pool, and leave it to no thread afterwards.

    threadpoolctl (3.8) lets only the first thread that set OpenBLAS's pool
    set it again, silently ignoring the others, until that thread's ``with
    threadpool_limits`` block ends; a block here is set in one thread and may
    be restored from another.
    """
    release = getattr(getattr(threadpoolctl, "OpenBLASController", None),
                      "clear_controlling_thread", None)  # absent before threadpoolctl 3.8
    if release is not None:
        release(force=True)
    try:
        yield
    finally:
        if release is not None:
            release(force=True)
