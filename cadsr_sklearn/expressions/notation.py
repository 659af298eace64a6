"""Formulas for people: rounded constants that never change what a formula means.

A fitted formula holds 17-digit floats; people read four. But rounding can
change a formula's meaning: ``1.0000061**rho - 0.9999896`` shown to four digits
is ``1.0**rho - 1.0``, identically zero. So a displayed form here is *faithful*:
its constants carry as many significant digits as it takes (four at least) for
it to predict, on the training rows, what the formula predicts there, to within
:data:`DISPLAY_RTOL` of the largest prediction. Every displayed form of the
estimator (``equations_["formula"]``, :meth:`~cadsr_sklearn.CADSRRegressor.latex`,
:meth:`~cadsr_sklearn.CADSRRegressor.sympy` with ``precision``, the progress bar,
``cadsr show``, the plots) is made so.
"""

from __future__ import annotations

import html
import keyword
import math
import numbers
import re
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

__all__ = ["DISPLAY_RTOL", "DISPLAY_DIGITS", "check_precision", "faithful_digits", "lambdified",
           "r2_from_loss", "round_floats", "rounded_float", "rounded_latex", "symbol_names",
           "sympy_values", "column_labels", "target_names", "labelled_text", "shortened",
           "html_text"]

DISPLAY_RTOL = 1e-3
"""A displayed form may move no training prediction by more than this times the largest |ŷ|."""

DISPLAY_DIGITS = 4
"""Significant digits shown when they are enough."""

_MAX_DIGITS = 17  # float64's round-trip precision: always faithful

# The largest exponent written as an integer (Lennard-Jones' 12). A larger one stays a
# float: 18633.1 to four digits is 18630, not an integer law, and rebuilding a function
# around ``x**18630`` sends SymPy's assumptions into expanding that power (a report that
# never returned); the cost grows steeply from about 16 on.
_INTEGER_EXPONENT_MAX = 12


def r2_from_loss(loss, y_variance: float):
    """Training R² shown beside a formula, ``1 − loss / Var(y)`` (NaN when y is constant).

    ``loss`` is a training MSE, or an array of them (the learning curve).
    """
    if not y_variance > 0:
        return math.nan
    return 1.0 - loss / y_variance


