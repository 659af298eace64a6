"""A fitted front as every view reads it: :class:`FittedFront`.

A fit keeps the whole Pareto front as it reported it (``front_rows_``), the
row each rule of ``model_selection`` chooses (``selections_``) and what goes
with them: the data's units, the targets' variance, the features' symbols
and column names, the user's guesses fitted. :class:`FittedFront` is the one
reading of them by a rule: the rows with the chosen one marked
(``pareto_front_``), the chosen row, any row by ``index=``, the front and the
chosen formula's constants as tables (``equations_``, ``constants_``), each
row's units and training R², each formula shown or in LaTeX (exports are
:func:`cadsr_sklearn.reporting.export.export_row`'s).

The estimator's properties and formula methods, :mod:`cadsr_sklearn.reporting.summary`,
:mod:`cadsr_sklearn.reporting.plotting`, the HTML report, the command line and the
formula file all read a fitted model through it. It is built on access
(:meth:`FittedFront.of`) from the fitted attributes, never stored: a model
unpickled, loaded from a formula file, or whose ``model_selection`` changed
after the fit reads the same way. A model of several outputs has one per
output (:func:`cadsr_sklearn.multioutput.outputs_of`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import sympy
from sklearn.utils.validation import check_is_fitted

from ..expressions.notation import (DISPLAY_DIGITS, check_precision, column_labels, r2_from_loss,
                                    round_floats, rounded_latex)
from .rows import CONSTANT_COLUMNS, FrontRow, as_table, constant_rows, row_position
from .selection import chosen_row
from ..units.check import describe_units
from ..units.quantities import Units

__all__ = ["FittedFront", "column_names"]


def column_names(estimator) -> list[str]:
    """The names of the columns the fitted ``estimator`` was fitted on: ``feature_names_in_``
    where ``X`` had string column names, else ``x0, x1, …``."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"x{i}" for i in range(estimator.n_features_in_)]


@dataclass(frozen=True)
class FittedFront:
    """The fitted front of one output, read by the rule ``rule`` of ``model_selection``.

    Build it with :meth:`of`. The rows are those the fit reported, simplest
    first; ``selections`` the row each rule chooses. Reading the chosen row
    raises :class:`~cadsr_sklearn.front.selection.SelectionError` where ``rule``
    chooses none (``"cv"`` after a fit without it).
    """

    rows: Sequence[FrontRow]  # ``front_rows_``: as the fit reported them, unmarked
    selections: Mapping[str, int]  # rule -> row (``selections_``)
    rule: str  # the ``model_selection`` it reads by
    symbols: Sequence[str]  # each feature's symbol in the formulas (``symbol_names_``)
    columns: Sequence[str]  # each feature's column name
    target: str = "y"
    data_units: Units | None = None  # the units ``fit`` was given
    y_variance: float | None = None  # the training targets', for R²; None if not recorded
    guesses: Sequence[Any] = ()  # ``guesses_``: GuessRow records

    @classmethod
    def of(cls, estimator, rule: str | None = None, target: str | None = None) -> "FittedFront":
        """The front of the fitted one-output ``estimator``, read by ``rule`` (by default
        its ``model_selection``), its target named ``target`` (by default its own).

        Raises :class:`~sklearn.exceptions.NotFittedError` for an unfitted one.
        """
        check_is_fitted(estimator, "selections_")
        columns = column_names(estimator)
        return cls(
            rows=estimator.front_rows_, selections=estimator.selections_,
            rule=estimator.model_selection if rule is None else rule,
            symbols=list(estimator.symbol_names_), columns=columns,
            target=str(estimator.target_names_[0]) if target is None else target,
            data_units=estimator.data_units_, y_variance=estimator.y_variance_,
            guesses=list(estimator.guesses_))

    # ------------------------------------------------------------- the rows
    @property
    def position(self) -> int:
        """The row ``rule`` chooses."""
        return chosen_row(self.selections, self.rule)

    @property
    def marked(self) -> list[FrontRow]:
        """The rows with the one ``rule`` chooses marked ``selected`` (``pareto_front_``)."""
        chosen = self.position
        return [_marked(row, i == chosen) for i, row in enumerate(self.rows)]

    @property
    def chosen(self) -> FrontRow:
        """The row ``rule`` chooses, marked ``selected``."""
        return _marked(self.rows[self.position], True)

    def row(self, index: int | None = None) -> FrontRow:
        """Row ``index`` (negative counts from the end); the chosen one when None."""
        if index is None:
            return self.chosen
        return self.rows[row_position(self.rows, index)]

    # ---------------------------------------------------------- the tables
    def table(self):
        """``equations_``: the marked rows as a table (pandas where installed); in a fit
        with units, each row's units too."""
        rows = self.marked
        records = [row.record() for row in rows]
        if self.data_units is not None:
            for record, row in zip(records, rows):
                record["units"] = self.units(row)
        return as_table(records, list(records[0]))

    def constants(self):
        """``constants_``: one row per number of the chosen formula as it is shown."""
        return as_table(constant_rows(self.chosen), CONSTANT_COLUMNS)

    def units(self, row: FrontRow | None = None) -> str | None:
        """``row``'s units (by default the chosen one's, ``units_``); None without units."""
        return describe_units((self.chosen if row is None else row).expression, self.data_units)

    def r2(self, loss: float) -> float | None:
        """The training R² of a row of training loss ``loss``; None where the targets'
        variance is not recorded or is 0 (a constant target)."""
        if self.y_variance is None or not self.y_variance > 0:
            return None
        return r2_from_loss(loss, self.y_variance)

    # ----------------------------------------------------- the formula shown
    @property
    def labels(self) -> dict[str, str]:
        """Symbol → column name, where they differ (``force_N`` → ``force [N]``)."""
        return column_labels(self.symbols, self.columns)

    def shown(self, index: int | None, precision) -> tuple[sympy.Expr, int]:
        """Row ``index``'s equation and the digits (≥ ``precision``) that show it faithfully."""
        row = self.row(index)
        return row.equation, max(check_precision(precision), row.digits)

    def sympy(self, index: int | None = None, precision: int | None = None) -> sympy.Expr:
        """Row ``index``'s formula (the chosen one when None), its floats exact, or rounded
        for reading with ``precision`` (the estimator's :meth:`sympy`)."""
        if precision is None:
            return self.row(index).equation
        return round_floats(*self.shown(index, precision))

    def latex(self, index: int | None = None, precision: int = DISPLAY_DIGITS) -> str:
        """Row ``index``'s formula in LaTeX, each column's own name for its symbol."""
        return rounded_latex(*self.shown(index, precision), labels=self.labels)


def _marked(row: FrontRow, selected: bool) -> FrontRow:
    """``row`` with ``selected`` as given (itself where it already is)."""
    return row if row.selected == selected else replace(row, selected=selected)
