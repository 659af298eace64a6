"""The search on dimensionless groups, written back in the user's features.

With ``X_units`` and ``y_units``, a law is ``prefactor · f(groups)``
(:mod:`cadsr_sklearn.units.groups`): the target's units fix the prefactor, and f is a
function of fewer features, all dimensionless. :func:`search_groups` runs the ordinary
search for f first, on the table (groups, y / prefactor), with a share of the budget
(:data:`REDUCED_SHARE`); it is a fit of a copy of the estimator, so everything a search
does (the policy, the constants, the criterion, pruning and snapping, Ctrl-C) it does
there. Each formula of that fit's front is written back as a tree in the user's
features (:meth:`~cadsr_sklearn.units.groups.Reduction.rewrite`), and
:func:`~cadsr_sklearn.search.guesses.seed_formulas` hands them to the search on the
original table, which refits their constants on the original rows and goes on with the
rest of the budget: the criterion on the original data chooses the answer, among the
reduced search's formulas and its own. What the model shows and predicts is one
formula in the user's features, whichever search wrote it (``found_by_`` says which).

With no group (the units fix the law but for its constant, ``y = c · prefactor``) there is
no search to run: that one formula is handed over.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import clone

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..settings import SearchSettings
from ..units.groups import Reduction, dimensional_reduction
from ..units.rule import UnitsRule
from .build import build_library
from .proposers import REDUCTION

__all__ = ["ReducedSearch", "reduce_first", "search_groups", "REDUCED_SHARE"]

#: The share of the budget (``max_time``, ``n_epochs``, ``max_evaluations``) the search on
#: the groups gets before the search on the original table: a reduced problem that is the
#: law's stops early at its exact fit and leaves the rest.
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
    failure: str | None = None  # why the reduced fit found nothing, where it did not

    @property
    def description(self) -> str:
        return self.reduction.description

    def sentence(self, found_by: str | None) -> str:
        """What the reports say: the groups, what their search spent, and whether the
        chosen formula came from it (``found_by``, the fitted model's)."""
        spent = ("no search: the units fix the law but for its constant"
                 if self.reduction.n_groups == 0 else
                 f"searched first: {self.n_epochs} epochs, {self.seconds:.1f} s")
        if self.failure is not None:
            spent += f"; it found nothing ({self.failure})"
        origin = ("the chosen formula came from it" if found_by == REDUCTION
                  else "the chosen formula came from the search on the original features")
        return f"dimensionless groups: {self.description} ({spent}); {origin}"

    def remaining(self, settings: SearchSettings) -> SearchSettings:
        """``settings`` with the budgets this search left; no epoch after a Ctrl-C."""
        training = settings.training
        if self.interrupted:
            return replace(settings, training=replace(training, n_epochs=0))
        n_epochs = max(training.n_epochs - self.n_epochs, 0)
        max_time = training.max_time
        if max_time is not None:
            max_time = max_time - self.seconds
            n_epochs = n_epochs if max_time > 0 else 0
        max_evaluations = training.max_evaluations
        if max_evaluations is not None:
            max_evaluations = max(max_evaluations - self.n_evaluations, 1)
        return replace(settings, training=replace(training, n_epochs=n_epochs, max_time=max_time,
                                                  max_evaluations=max_evaluations))


def reduce_first(estimator, settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, units: UnitsRule | None,
                 names: list[str], seed: int) -> ReducedSearch | None:
    """The search on the groups of a new search with ``units``, where
    ``settings.dimensional_reduction`` asks for it and there is a reduction defined on
    every row of ``X`` (:func:`~cadsr_sklearn.units.groups.dimensional_reduction`); None
    otherwise."""
    if units is None or not settings.dimensional_reduction:
        return None
    reduction = dimensional_reduction(units.units, names, X)
    if reduction is None or not reduction.applies_to(X):
        return None
    library = build_library(settings.library, X.shape[1])
    return search_groups(estimator, reduction, X, y, sample_weight, settings, library, seed)


def search_groups(estimator, reduction: Reduction, X: np.ndarray, y: np.ndarray,
                  sample_weight: np.ndarray | None, settings: SearchSettings,
                  library: Library, seed: int) -> ReducedSearch:
    """Search for f on (groups, y / prefactor) with a copy of ``estimator`` and
    :data:`REDUCED_SHARE` of ``settings``' budgets, seeded with ``seed``; its front
    written back as trees of ``library`` (the search's on the original features)."""
    if reduction.n_groups == 0:  # y = c · prefactor: nothing to search
        try:
            law = (reduction.constant_law(library),)
        except ValueError as err:  # a prefactor the operators cannot write
            return ReducedSearch(reduction, (), 0, 0, 0.0, False, failure=str(err))
        return ReducedSearch(reduction, law, 0, 0, 0.0, False)
    training = settings.training
    copy = clone(estimator).set_params(
        dimensional_reduction=False, guesses=None, required_features=None, checkpoint=None,
        warm_start=False, keep_candidates=False, verbose=0, random_state=seed,
        n_epochs=max(1, math.ceil(training.n_epochs * REDUCED_SHARE)),
        max_time=None if training.max_time is None else training.max_time * REDUCED_SHARE,
        max_evaluations=(None if training.max_evaluations is None
                         else max(1, int(training.max_evaluations * REDUCED_SHARE))))
    start = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # the user's warnings are the original table's
        try:
            copy.fit(reduction.group_values(X), y / reduction.prefactor_values(X),
                     sample_weight)
        except (ValueError, RuntimeError) as err:  # a reduced target no formula can score
            return ReducedSearch(reduction, (), 0, 0, time.perf_counter() - start, False,
                                 failure=str(err))
    seconds = time.perf_counter() - start
    formulas = []
    for row in copy.front_rows_:
        try:
            formulas.append(reduction.rewrite(row.expression, library))
        except ValueError:  # a monomial the library cannot write (sqrt missing)
            continue
    return ReducedSearch(reduction, tuple(formulas), copy.n_epochs_, copy.n_evaluations_,
                         seconds, bool(copy.interrupted_))
