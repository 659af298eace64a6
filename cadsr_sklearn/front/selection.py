"""Which formula of the Pareto front is the answer (the estimator's ``model_selection``).

``"criterion"``
    τ*, the formula the criterion ranks highest of all the search scored (the
    paper's choice, by its reward; see :mod:`cadsr_sklearn.scoring.scorer`).
    ``"reward"`` is another name of it (:data:`ALIASES`), its name before it was
    named for what it chooses by: the estimator's ``criterion``, by default the
    description length, which is not the search's reward.
``"accuracy"``
    The lowest training loss.
``"score"``
    PySR's rule: the largest drop in log-loss per unit of complexity from the
    row before, among the rows whose loss is at most 1.5 times the lowest.
``"cv"``
    Cross-validation, for small tables where the criterion's asymptotics are
    thin: each row's constants are refitted without the held-out rows
    (leave-one-out up to :data:`MAX_LEAVE_ONE_OUT` rows, else
    :data:`N_FOLDS` folds), starting from the constants fitted on all rows,
    and predict them; the answer is the simplest row whose held-out mean
    squared error is within one standard error of the lowest (Breiman's
    one-standard-error rule: a more complex formula must predict unseen rows
    measurably better). The structure was chosen on all rows, so this
    validates the constants, not the search.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Sequence

import numpy as np

from ..scoring.constant_fitter import ConstantFitter
from ..expressions.expression import Expression

__all__ = ["RULES", "ALIASES", "rule_name", "select", "chosen_row", "SelectionError",
           "cross_validated_errors", "MAX_LEAVE_ONE_OUT", "N_FOLDS"]

#: The rules of ``model_selection``, each by its own name: the keys of a fit's ``selections_``.
RULES = ("criterion", "accuracy", "score", "cv")

#: Other names ``model_selection`` accepts, each for the rule it names, and that it behaves
#: as in every way. Fits, pickles and formula files from before the rename record
#: ``"reward"`` among a fit's choices, so the choices are read through them too.
ALIASES = MappingProxyType({"reward": "criterion"})

#: Up to this many rows, ``"cv"`` leaves one row out at a time; above, it uses N_FOLDS folds.
MAX_LEAVE_ONE_OUT = 100
N_FOLDS = 10

_SCORE_LOSS_RATIO = 1.5  # PySR's rule looks at rows within this factor of the lowest loss


class SelectionError(ValueError, AttributeError):
    """``model_selection`` names no row of a fitted front: an unknown rule, or ``"cv"``
    on a model fitted without the cross-validated errors.

    Also an AttributeError: the attributes that follow the selection
    (``expression_``, ``best_expression_``…) do not exist under such a
    ``model_selection``, so that ``hasattr`` says so and scikit-learn's HTML
    display (which reads every fitted attribute, also of a pipeline's steps) goes
    on without them instead of failing.
    """


def rule_name(rule: str) -> str:
    """The name in :data:`RULES` of the rule ``rule`` names (itself, or the rule an alias
    names); anything else is returned as it is, for the caller to reject."""
    return ALIASES.get(rule, rule) if isinstance(rule, str) else rule


def chosen_row(choices: dict[str, int], rule: str) -> int:
    """The row ``rule`` chooses, from the ``choices`` a fit recorded (rule → row).

    A rule and its aliases read the same row, whichever name the fit recorded it by.

    Raises
    ------
    SelectionError
        If ``rule`` is no rule, or is ``"cv"`` and the fit did not compute the
        cross-validated errors (a fit with ``model_selection="cv"`` does).
    """
    choices = {rule_name(name): row for name, row in choices.items()}
    rule = rule_name(rule)
    if isinstance(rule, str) and rule in choices:
        return choices[rule]
    if rule == "cv":
        raise SelectionError(
            "model_selection='cv' needs the cross-validated errors of the front, which only a "
            "fit with model_selection='cv' computes: refit, e.g. "
            "model.set_params(model_selection='cv').fit(X, y).")
    raise SelectionError(f"model_selection must be one of {RULES}, got {rule!r}.")


def select(losses: Sequence[float], complexities: Sequence[int], rule: str, best: int,
           cv_errors: np.ndarray | None = None) -> int:
    """The position of the front row ``rule`` picks.

    ``losses`` and ``complexities`` are the front's rows, simplest first; ``best``
    is the position of τ*; ``cv_errors`` (rows, S), each row's held-out squared
    errors (:func:`cross_validated_errors`), for ``"cv"``. An alias picks what its rule does.
    """
    rule = rule_name(rule)
    if rule == "criterion":
        return best
    if rule == "accuracy":
        return min(range(len(losses)), key=lambda i: (losses[i], i))
    if rule == "score":
        floor = _SCORE_LOSS_RATIO * min(losses)
        tiny = np.finfo(float).tiny  # an exact fit's log-loss stays finite
        scores = [0.0] + [
            -(math.log(max(b, tiny)) - math.log(max(a, tiny))) / (kb - ka)
            for a, b, ka, kb in zip(losses, losses[1:], complexities, complexities[1:])
        ]
        return max((i for i, loss in enumerate(losses) if loss <= floor),
                   key=lambda i: (scores[i], -i))
    if rule == "cv":
        return _one_standard_error(cv_errors)
    raise ValueError(f"model_selection must be one of {RULES}, got {rule!r}.")


def _one_standard_error(errors: np.ndarray) -> int:
    """The first row (the simplest) whose mean error is within one standard error of the lowest."""
    with np.errstate(all="ignore"):
        means = errors.mean(axis=1)
    finite = np.isfinite(means)
    if not finite.any():
        return 0
    lowest = int(np.argmin(np.where(finite, means, np.inf)))
    spread = errors[lowest].std(ddof=1) / math.sqrt(errors.shape[1]) if errors.shape[1] > 1 else 0
    return int(np.flatnonzero(finite & (means <= means[lowest] + spread))[0])


def cross_validated_errors(expressions: Sequence[Expression], X: np.ndarray, y: np.ndarray,
                           sample_weight: np.ndarray | None, *,
                           const_fit_samples: int) -> np.ndarray:
    """(len(expressions), S) weighted held-out squared error of each formula at each row.

    Each formula's fitted constants are refitted on the other folds' rows (at
    most ``const_fit_samples`` of them, as in the search) from their fitted
    values (a formula without fitted constants is only evaluated);
    inf where the refit fails or the prediction is not finite. Deterministic:
    fold ``f`` holds the rows ``i`` with ``i % n_folds == f``.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    S = len(y)
    w = np.ones(S) if sample_weight is None else np.asarray(sample_weight, np.float64) * (
        S / np.sum(sample_weight))
    n_folds = S if S <= MAX_LEAVE_ONE_OUT else N_FOLDS
    fold = np.arange(S) % n_folds
    predictions = np.full((len(expressions), S), np.nan)
    for f in range(n_folds):
        held, kept = fold == f, fold != f
        fitter = ConstantFitter(X[kept], y[kept], sample_weight=w[kept],
                                const_fit_samples=const_fit_samples, random_state=0, n_jobs=1)
        refitted = fitter.fit(expressions, from_held=True, fresh_starts=False)
        for j, expression in enumerate(refitted):
            if refitted.success[j]:
                with np.errstate(all="ignore"):
                    predictions[j, held] = expression.evaluate(X[held])
    with np.errstate(all="ignore"):
        errors = w * (predictions - y) ** 2
    return np.where(np.isfinite(errors), errors, np.inf)
