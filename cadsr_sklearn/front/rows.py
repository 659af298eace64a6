"""What a fit reports about its result: the Pareto front as rows, the chosen one, its constants.

After the search, :func:`report_front` turns the front (simplest first) into
the rows of ``equations_``: each formula in SymPy and the feature names (with
``simplify``, its shortest form equal to it on the training rows), the digits
that show it faithfully (:mod:`cadsr_sklearn.expressions.notation`), the covariance of its
tree's constants (:mod:`cadsr_sklearn.front.uncertainty`) and the standard errors of
the constants it is shown with (:mod:`cadsr_sklearn.front.shown_constants`), which
row ``model_selection`` chose (:mod:`cadsr_sklearn.front.selection`), and the row each
rule would choose, so that the choice can follow ``model_selection`` after the
fit. Two trees that read as one formula, or that show the same text, are
reported once. :func:`as_table` makes the rows a pandas DataFrame where pandas
is installed; :func:`constant_rows` are the rows of ``constants_``.

:func:`record_search` is what the estimator keeps of a finished search: the
report of its front and the search's own record, as a :class:`SearchRecord`
whose fields become the fitted attributes. A constant target needs no search:
:func:`constant_target` records its exact formula ``y = c`` the same way.
(:class:`~cadsr_sklearn.front.fitted.FittedFront` reads the kept front.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import sympy

from ..expressions.notation import faithful_digits, r2_from_loss, round_floats
from ..expressions.expression import Expression
from ..expressions.library import Library
from ..scoring.scorer import Candidate
from .selection import RULES, cross_validated_errors, rule_name, select
from ..settings import ReportSettings
from .shown_constants import CONSTANT_COLUMNS, ShownConstants, shown_constants
from .simplification import simplest_equivalent
from .uncertainty import ConstantUncertainty, constant_uncertainty

__all__ = ["FrontRow", "FrontReport", "report_front", "front_row", "formula", "as_table",
           "row_position", "candidate_rows", "CANDIDATE_COLUMNS",
           "constant_rows", "CONSTANT_COLUMNS", "GuessRow", "verdict", "SearchRecord",
           "record_search", "constant_target"]


@dataclass(frozen=True)
class FrontRow:
    """One formula of the Pareto front: a row of ``equations_``, and what goes with it."""

    complexity: int  # k, nodes (each its token's complexity) + fitted constants
    loss: float  # training MSE
    r2: float  # training R²
    reward: float
    criterion: float  # what chose between the rows (see the estimator's ``criterion``)
    equation: sympy.Expr  # in the feature names, full precision
    formula: str  # readable: as few digits as still predict the same on the training rows
    expression: Expression  # the tree, which predict evaluates
    digits: int  # the significant digits ``formula`` shows
    uncertainty: ConstantUncertainty  # the tree's constants' covariance (BFS order)
    constants: ShownConstants  # the constants ``equation`` shows, with their covariance
    selected: bool = False  # the row ``model_selection`` chose
    cv_loss: float | None = None  # with ``model_selection="cv"``: cross-validated MSE
    unsnapped: Expression | None = None  # the tree before snapping, where snapping fixed any
    unsnapped_uncertainty: ConstantUncertainty | None = None  # and its constants' covariance

    @property
    def constant_errors(self) -> tuple[float, ...]:
        """Standard errors of the displayed formula's constants (``c0, c1, …``)."""
        return tuple(self.constants.standard_errors.tolist())

    def prediction_std(self, X: np.ndarray) -> np.ndarray:
        """(n,) standard error of the formula's value at the rows of ``X`` (delta method).

        With the tree's covariance, which on the training rows gives what the
        displayed form's gives (the same function, reparametrised). When
        snapping fixed every constant, the fit before snapping's: the value is
        then no less uncertain than the data left it, though no constant is
        fitted any more.
        """
        if (not self.expression.n_fitted and self.unsnapped is not None
                and self.unsnapped.n_fitted):
            return self.unsnapped_uncertainty.prediction_std(self.unsnapped, X)
        return self.uncertainty.prediction_std(self.expression, X)

    def record(self) -> dict:
        """The row as ``equations_`` shows it."""
        shown = {"complexity": self.complexity, "loss": self.loss, "r2": self.r2,
                 "reward": self.reward, "criterion": self.criterion, "equation": self.equation,
                 "formula": self.formula, "constant_errors": self.constant_errors,
                 "selected": self.selected, "expression": self.expression}
        if self.cv_loss is not None:
            shown["cv_loss"] = self.cv_loss
        return shown


