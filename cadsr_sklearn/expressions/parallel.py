"""Threads over the items of a batch: how many, and how the work is shared.

The compiled kernels (:mod:`.expressions.program`, :mod:`.scoring.levenberg_marquardt`) release the
GIL, so threads of one process run them on every core without copying the data
to worker processes.
Each item's result depends on that item alone, so results never depend on the
number of threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

__all__ = ["available_cores", "resolve_n_jobs", "run_in_threads"]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Threads for ``n_jobs``: ``None`` or −1 every available core, −2 all but one, … or n."""
    cores = available_cores()
    if n_jobs is None:
        return cores
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return max(1, int(n_jobs))


def run_in_threads(n_items: int, n_jobs: int | None, work: Callable[[np.ndarray], object]) -> list:
    """``work(share)`` for each thread's share of item indices ``0 … n_items − 1``: the results.

    Shares are interleaved (thread t gets t, t + k, …): neighbours in a batch
    cost alike, so each thread gets a like mix. ``work`` must write only the
    slots of its own items.
    """
    threads = max(1, min(resolve_n_jobs(n_jobs), n_items))
    shares = [np.arange(t, n_items, threads) for t in range(threads)]
    if threads == 1:
        return [work(shares[0])]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, shares))
