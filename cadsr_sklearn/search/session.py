"""One fit's run of its search, and what the run's outcome means for ``fit``.

:func:`run_session` goes on from a built (or continued) search until a stopping rule
fires: the compiled kernels are compiled before the budget's clock starts,
torch and BLAS run on the threads the search needs, the progress display
follows every epoch, and the search is saved for continuing as it goes
(:class:`~cadsr_sklearn.search.continuation.SearchSaver`). A constant fit that raised
is reported as a bug (numerical faults raise nothing in the kernels);
:func:`check_found` turns a run that found no formula into an error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import torch

from ..scoring import levenberg_marquardt
from ..user_warning import warn_user
from .continuation import SearchSaver
from .devices import blas_threads, older_objects_frozen, torch_threads
from . import linear
from .build import Search
from .training import EpochRecord, SearchResult, run_loop

if TYPE_CHECKING:  # the display is the caller's (a factory): the search imports no report
    from ..reporting.progress import Progress

__all__ = ["run_session", "check_found"]


def compile_kernels() -> None:
    """Compile every kernel a search and its answer run (the constant fit's, the
    programs', the linear leaves'), or load them from the disk cache."""
    levenberg_marquardt.warm_up()
    linear.warm_up()


def run_session(search: Search, saver: SearchSaver, progress: Callable[[], "Progress"],
                device: torch.device,
                after_loop: Callable[[Search, SearchResult], SearchResult] | None = None,
                loop: Callable[..., SearchResult] = run_loop) -> SearchResult:
    """Run ``search`` to its stop on ``device``, saved by ``saver``, shown by ``progress()``;
    ``after_loop`` and ``loop`` as :meth:`Search.run <cadsr_sklearn.search.build.Search.run>`
    takes them."""
    # The compiled kernels, before the budget's clock starts: the first run on a
    # machine compiles them (tens of seconds, once), which max_time does not count.
    compile_kernels()
    shown = progress()

    def after_epoch(record: EpochRecord, search: Search) -> None:
        shown.update(record, search.state)
        saver.after_epoch(search)

    result = None
    try:
        # NumPy's BLAS on one thread too: its vectors here are one column
        # (np.dot over S rows), where waking a second thread costs more than
        # it saves, up to 100x more on a busy machine.
        n_torch_threads = 1 if device.type == "cpu" else None
        with torch_threads(n_torch_threads), blas_threads(1), older_objects_frozen():
            result = search.run(on_epoch=after_epoch, on_stop=saver.at_stop,
                                after_loop=after_loop, loop=loop)
        if result.interrupted:
            try:
                saver.at_interrupt(search)
            except KeyboardInterrupt:  # a second Ctrl-C while writing: keep the result
                warn_user("Interrupted again while the checkpoint was written: it was not "
                          "updated (the previous one, if any, is whole). The best formula "
                          "found so far is kept.", RuntimeWarning)
        shown.show(result.best)  # τ* after pruning, not the last epoch's
    finally:
        # a notebook's live table keeps the final front (the last epoch's after Ctrl-C)
        shown.close(None if result is None
                    else result.hall_of_fame.pareto_front(keep=result.best))
    _warn_if_fits_raised(search)
    return result


def check_found(result: SearchResult, search: Search) -> None:
    """Raise when the run has no formula: KeyboardInterrupt after an early Ctrl-C, else
    RuntimeError saying why (with units: whether the dimensional check rejected them)."""
    if result.best is None and result.interrupted:
        raise KeyboardInterrupt  # Ctrl-C before the first epoch ended: nothing to keep
    if result.best is None:
        if search.scorer.n_rejected_for_units:
            raise RuntimeError(
                f"The search found no dimensionally consistent formula: the units check "
                f"rejected {search.scorer.n_rejected_for_units} candidates and the rest were "
                f"non-finite on the training data. The operators may not be able to give "
                f"the target's units (a square root of a ratio needs sqrt, for instance), "
                f"or X_units / y_units may be wrong; add operators, check the units, or "
                f"fit without them.")
        raise RuntimeError(
            "The search found no valid expression (every candidate was non-finite on the "
            "training data). Try other operators, more epochs, or rescaling X and y."
        )


def _warn_if_fits_raised(search: Search) -> None:
    """Report constant fits that raised: a bug in the kernels, which would otherwise only
    turn formulas into invalid ones (numerical faults raise nothing there)."""
    failed = search.failed_fits()
    if failed.count:
        warn_user(f"{failed.count} constant fits raised an error and their formulas were "
                  f"scored as invalid (first: {failed.first_error}). This is a bug in "
                  "cadsr-sklearn; please report it with the data and parameters of this "
                  "fit.", RuntimeWarning)