@dataclass(frozen=True)
class FrontReport:
    """The rows of the front, simplest first, and which one ``model_selection`` chose."""

    rows: list[FrontRow]
    selected: int
    # the row each rule of model_selection chooses; "cv" only where the cv errors were
    # computed (model_selection="cv" at fit, or a front of one row)
    choices: dict[str, int]


def report_front(front: list[Candidate], best: Candidate, X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, names: list[str], *, simplify: bool,
                 y_variance: float, model_selection: str, const_fit_samples: int,
                 snapped_from: Mapping[tuple, Candidate] | None = None,
                 keep: Sequence[str] = ()) -> FrontReport:
    """The report of the Pareto ``front`` (simplest first), τ* = ``best`` among it.

    ``names`` are the features' symbols; ``y_variance`` the training targets'
    (weighted) variance, for each row's R². With ``model_selection="cv"`` the
    rows get a ``cv_loss`` column (constants refitted on at most
    ``const_fit_samples`` rows of each fold). The uncertainty of each candidate's
    constants is taken on the rows they were fitted on (its ``fitted_rows``).
    ``snapped_from`` maps the key of a formula snapping changed to the formula before
    (the search's ``SearchResult.snapped_from``). ``keep``: the symbols of
    ``required_features``, which simplification may not drop.
    """
    rows: list[FrontRow] = []
    for c in front:
        row = front_row(c, X, y, sample_weight, names, simplify=simplify, y_variance=y_variance,
                        before=(snapped_from or {}).get(c.expression.key),
                        keep=keep)
        # One formula once, and one text once (two trees can read the same at four
        # digits, 6.295*(L/g)**0.5012 at k = 9 and 11): the simplest tree of it,
        # unless the other is τ*, which every rule must still find.
        twin = next((i for i, r in enumerate(rows)
                     if r.equation == row.equation or r.formula == row.formula), None)
        if twin is not None:
            if c.expression.key != best.expression.key:
                continue
            del rows[twin]
        rows.append(row)
    cv_errors = None
    if model_selection == "cv":
        cv_errors = cross_validated_errors([r.expression for r in rows], X, y, sample_weight,
                                           const_fit_samples=const_fit_samples)
        rows = [replace(row, cv_loss=float(np.mean(errors)))
                for row, errors in zip(rows, cv_errors)]
    best_row = next(i for i, r in enumerate(rows) if r.expression.key == best.expression.key)
    # Every rule's row, so that model_selection can change after the fit; "cv" needs the
    # cv errors, computed only when asked for (a constant refit per row and fold), but
    # a front of one row is every rule's answer.
    losses, complexities = [r.loss for r in rows], [r.complexity for r in rows]
    choices = {rule: select(losses, complexities, rule, best_row, cv_errors)
               for rule in RULES if rule != "cv" or cv_errors is not None}
    if len(rows) == 1:
        choices["cv"] = 0
    chosen = choices[rule_name(model_selection)]
    rows[chosen] = replace(rows[chosen], selected=True)
    return FrontReport(rows, chosen, choices)


