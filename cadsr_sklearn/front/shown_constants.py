"""The constants of a displayed formula: the numbers a reader sees, and how sure they are.

The search fits the constants of a token tree, but what a user reads is its
SymPy form, simplified (:mod:`cadsr_sklearn.front.simplification`): the tree
``sqrt(L/(c1*g))`` with ``c1 = 0.02534`` reads ``6.282*sqrt(L/g)``. An interval
for ``c1`` answers a question nobody asked; this module describes the numbers
on the screen instead.

The displayed formula is taken as a model of its own: its floats are its
parameters, named ``c0, c1, …`` in the order its text shows them (left to
right), and their covariance comes from its own Jacobian on the rows, and with
the weights, the tree's constants were fitted on
(:func:`cadsr_sklearn.front.uncertainty.form_uncertainty`). Where simplification only
rewrote the tree (as many constants), these are the delta-method transforms of
the tree's intervals; where it merged constants (``c0*sqrt(c1*x)`` reads
``k*sqrt(x)``), the form has fewer. Numbers that belong to the form rather than
to the fit (the 2 of ``x**2``, a ``sin(1)`` the tree folded to a float) are
not constants.

A constant fixed to a simple number is no parameter, but it is listed too,
with what the fit said before it was fixed (``fitted_value``, its interval
and standard error) and the ``gap`` to the nearest rival simple number, which
that standard error was judged against
(:func:`cadsr_sklearn.expressions.simple_numbers.resolves`), so a table never
hides that a number was chosen rather than measured, nor how well the data
single it out. Two steps fix numbers:

* snapping (:mod:`cadsr_sklearn.search.refinement.snapping`) fixes a tree constant the data
  cannot tell from a simple number; its interval is that of the tree before
  snapping (the search keeps that fit);
* simplification writes a float that is round-off away from a simple number
  as that number (``6.28318530717958`` as ``2*pi``); its interval is that of
  the float in the tree's unsimplified SymPy form.

These are named ``s0, s1, …``; ``shown`` is the number as SymPy writes it
(``1/2``, ``2*pi``), though the formula may show it in another guise (a square
root for 1/2) or not at all (a factor 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy
from sympy.printing.str import StrPrinter

from ..expressions.notation import round_floats, rounded_float
from ..expressions.expression import Expression
from ..expressions.simple_numbers import rival_gap, snap_number
from .uncertainty import ConstantUncertainty, form_uncertainty

__all__ = ["ConstantRow", "FixedConstant", "ShownConstants", "shown_constants",
           "CONSTANT_COLUMNS"]


@dataclass(frozen=True)
class ConstantRow:
    """One constant of the displayed formula: a row of ``constants_``."""

    name: str  # c0, c1, … in the order the formula shows them; s0, s1, … for fixed ones
    shown: str  # as the formula's text rounds it, with its sign; a fixed one exactly
    value: float  # full precision
    std_error: float  # NaN for a fixed one
    ci_low: float
    ci_high: float
    fixed: bool  # fixed to a simple number by snapping or simplification: no parameter
    fitted_value: float  # a fixed one's value as fitted before it was fixed; else NaN
    fitted_ci_low: float  # and its interval then
    fitted_ci_high: float
    fitted_std_error: float  # and its standard error then
    #: a fixed one's distance to its nearest rival among the simple numbers (one no more
    #: than ln 2 longer to write): the gap its standard error was judged against; else NaN
    gap: float


#: The columns of ``constants_``: the fields of :class:`ConstantRow`.
CONSTANT_COLUMNS = list(ConstantRow.__dataclass_fields__)


@dataclass(frozen=True)
class FixedConstant:
    """A number of the formula fixed to a simple one, and the fit it was fixed from."""

    name: str  # s0, s1, …
    shown: str  # exactly, as SymPy writes it: 1/2, 2*pi
    value: float
    fitted: ConstantUncertainty | None  # the fit before: the unsnapped tree, or the written form
    index: int  # the constant's position in ``fitted``

    def fitted_interval(self, level: float) -> tuple[float, float, float, float]:
        """(value, low, high, standard error) of the fit before the number was fixed; NaN
        when unknown."""
        if self.fitted is None:
            return np.nan, np.nan, np.nan, np.nan
        low, high = self.fitted.intervals(level)[self.index]
        return (float(self.fitted.values[self.index]), float(low), float(high),
                float(self.fitted.standard_errors[self.index]))


@dataclass(frozen=True)
class ShownConstants:
    """The constants of one displayed formula: its parameters, then the fixed numbers."""

    form: sympy.Expr  # the displayed formula, its constants the symbols ``names``
    names: tuple[str, ...]  # c0, c1, … in the order the text shows them
    shown: tuple[str, ...]  # each as the text shows it
    uncertainty: ConstantUncertainty  # of the form's own constants, in that order
    fixed: tuple[FixedConstant, ...]

    @property
    def standard_errors(self) -> np.ndarray:
        """(q,) standard error of each of the form's constants, in the order of ``names``."""
        return self.uncertainty.standard_errors

    def rows(self, level: float = 0.95) -> list[ConstantRow]:
        """The rows of ``constants_``: each constant with its interval at ``level``, then the
        fixed numbers with the interval they had before they were fixed."""
        u = self.uncertainty
        errors, intervals = u.standard_errors, u.intervals(level)
        out = [ConstantRow(name, text, float(value), float(error), float(low), float(high),
                           False, np.nan, np.nan, np.nan, np.nan, np.nan)
               for name, text, value, error, (low, high)
               in zip(self.names, self.shown, u.values, errors, intervals)]
        for f in self.fixed:
            out.append(ConstantRow(f.name, f.shown, f.value, np.nan, np.nan, np.nan, True,
                                   *f.fitted_interval(level), rival_gap(f.value)))
        return out


