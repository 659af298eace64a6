"""Going on with a search: which one a fit continues, and what it leaves to continue from.

A fit continues the search the last fit kept (``warm_start``; on new data its
candidates are refitted and rescored there), else resumes the ``checkpoint``
file (on the same data only), else starts afresh
(:func:`continued_search`). Either refuses a search built with other
:meth:`~cadsr_sklearn.settings.SearchSettings.structure` or on other features, with a
message that says how to start afresh. While it runs, a fit leaves what the
next one continues from (:class:`SearchSaver`): the checkpoint file every
``checkpoint_every`` seconds, when the search stops and when it is
interrupted (Ctrl-C), with the current Pareto front beside it as a CSV file,
and with ``warm_start`` the whole search as it stopped. The bytes and files
themselves are :mod:`cadsr_sklearn.search.checkpoint`'s.
"""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import torch

from . import checkpoint
from .checkpoint import CheckpointWriter
from .build import Search, build_scoring
from ..settings import SearchSettings
from ..units.rule import UnitsRule

__all__ = ["SearchSaver", "FrontFile", "continued_search"]


def continued_search(settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                     sample_weight: np.ndarray | None, fingerprint: str, device: torch.device,
                     kept: bytes | None, units: UnitsRule | None = None) -> Search | None:
    """The search a fit with ``settings`` on ``(X, y, sample_weight)`` goes on with, or None.

    ``kept`` is the last fit's :attr:`~cadsr_sklearn.CADSRRegressor.search_state_`
    when ``warm_start`` is on (else None); ``fingerprint`` the data's
    :func:`~cadsr_sklearn.search.checkpoint.data_fingerprint`. Raises ValueError when
    the kept search or the checkpoint cannot go on here (other settings, features
    or ``units``), or the checkpoint's folder is not writable.
    """
    if kept is not None:
        saved = checkpoint.loads(kept, device, "The warm-started search")
        _check_continuable(saved.search, settings, X, units, "warm_start cannot continue it",
                           "Set warm_start=False to start afresh.")
        if saved.fingerprint != fingerprint:  # new data: the kept candidates rescored
            def scoring_of(settings):
                return build_scoring(settings, X, y, sample_weight, 0, units)

            saved.search.adopt_data(scoring_of(settings))
            if saved.search.archipelago is not None:  # and every island's
                saved.search.archipelago.adopt_data(scoring_of, settings)
        saved.search.new_call(settings)
        return saved.search
    path = settings.checkpoint
    if path is None:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ValueError(f"checkpoint={os.fspath(path)!r}: the folder {folder!r} "
                         "does not exist or is not writable.")
    if not os.path.exists(path):
        return None
    saved = checkpoint.read(path, device)
    where = f"The checkpoint {os.fspath(path)!r}"
    advice = "Delete it, or pass another checkpoint path, to start afresh."
    _check_continuable(saved.search, settings, X, units, f"{where} cannot be resumed", advice)
    if saved.fingerprint != fingerprint:
        raise ValueError(f"{where} was written for other training data (X, y or "
                         f"sample_weight differ). {advice}")
    saved.search.resume(settings)
    return saved.search


def _check_continuable(search: Search, settings: SearchSettings, X: np.ndarray,
                       units: UnitsRule | None, problem: str, advice: str) -> None:
    """Raise ValueError when ``search`` cannot go on with ``settings`` on ``X``'s features."""
    changed = search.changed_structure(settings)
    if changed:
        raise ValueError(f"{problem}: it was started with other {', '.join(changed)}. "
                         f"{advice}")
    if search.library.n_features != X.shape[1]:
        raise ValueError(f"{problem}: it was started on {search.library.n_features} "
                         f"features, X has {X.shape[1]}. {advice}")
    if search.units != units:
        raise ValueError(f"{problem}: it was started with other units (X_units, y_units). "
                         f"{advice}")


class SearchSaver:
    """What a running fit leaves for the next one to continue from.

    Parameters
    ----------
    path : str, path or None
        The ``checkpoint`` file, written every ``every`` seconds, when the search
        stops and when Ctrl-C interrupts it (the search then goes on from where
        it was stopped, which may be inside an epoch: not bit for bit as the
        uninterrupted search would); None writes none. Beside it,
        ``<path>.front.csv`` holds the current Pareto front (complexity, loss,
        reward, criterion, formula), rewritten after each epoch that changed it,
        atomically, so that it can be read while the search runs.
    every : float
        ``checkpoint_every``.
    fingerprint : str
        Of the training data, written with the search.
    warm_start : bool
        Keep the whole search as it stopped in :attr:`state`.

    Attributes
    ----------
    state : bytes or None
        With ``warm_start``, the search as the stop left it, before pruning and
        snapping (what goes on from here); None until it stops, and after Ctrl-C.
    """

    def __init__(self, path: str | os.PathLike | None, every: float, fingerprint: str,
                 warm_start: bool, names: list[str] | None = None) -> None:
        self.writer = None if path is None else CheckpointWriter(path, every, fingerprint)
        self.front = None if path is None else FrontFile(f"{os.fspath(path)}.front.csv", names)
        self.fingerprint, self.warm_start = fingerprint, warm_start
        self.state: bytes | None = None

    def after_epoch(self, search: Search) -> None:
        """After every epoch: the front's file if it changed, the checkpoint when its
        interval is up."""
        if self.front is not None:
            self.front.update(search.state.hall_of_fame.pareto_front(keep=search.state.best))
        if self.writer is not None:
            self.writer.after_epoch(search)

    def due(self) -> bool:
        """Whether the checkpoint's interval is up: a search of islands gathers them then."""
        return self.writer is not None and self.writer.due()

    def at_interrupt(self, search: Search) -> None:
        """After Ctrl-C: the checkpoint, so that ``--resume`` goes on from here."""
        if self.writer is not None:
            self.writer.write(search)

    def at_stop(self, search: Search) -> None:
        """When a stopping rule fires, before pruning and snapping: the loop's state."""
        if self.writer is not None:
            self.writer.write(search)
        if self.warm_start:
            self.state = checkpoint.dumps_for_warm_start(search, self.fingerprint)


class FrontFile:
    """The current Pareto front as a CSV file, rewritten (atomically) when it changes.

    Columns: ``complexity``, ``loss`` (training MSE), ``reward``, ``criterion``
    and ``formula`` (SymPy's text of the tree, in the feature ``names``, every
    float in full), simplest first. A failed write is skipped silently: the file
    is for watching a search, and the checkpoint reports its own failures.
    """

    def __init__(self, path: str, names: list[str] | None) -> None:
        self.path, self.names = path, names
        self._written: tuple = ()
        self._texts: dict = {}  # (key, constants) -> formula text

    def update(self, front: list) -> None:
        keys = tuple((c.expression.key, c.expression.constants.tobytes()) for c in front)
        if keys == self._written:
            return
        table = io.StringIO()
        rows = csv.writer(table, lineterminator="\n")
        rows.writerow(["complexity", "loss", "reward", "criterion", "formula"])
        for key, c in zip(keys, front):
            text = self._texts.get(key)
            if text is None:
                text = self._texts[key] = str(c.expression.to_sympy(self.names))
            rows.writerow([c.complexity, repr(c.loss), repr(c.reward), repr(c.criterion), text])
        try:
            checkpoint.write_atomically(self.path, table.getvalue().encode("utf-8"))
        except OSError:
            return
        self._written = keys