def front_row(c: Candidate, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None,
              names: list[str], *, simplify: bool, y_variance: float,
              before: Candidate | None = None, keep: Sequence[str] = ()) -> FrontRow:
    """The row that reports the scored candidate ``c``; the arguments as for
    :func:`report_front`, ``before`` its fit before snapping where snapping changed it."""
    with np.errstate(all="ignore"):
        reference = c.expression.evaluate(X)  # what the shown forms must predict
    equation = formula(c.expression, X, reference, names, simplify, keep)
    d = faithful_digits(equation, [sympy.Symbol(n) for n in names], X, reference)
    seen = c.fitted_rows  # the rows its fit saw
    unsnapped = None
    if before is not None:
        unsnapped = (before.expression, constant_uncertainty(
            before.expression, X, y, sample_weight, before.fitted_rows))
    return FrontRow(
        complexity=c.complexity, loss=c.loss, r2=r2_from_loss(c.loss, y_variance),
        reward=c.reward, criterion=c.criterion, equation=equation,
        formula=str(round_floats(equation, d)), expression=c.expression, digits=d,
        uncertainty=constant_uncertainty(c.expression, X, y, sample_weight, seen),
        constants=shown_constants(equation, d, c.expression, names, X, y, sample_weight,
                                  seen, unsnapped),
        unsnapped=None if unsnapped is None else unsnapped[0],
        unsnapped_uncertainty=None if unsnapped is None else unsnapped[1])


def formula(expression: Expression, X: np.ndarray, reference: np.ndarray, names: list[str],
            simplify: bool, keep: Sequence[str] = ()) -> sympy.Expr:
    """``expression`` in SymPy and the feature ``names``.

    With ``simplify``, its shortest form equal to it on the training rows ``X``, where
    it predicts ``reference``, that still holds each of the symbols ``keep`` that the
    tree's form holds.
    """
    written = expression.to_sympy(names)
    if not simplify:
        return written
    return simplest_equivalent(written, X, reference, [sympy.Symbol(n) for n in names],
                               keep=[sympy.Symbol(n) for n in keep])


def as_table(rows: list[dict], columns: list[str]):
    """A pandas DataFrame of ``rows`` when pandas is installed, else the list itself."""
    try:
        import pandas as pd
    except ImportError:  # pandas is optional
        return rows
    return pd.DataFrame(rows, columns=columns)


def row_position(rows: list[FrontRow], index: int | None) -> int:
    """The position of row ``index`` of ``rows`` (negative counts from the end); the
    selected row when None."""
    if index is None:
        return next(i for i, r in enumerate(rows) if r.selected)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"index must be an integer row of equations_, got {index!r}.")
    if not -len(rows) <= index < len(rows):
        raise IndexError(f"index {index} is out of range: equations_ has {len(rows)} rows.")
    return int(index) % len(rows)


#: The columns of ``candidates_``.
CANDIDATE_COLUMNS = ["complexity", "loss", "reward", "criterion", "formula"]


def candidate_rows(candidates, names: list[str]) -> list[dict]:
    """One row per scored candidate for ``candidates_``, best reward first; the formula
    in infix (fast enough for the tens of thousands a search scores, unlike SymPy)."""
    ranked = sorted(candidates, key=lambda c: (-c.reward, c.complexity))
    return [dict(zip(CANDIDATE_COLUMNS, (c.complexity, c.loss, c.reward, c.criterion,
                                         c.expression.infix(names, precision=6))))
            for c in ranked]


def constant_rows(row: FrontRow, level: float = 0.95) -> list[dict]:
    """The rows of ``constants_`` for the front's ``row``: the constants its formula is
    shown with (``c0, c1, …`` as its text reads), then the numbers fixed to simple ones
    (``s0, s1, …``) with their intervals before (see :mod:`cadsr_sklearn.front.shown_constants`)."""
    return [asdict(r) for r in row.constants.rows(level)]


# ------------------------------------------------------------- what a fit keeps
@dataclass(frozen=True)
class GuessRow(FrontRow):
    """A formula the user wrote, fitted and scored as the search's own: a row of the
    front's kind (complexity, loss, R², reward, criterion, constants with their standard
    errors…), and the formula as it was written."""

    guess: str = ""  # as written (a SymPy expression's text)

    @classmethod
    def of(cls, row: FrontRow, guess: str) -> "GuessRow":
        return cls(**{f.name: getattr(row, f.name) for f in fields(FrontRow)}, guess=guess)

    def record(self) -> dict:
        return {"guess": self.guess, **super().record()}