def shown_constants(equation: sympy.Expr, digits: int, expression: Expression,
                    names: list[str], X: np.ndarray, y: np.ndarray,
                    sample_weight: np.ndarray | None = None, rows: np.ndarray | None = None,
                    unsnapped: tuple[Expression, ConstantUncertainty] | None = None,
                    ) -> ShownConstants:
    """The constants of ``equation``, the displayed form of the tree ``expression``.

    Parameters
    ----------
    equation : sympy.Expr
        The formula as shown, in the feature symbols ``names``, full precision.
    digits : int
        The significant digits its text shows.
    expression : Expression
        The tree it is the form of, as fitted (with the literals snapping fixed).
    names : list of str
        The features' symbols, one per column of ``X``.
    X, y, sample_weight, rows
        The training data, and the rows the tree's constants were fitted on.
    unsnapped : (Expression, ConstantUncertainty), optional
        The tree before snapping, and its constants' uncertainty: the intervals
        of the constants snapping fixed.
    """
    features = [sympy.Symbol(n) for n in names]
    structural = {float(f) for f in
                  expression.to_sympy(names, symbolic_constants=True).atoms(sympy.Float)}
    floats = [f for f in equation.atoms(sympy.Float) if float(f) not in structural]
    ordered = _in_reading_order(equation, floats, digits)
    prefix = _free_prefix(names)
    symbols = [sympy.Symbol(f"{prefix}{j}") for j in range(len(ordered))]
    form = equation.xreplace({f: s for (f, _), s in zip(ordered, symbols)})
    values = [float(f) for f, _ in ordered]
    uncertainty = form_uncertainty(form, symbols, values, features, X, y, sample_weight, rows)
    fixed = _snapped(expression, unsnapped) + _simplified(
        expression, equation, structural, names, X, y, sample_weight, rows)
    fixed = [FixedConstant(f"s{j}", *f) for j, f in enumerate(fixed)]
    return ShownConstants(form, tuple(s.name for s in symbols), tuple(t for _, t in ordered),
                          uncertainty, tuple(fixed))