def shortened(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis where it was cut."""
    width = max(width, 1)
    return text if len(text) <= width else text[: width - 1] + "…"


def html_text(text) -> str:
    """``text`` (anything, as ``str``) escaped for HTML, quotes too (safe in attributes)."""
    return html.escape(str(text), quote=True)


def check_precision(precision) -> int:
    """``precision`` as an int; ``ValueError`` unless it is a positive integer."""
    if isinstance(precision, bool) or not isinstance(precision, numbers.Integral) or precision < 1:
        raise ValueError(f"precision must be a positive integer, got {precision!r}.")
    return int(precision)


def _decimal(value: float, digits: int) -> str:
    """``value`` written to ``digits`` significant digits."""
    return f"{value:.{digits}g}"


def rounded_float(value: float, digits: int) -> sympy.Float:
    """``value`` as the decimal number of ``digits`` significant digits it is shown as."""
    return sympy.Float(_decimal(float(value), digits), digits)


def round_floats(expr: sympy.Expr, digits: int) -> sympy.Expr:
    """``expr`` with every float to ``digits`` significant digits (integers, π, … untouched).

    Each float becomes the decimal number it is shown as, so what the rounded
    form evaluates to is what a reader of it computes. An exponent that rounds to
    a small integer (at most 12 in size) is that integer: ``x`` rather than
    ``x**1.0``.
    """
    rounded = expr.xreplace({f: rounded_float(f, digits) for f in expr.atoms(sympy.Float)})
    return rounded.replace(
        lambda e: e.is_Pow and e.exp.is_Float and float(e.exp).is_integer()
        and abs(float(e.exp)) <= _INTEGER_EXPONENT_MAX,
        lambda e: e.base ** int(e.exp))


def lambdified(expr: sympy.Expr, symbols: Sequence[sympy.Symbol], parameters=(),
               modules="numpy"):
    """NumPy function of (one column per symbol, *parameters) computing ``expr``, features real.

    ``modules`` as :func:`sympy.lambdify` takes them (``["scipy", "numpy"]`` for
    ``erf``, ``gamma``…).
    """
    # Arguments named _arg0, _arg1…, not the features' names: in the code lambdify
    # writes, a feature called ``pi`` or ``sin`` would shadow SymPy's. Not Dummies:
    # with one among its arguments lambdify renames every argument again, one rebuild of
    # the whole tree each, which was most of the time a front's report took.
    arguments = [*symbols, *parameters]
    prefix = "_arg"  # not the beginning of a name in expr, which would then read an argument
    while any(s.name.startswith(prefix) for s in expr.free_symbols):
        prefix = "_" + prefix
    named = [sympy.Symbol(f"{prefix}{i}", real=True) for i in range(len(arguments))]
    return sympy.lambdify(named, expr.xreplace(dict(zip(arguments, named))), modules=modules)


def _real_values(values, n: int) -> np.ndarray:
    values = np.asarray(values)
    if np.iscomplexobj(values) or values.dtype == object:
        raise ValueError("the formula is not real-valued on these rows")
    return np.broadcast_to(values.astype(np.float64), (n,))


def _columns(X: np.ndarray) -> list[np.ndarray]:
    return [np.ascontiguousarray(X[:, j], dtype=np.float64) for j in range(X.shape[1])]


def sympy_values(expr: sympy.Expr, symbols: Sequence[sympy.Symbol], X: np.ndarray) -> np.ndarray:
    """``expr`` evaluated with NumPy on the rows of ``X`` (one column per symbol), shape (n,).

    The features are taken as real; a value that is complex or not a number
    raises ``ValueError``. No warning escapes.
    """
    with np.errstate(all="ignore"):
        return _real_values(lambdified(expr, symbols)(*_columns(X)), X.shape[0])


def _agrees(values: np.ndarray, reference: np.ndarray, rtol: float) -> bool:
    """Same rows finite, and every finite value within ``rtol`` of the largest |reference|."""
    finite = np.isfinite(reference)
    if not np.array_equal(np.isfinite(values), finite):
        return False
    scale = float(np.max(np.abs(reference[finite]), initial=0.0))
    return bool(np.max(np.abs(values[finite] - reference[finite]), initial=0.0) <= rtol * scale)


def faithful_digits(
    expr: sympy.Expr,
    symbols: Sequence[sympy.Symbol],
    X: np.ndarray,
    reference: np.ndarray | None = None,
    digits: int = DISPLAY_DIGITS,
    rtol: float = DISPLAY_RTOL,
) -> int:
    """The fewest significant digits, at least ``digits``, at which ``expr`` still means itself.

    Parameters
    ----------
    expr : sympy.Expr
        A formula in ``symbols``.
    symbols : sequence of sympy.Symbol
        One per column of ``X``.
    X : ndarray of shape (n_samples, n_features)
        The rows the displayed form must agree on (the training rows).
    reference : ndarray of shape (n_samples,), optional
        What the formula predicts there (the tree's output); by default ``expr``
        evaluated at full precision.
    digits : int, default=DISPLAY_DIGITS
    rtol : float, default=DISPLAY_RTOL
        Agreement wanted: every finite prediction within ``rtol`` times the
        largest, and the same rows finite.

    Returns
    -------
    int
        ``digits`` when the formula holds no float; 17 (float64's round-trip
        precision) when nothing shorter agrees: the floats are then shown as
        they are.
    """
    floats = sorted(expr.atoms(sympy.Float), key=float)
    if not floats:
        return digits
    X = np.asarray(X, dtype=np.float64)
    values = [float(f) for f in floats]
    parameters = [sympy.Dummy() for _ in floats]
    try:
        # one compiled function, called with the floats rounded to each number of digits
        f = lambdified(expr.xreplace(dict(zip(floats, parameters))), symbols, parameters)
        columns = _columns(X)
        with np.errstate(all="ignore"):
            if reference is None:
                reference = _real_values(f(*columns, *values), X.shape[0])
            reference = np.asarray(reference, dtype=np.float64)
            for d in range(digits, _MAX_DIGITS):
                rounded = [float(_decimal(v, d)) for v in values]
                if _agrees(_real_values(f(*columns, *rounded), X.shape[0]), reference, rtol):
                    return d
    except Exception:  # noqa: BLE001 - a form NumPy cannot evaluate: show every digit
        pass
    return _MAX_DIGITS


# LaTeX's special characters, escaped for text mode (symbol names that are not identifiers).
_LATEX_TEXT = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$",
               "%": r"\%", "&": r"\&", "_": r"\_", "^": r"\^{}", "~": r"\~{}"}


def rounded_latex(expr: sympy.Expr, precision: int = DISPLAY_DIGITS,
                  labels: Mapping[str, str] | None = None) -> str:
    """LaTeX of ``expr`` with its floats shown to ``precision`` significant digits.

    Symbols whose names are not Python identifiers (``"x 1"``, ``"a-b"``), and
    those ``labels`` maps to a label (a column's own name, ``"force [N]"``), are
    set as one upright ``\\text{…}`` unit, LaTeX's special characters escaped.

    Raises
    ------
    ValueError
        If ``precision`` is not a positive integer.
    """
    expr = round_floats(expr, check_precision(precision))
    labels = labels or {}
    # SymPy typesets a name like "x 1" or "a-b" as bare letters (5 a-b x 1 reads as
    # arithmetic); such names are set upright as text, one unit.
    names = {s: r"\text{" + "".join(_LATEX_TEXT.get(ch, ch) for ch in labels.get(s.name, s.name))
             + "}" for s in expr.free_symbols
             if not s.name.isidentifier() or s.name in labels}
    return sympy.latex(expr, symbol_names=names)


def symbol_names(names: Sequence[str]) -> list[str]:
    """A symbol name for each column name: the name itself where it is one, else a readable one.

    A formula's text must parse back: ``force [N]`` becomes ``force_N``, ``2nd
    try`` ``x_2nd_try``, a Python keyword such as ``lambda`` ``lambda_``, a name
    SymPy reads as a number or a function (``E``, ``pi``, ``I``, ``N``, ``beta``,
    ``gamma``, ``sin``) ``E_``, ``pi_``…; names that would then repeat get
    ``_2``, ``_3``. Other column names are kept.
    """
    out: list[str] = []
    taken = {n for n in names if _is_symbol_name(n)}
    for name in names:
        if _is_symbol_name(name):
            out.append(name)
            continue
        base = re.sub(r"\W+", "_", name).strip("_") or "x"
        if base[0].isdigit():
            base = "x_" + base
        if not _is_symbol_name(base):  # a keyword, or a name SymPy reads as something else
            base += "_"
        candidate, k = base, 2
        while candidate in taken:
            candidate, k = f"{base}_{k}", k + 1
        taken.add(candidate)
        out.append(candidate)
    return out


def _is_symbol_name(name: str) -> bool:
    """Whether ``name`` reads back as a plain symbol: not ``lambda``, nor ``E``, ``pi``, ``I``,
    ``N``, ``beta``, ``sin``, which SymPy reads as numbers or functions."""
    if not name.isidentifier() or keyword.iskeyword(name):
        return False
    try:
        return isinstance(sympy.sympify(name), sympy.Symbol)
    except (sympy.SympifyError, SyntaxError, TypeError, AttributeError):
        return False


def column_labels(symbols: Sequence[str], columns: Sequence[str]) -> dict[str, str]:
    """Symbol → column name, where they differ (``force_N`` → ``force [N]``): the
    names :func:`rounded_latex` and the plots show for the symbols of the formulas."""
    return {s: c for s, c in zip(symbols, columns) if s != c}


def labelled_text(expr: sympy.Expr, labels: Mapping[str, str]) -> str:
    """``expr`` as text, each symbol that ``labels`` names written as that column name.

    For reading only (``0.9853*a [AU]**1.504`` does not parse back); the
    ``formula`` column keeps the symbols.
    """
    return str(expr.xreplace({s: sympy.Symbol(labels[s.name]) for s in expr.free_symbols
                              if s.name in labels}))


def target_names(y, n_outputs: int) -> list[str]:
    """The name of each of the ``n_outputs`` targets of ``y``, for display.

    A pandas or polars Series' name, a DataFrame's column names (a one-column
    one's too), where they are non-empty strings (as scikit-learn takes feature
    names only from string column names); else ``y``, or ``y0, y1, …`` for
    several outputs.
    """
    columns = getattr(y, "columns", None)
    names = list(columns) if columns is not None else [getattr(y, "name", None)]
    if len(names) == n_outputs and all(isinstance(n, str) and n for n in names):
        return [str(n) for n in names]
    return ["y"] if n_outputs == 1 else [f"y{j}" for j in range(n_outputs)]