def verdict(chosen: FrontRow, guess: FrontRow) -> str:
    """Whether the chosen formula beats the guess on the criterion, in words."""
    scores = f"criterion {chosen.criterion:.6g} vs {guess.criterion:.6g}"
    if math.isclose(chosen.criterion, guess.criterion, rel_tol=1e-9, abs_tol=1e-9):
        return f"the chosen formula ties with it ({scores})"
    if chosen.criterion > guess.criterion:
        return f"the chosen formula beats it ({scores})"
    return f"it beats the chosen formula ({scores})"


@dataclass(frozen=True)
class SearchRecord:
    """What the estimator keeps of a finished search: the report of its front, the row each
    rule chooses, and how the search went. :meth:`attributes` names them as the fitted
    attributes they become."""

    y_variance: float
    front_rows: list[FrontRow]  # every row, unmarked by any rule
    selections: dict[str, int]  # rule -> row
    unsnapped_expression: Expression  # τ* before snapping
    history: list[dict]  # one row per epoch
    n_epochs: int
    n_evaluations: int
    stop_reason: str
    interrupted: bool
    candidates: list[dict] | None = None  # every formula scored, with keep_candidates
    found_by: str | None = None  # the proposer that first wrote τ*; None without a search

    def attributes(self) -> dict[str, Any]:
        """The estimator's fitted attributes, by name (``candidates_`` only where kept)."""
        attributes = {"y_variance_": self.y_variance, "front_rows_": self.front_rows,
                      "selections_": self.selections,
                      "unsnapped_expression_": self.unsnapped_expression,
                      "history_": self.history, "n_epochs_": self.n_epochs,
                      "n_evaluations_": self.n_evaluations, "stop_reason_": self.stop_reason,
                      "interrupted_": self.interrupted, "found_by_": self.found_by}
        if self.candidates is not None:
            attributes["candidates_"] = as_table(self.candidates, CANDIDATE_COLUMNS)
        return attributes


def record_search(result, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None,
                  names: list[str], settings: ReportSettings, *, y_variance: float,
                  keep: Sequence[str] = (),
                  candidates: Iterable[Candidate] | None = None) -> SearchRecord:
    """The record of the finished search ``result`` (a ``SearchResult``) on ``X, y``.

    Its front (with τ* always among it) is reported by :func:`report_front`,
    the arguments as there; ``candidates``, every formula the search scored,
    are kept as the rows of ``candidates_`` where given.
    """
    report = report_front(
        result.hall_of_fame.pareto_front(keep=result.best), result.best, X, y, sample_weight,
        names, simplify=settings.simplify, y_variance=y_variance,
        model_selection=settings.model_selection, const_fit_samples=settings.const_fit_samples,
        snapped_from=result.snapped_from, keep=keep)
    return SearchRecord(
        y_variance=y_variance, front_rows=report.rows, selections=report.choices,
        unsnapped_expression=result.unsnapped.expression,
        history=[epoch.row() for epoch in result.history], n_epochs=result.n_epochs,
        n_evaluations=result.n_evaluations, stop_reason=result.stop_reason,
        interrupted=result.interrupted, found_by=result.found_by,
        candidates=None if candidates is None else candidate_rows(candidates, names))


def constant_target(X: np.ndarray, y: np.ndarray, names: list[str],
                    settings: ReportSettings) -> SearchRecord:
    """The record of a constant target ``y``: the exact formula ``y = c``, a front of one
    row, found without a search (``stop_reason`` "constant target")."""
    library = Library(X.shape[1], (), ("neg",), use_constants=True, use_one=False)
    best = Candidate(Expression((library.const_id,), library, [float(y[0])]), math.inf, 0.0)
    report = report_front([best], best, X, y, None, names, simplify=settings.simplify,
                          y_variance=0.0, model_selection=settings.model_selection,
                          const_fit_samples=settings.const_fit_samples)
    return SearchRecord(y_variance=0.0, front_rows=report.rows, selections=report.choices,
                        unsnapped_expression=best.expression, history=[], n_epochs=0,
                        n_evaluations=0, stop_reason="constant target", interrupted=False)