def _snapped(expression: Expression, unsnapped) -> list[tuple]:
    """(shown, value, fitted, index) of each tree constant snapping fixed, in BFS order."""
    before, fitted = unsnapped if unsnapped is not None else (None, None)
    if before is None or before.tokens != expression.tokens:
        fitted = None  # no record of the fit it was snapped from
    out = []
    for k in np.flatnonzero(expression.fixed):
        value = float(expression.constants[k])
        exact = snap_number(value, rtol=0.0)
        known = fitted is not None and not before.fixed[k]
        out.append((str(value) if exact is None else str(exact), value,
                    fitted if known else None, int(k)))
    return out


def _simplified(expression: Expression, equation: sympy.Expr, structural: set[float],
                names: list[str], X, y, sample_weight, rows) -> list[tuple]:
    """(shown, value, fitted, index) of each fitted float of the tree's SymPy form that
    simplification wrote as a simple number, with its interval in that form."""
    written = expression.to_sympy(names)
    shown = {float(f) for f in equation.atoms(sympy.Float)}
    floats = [f for f in written.atoms(sympy.Float) if float(f) not in structural]
    snapped = {f: s for f in floats if float(f) not in shown
               and (s := snap_number(float(f))) is not None}
    if not snapped:
        return []
    ordered = [f for f, _ in _in_reading_order(written, floats, 17)]
    parameters = [sympy.Dummy() for _ in ordered]
    fitted = form_uncertainty(written.xreplace(dict(zip(ordered, parameters))), parameters,
                              [float(f) for f in ordered], [sympy.Symbol(n) for n in names],
                              X, y, sample_weight, rows)
    return [(str(snapped[f]), float(snapped[f]), fitted, j)
            for j, f in enumerate(ordered) if f in snapped]


class _ReadingOrder(StrPrinter):
    """The text of a formula, noting each float it prints, in order, with its sign."""

    def __init__(self):
        super().__init__()
        self.printed: list[tuple[float, str]] = []
        self._sign_apart: float | None = None  # |coefficient| of the Mul being printed

    def _print_Mul(self, expr):
        # The printer writes -2.5*x as "-" and then the float 2.5 it makes by negating the
        # coefficient: note its value, so that float, the first the Mul prints, is noted
        # as the negative number the reader sees. Without the sign, -2.5*x0 + 2.5*x1 would
        # name its constants by whichever of ±2.5 came first in an arbitrary list.
        coefficient = expr.args[0]
        if coefficient.is_Float and coefficient < 0:
            self._sign_apart = -float(coefficient)
        return super()._print_Mul(expr)

    def _print_Float(self, expr):
        text = super()._print_Float(expr)
        value = float(expr)
        if self._sign_apart is not None:
            value = -value if value == self._sign_apart else value
            self._sign_apart = None
        self.printed.append((value, text))
        return text


def _in_reading_order(equation: sympy.Expr, floats: list[sympy.Float],
                      digits: int) -> list[tuple[sympy.Float, str]]:
    """``floats`` (of ``equation``) as its text at ``digits`` shows them, left to right, each
    with its text; those the text does not show (an exponent 1.00001 shown as ``x``) last."""
    rounded = {f: float(rounded_float(f, digits)) for f in floats}
    printer = _ReadingOrder()
    printer.doprint(round_floats(equation, digits))
    left = sorted(floats, key=sympy.default_sort_key)
    out = []
    for value, text in printer.printed:
        # A float is noted with the sign the text gives it; one the printer negated
        # elsewhere (x**(-2.5) in a quotient prints as 1/x**2.5) is matched by its negative,
        # after any float that matches exactly; the sign shown is the float's own.
        match = (next((f for f in left if rounded[f] == value), None)
                 or next((f for f in left if rounded[f] == -value), None))
        if match is None:
            continue  # a float the tree folded, or rounding made
        left.remove(match)
        if (float(match) < 0) != text.startswith("-"):
            text = text[1:] if text.startswith("-") else "-" + text
        out.append((match, text))
    for f in left:
        out.append((f, sympy.sstr(rounded_float(f, digits), full_prec=False)))
    return out


def _free_prefix(names: list[str]) -> str:
    """A letter for the constants' names, ``c`` unless a feature is called ``c0``, ``c1``…"""
    for prefix in ("c", "k", "a", "b", "theta"):
        if not any(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
            return prefix
    return "const"
