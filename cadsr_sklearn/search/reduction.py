"""The search on dimensionless groups, written back in the user's features.

With ``X_units`` and ``y_units``, a law is ``prefactor · f(groups)``
(:mod:`cadsr_sklearn.units.groups`): the target's units fix the prefactor, and f is a
function of fewer features, all dimensionless. A :class:`GroupSearch` adds that search to
a fit, in this order:

1. Where no group is left (``y = c · prefactor``), that one formula joins the search on the
   original table before its first epoch; an exact fit stops it there.
2. The search on the original table runs first, with ``1 − REDUCED_SHARE`` of the budget
   (``max_time``, ``n_epochs``, ``max_evaluations``): a law it writes quickly is not
   delayed, and an exact fit ends the fit as before.
3. Otherwise, between its loop and its refinement, the ordinary search for f runs with the
   budget left, on the table (groups, y / prefactor): a fit of a copy of the estimator, so
   everything a search does (the policy, the constants, the criterion, pruning and
   snapping, Ctrl-C) it does there. Each formula of its front is written back as a tree in
   the user's features (:meth:`~cadsr_sklearn.units.groups.Reduction.rewrite`) and joins
   the original search's result (:func:`~cadsr_sklearn.search.guesses.seed_formulas`),
   its constants refitted on the original rows; the refinement and the criterion on the
   original data then choose the answer among both searches' formulas.

What the model shows and predicts is one formula in the user's features, whichever search
wrote it (``found_by_`` says which).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.base import clone

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..settings import SearchSettings
from ..units.groups import Reduction, dimensional_reduction
from ..units.rule import UnitsRule
from .build import build_library
from .guesses import seed_formulas
from .proposers import REDUCTION
from .training import SearchResult

__all__ = ["ReducedSearch", "GroupSearch", "plan_reduction", "search_groups", "REDUCED_SHARE"]

#: The share of the budget (``max_time``, ``n_epochs``, ``max_evaluations``) the search on
#: the groups gets, after the search on the original table (which may stop early at an
#: exact fit and leave it more).
REDUCED_SHARE = 0.5


@dataclass(frozen=True)
class ReducedSearch:
    """What the search on the groups found, and what it spent (the estimator's
    ``reduction_``)."""

    reduction: Reduction
    formulas: tuple[Expression, ...]  # f's front, each as prefactor · f(groups) in the features
    n_epochs: int
    n_evaluations: int
    seconds: float  # wall clock of the reduced fit, from its start to its front
    interrupted: bool
    note: str | None = None  # why it did not run, or found nothing

    @property
    def description(self) -> str:
        return self.reduction.description

    def sentence(self, found_by: str | None) -> str:
        """What the reports say: the groups, what their search spent, and whether the
        chosen formula came from it (``found_by``, the fitted model's)."""
        spent = ("no search: the units fix the law but for its constant"
                 if self.reduction.n_groups == 0 else
                 f"searched after the original table: {self.n_epochs} epochs, "
                 f"{self.seconds:.1f} s")
        if self.note is not None:
            spent = self.note if self.reduction.n_groups else f"{spent}; {self.note}"
        origin = ("the chosen formula came from it" if found_by == REDUCTION
                  else "the chosen formula came from the search on the original features")
        return f"dimensionless groups: {self.description} ({spent}); {origin}"


@dataclass
class GroupSearch:
    """The search on a fit's dimensionless groups, in the order of the module's docstring;
    :attr:`done` is its record once it ran (or was skipped, and why)."""

    estimator: Any  # whose copy searches the groups
    reduction: Reduction
    settings: SearchSettings  # the fit's, with its whole budget
    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray | None
    seed: int
    library: Library  # the original search's, that the formulas are written back in
    done: ReducedSearch | None = None
    scheduler: Any = None  # with islands: the scheduler whose workers the copy runs on too

    def loop_settings(self) -> SearchSettings:
        """The original search's settings: its share of the budget where a search on the
        groups follows."""
        if self.reduction.n_groups == 0:
            return self.settings
        training, share = self.settings.training, 1 - REDUCED_SHARE
        return replace(self.settings, training=replace(
            training, n_epochs=max(1, math.ceil(training.n_epochs * share)),
            max_time=None if training.max_time is None else training.max_time * share,
            max_evaluations=(None if training.max_evaluations is None
                             else max(1, int(training.max_evaluations * share)))))

    def before_loop(self, search) -> None:
        """Before the first epoch: with no group, ``c · prefactor`` joins ``search``."""
        if self.reduction.n_groups:
            return
        try:
            law = (self.reduction.constant_law(self.library),)
        except ValueError as err:  # a prefactor the operators cannot write
            self.done = ReducedSearch(self.reduction, (), 0, 0, 0.0, False, note=str(err))
            return
        seed_formulas(search, list(law), REDUCTION)
        self.done = ReducedSearch(self.reduction, law, 0, 0, 0.0, False)

    def after_loop(self, search, result: SearchResult) -> SearchResult:
        """Between the original search's loop and its refinement: the search on the groups
        with the budget left, its front joined to ``result`` (unless the loop found the law
        exactly, was interrupted, or left no budget)."""
        if self.reduction.n_groups == 0:
            return result
        budget = self._budget_left(result)
        why_not = ("not run: the fit was interrupted" if result.interrupted else
                   "not run: the search on the original table found an exact fit"
                   if result.stop_reason == "tol" else
                   "not run: no budget was left" if budget is None else None)
        if why_not is not None:
            self.done = ReducedSearch(self.reduction, (), 0, 0, 0.0, False, note=why_not)
            return result
        self.done = search_groups(self.estimator, self.reduction, self.X, self.y,
                                  self.sample_weight, self.library, self.seed,
                                  scheduler=self.scheduler, **budget)
        seed_formulas(search, list(self.done.formulas), REDUCTION,
                      evaluations=self.done.n_evaluations)
        state = search.state
        interrupted = self.done.interrupted
        return replace(result, best=state.best, hall_of_fame=state.hall_of_fame.copy(),
                       n_evaluations=state.n_evaluations,
                       found_by=None if state.best is None else state.best.origin,
                       interrupted=interrupted,
                       stop_reason="interrupted" if interrupted else result.stop_reason)

    def _budget_left(self, result: SearchResult) -> dict | None:
        """The whole budget less what the original search spent; None where none is left."""
        training = self.settings.training
        n_epochs = training.n_epochs - result.n_epochs
        max_time = (None if training.max_time is None
                    else training.max_time - (time.perf_counter() - result.started))
        max_evaluations = (None if training.max_evaluations is None
                           else training.max_evaluations - result.n_evaluations)
        if n_epochs < 1 or (max_time is not None and max_time <= 0) \
                or (max_evaluations is not None and max_evaluations < 1):
            return None
        return dict(n_epochs=n_epochs, max_time=max_time, max_evaluations=max_evaluations)


def plan_reduction(estimator, settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                   sample_weight: np.ndarray | None, units: UnitsRule | None,
                   names: list[str], seed: int) -> GroupSearch | None:
    """The search on the groups of a new search with ``units``, where
    ``settings.dimensional_reduction`` asks for it and there is a reduction defined on
    every row of ``X`` (:func:`~cadsr_sklearn.units.groups.dimensional_reduction`); None
    otherwise."""
    if units is None or not settings.dimensional_reduction:
        return None
    reduction = dimensional_reduction(units.units, names, X)
    if reduction is None or not reduction.applies_to(X):
        return None
    return GroupSearch(estimator, reduction, settings, X, y, sample_weight, seed,
                       build_library(settings.library, X.shape[1]))


def search_groups(estimator, reduction: Reduction, X: np.ndarray, y: np.ndarray,
                  sample_weight: np.ndarray | None, library: Library, seed: int, *,
                  n_epochs: int, max_time: float | None, max_evaluations: int | None,
                  scheduler: Any = None) -> ReducedSearch:
    """Search for f on (groups, y / prefactor) with a copy of ``estimator`` and these
    budgets, seeded with ``seed``; its front written back as trees of ``library`` (the
    search's on the original features). With islands, the copy's run on ``scheduler`` (the
    workers of the original search's)."""
    copy = clone(estimator)
    if scheduler is not None:
        copy.set_params(scheduler=scheduler)
    copy.set_params(
        dimensional_reduction=False, guesses=None, required_features=None, checkpoint=None,
        warm_start=False, keep_candidates=False, verbose=0, random_state=seed,
        n_epochs=n_epochs, max_time=max_time, max_evaluations=max_evaluations)
    start = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # the user's warnings are the original table's
        try:
            copy.fit(reduction.group_values(X), y / reduction.prefactor_values(X),
                     sample_weight)
        except (ValueError, RuntimeError) as err:  # a reduced target no formula can score
            return ReducedSearch(reduction, (), 0, 0, time.perf_counter() - start, False,
                                 note=f"it found nothing: {err}")
        except KeyboardInterrupt:  # Ctrl-C before its first epoch ended: nothing found
            return ReducedSearch(reduction, (), 0, 0, time.perf_counter() - start, True)
    seconds = time.perf_counter() - start
    formulas = []
    for row in copy.front_rows_:
        try:
            formulas.append(reduction.rewrite(row.expression, library))
        except ValueError:  # a monomial the library cannot write (sqrt missing)
            continue
    return ReducedSearch(reduction, tuple(formulas), copy.n_epochs_, copy.n_evaluations_,
                         seconds, bool(copy.interrupted_))
