"""Ctrl-C once a search has a formula: it stops the work, never loses the answer.

The loop stops at a Ctrl-C and keeps τ* (:func:`~cadsr_sklearn.search.training.run_loop`);
each stage after it is dropped whole (:mod:`~cadsr_sklearn.search.refinement.stage`); the
report of the answer, cut short, is made again the quick way. That last step must end,
so a Ctrl-C during it is held (:func:`ctrl_c_held`): the search is already noted as
interrupted, and it raises nothing.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from dataclasses import replace
from typing import Callable, Iterator, TypeVar

from ..settings import ReportSettings
from .training import SearchResult

__all__ = ["ctrl_c_held", "reported"]

Record = TypeVar("Record")


def reported(result: SearchResult, report: Callable[[ReportSettings], Record],
             settings: ReportSettings) -> Record:
    """``report(settings)``, the record of the search's ``result``; after a Ctrl-C during
    it, ``result`` is noted as interrupted and reported again the quick way (each formula
    as the tree writes it, not simplified), with Ctrl-C held: the answer is kept."""
    try:
        return report(settings)
    except KeyboardInterrupt:
        result.interrupted, result.stop_reason = True, "interrupted"
    with ctrl_c_held():
        return report(replace(settings, simplify=False))


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) for the block: it raises nothing there (the caller has already
    noted the search as interrupted).

    Only where Python's own handler is in place and this is the main thread (the only
    one a signal reaches); a program's own SIGINT handler is left alone.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
