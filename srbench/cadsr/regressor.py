"""CADSR for SRBench: the submission's ``est``, ``model``, ``complexity`` and population.

SRBench imports this module, pushes its time limit into ``est.max_time`` and its
seed into ``est.random_state``, fits ``est`` on a DataFrame (``use_dataframe``),
then reads the formula through :func:`model` and parses it with SymPy, each
column name standing for ``sympy.Symbol(name)``.

Feature names in the formula: every column whose name is a Python identifier,
not a keyword, and not a name the printer itself writes (``sin``, ``sqrt``,
``oo``…, see :data:`RESERVED_NAMES`) appears verbatim — also names SymPy would read as
its own objects (``E``, ``I``, ``S``, ``N``, ``beta``, ``gamma``), which the
harness's ``local_dict`` maps back to plain symbols. Any other name (``"x 1"``,
``"lambda"``, ``"2nd"``) cannot be written into a parsable string as is; it is
replaced by an identifier derived from it (see :func:`formula_names`).

Islands (one search on several processes or machines, the user guide's "One search on
every core and across a cluster"): set ``CADSR_ISLANDS=k`` in the environment of the
harness, and ``CADSR_SCHEDULER=tcp://host:8786`` to run them on a Dask cluster of your own
(else a local cluster of k processes); they need ``pip install 'dask[distributed]'``. The
default is one search, as SRBench gives each job one core.
"""

from __future__ import annotations

import copy
import keyword
import os
import re

import numpy as np
import sympy

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.front.selection import RULES

__all__ = [
    "est",
    "model",
    "complexity",
    "get_population",
    "get_best_solution",
    "formula_names",
    "islands_from_environment",
    "RESERVED_NAMES",
    "eval_kwargs",
    "hyper_params",
]

def islands_from_environment(environ=os.environ) -> dict:
    """``n_islands`` and ``scheduler`` from ``CADSR_ISLANDS`` and ``CADSR_SCHEDULER``."""
    text = environ.get("CADSR_ISLANDS", "1").strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"CADSR_ISLANDS={text!r}: the number of islands, a whole number of 1 "
                         "or more (1: one search).")
    return {"n_islands": int(text), "scheduler": environ.get("CADSR_SCHEDULER") or None}


# The estimator's defaults, but the paper's batch of 1000: SRBench overwrites max_time
# (1 h for <= 1000 training rows, 10 h above) and random_state, and under such
# budgets the 600-epoch cap ends the search first, so B = 1000 scores as many
# formulas as the paper did (the default 500 was chosen for budgets of minutes).
est = CADSRRegressor(max_time=60 * 60, batch_size=1000, random_state=0, device="auto",
                     verbose=0, **islands_from_environment())

# No tuning: the paper runs one configuration everywhere.
hyper_params = [{}]

eval_kwargs = {
    # SRBench's quick test (``-test``) applies these with est.set_params.
    "test_params": {
        "max_time": 10,
        "n_epochs": 3,
        "batch_size": 100,
        "ff_dim": 64,
        "max_length": 16,
        "device": "cpu",
    },
    "max_train_samples": 10_000,
    # The formula must be in the data's own units for the symbolic assessment.
    "scale_x": False,
    "scale_y": False,
    # Column names reach fit(), so the formula names them.
    "use_dataframe": True,
}


def _column_names(est, X=None) -> list[str]:
    columns = getattr(X, "columns", None)
    if columns is not None:
        return [str(c) for c in columns]
    names = getattr(est, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    return [f"x{i}" for i in range(est.n_features_in_)]


#: Names the printer can write besides the columns: the functions of CADSR's
#: operator table and SymPy's special values. A column with one of these names
#: is renamed (``sin`` → ``sin_``), whether or not this formula uses it, so the
#: mapping from columns to names never depends on the fitted formula.
RESERVED_NAMES = frozenset(
    {
        "sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "Abs", "asin", "acos", "atan",
        "sinh", "cosh", "oo", "zoo", "nan",
        "Piecewise", "Eq",
    }
)


def formula_names(columns, reserved=RESERVED_NAMES) -> list[str]:
    """The name each column gets in the formula string.

    A column keeps its name when it is a Python identifier that is not a keyword
    and not in ``reserved`` (:data:`RESERVED_NAMES`); any other is
    turned into one: characters outside ``[A-Za-z0-9_]`` become ``_``, a leading
    digit or a keyword gets a prefix or suffix, and clashes get ``_2``, ``_3``….
    """
    reserved = set(reserved)
    out: list[str] = []
    taken: set[str] = set()
    for col in map(str, columns):
        if (
            col.isidentifier()
            and not keyword.iskeyword(col)
            and col not in reserved
            and col not in taken
        ):
            out.append(col)
            taken.add(col)
            continue
        base = re.sub(r"\W", "_", col) or "x"
        if base[0].isdigit():
            base = "x_" + base
        if keyword.iskeyword(base) or base in reserved:
            base += "_"
        name, k = base, 2
        while name in taken or name in columns:
            name, k = f"{base}_{k}", k + 1
        out.append(name)
        taken.add(name)
    return out


def _printable_numbers(expr: sympy.Expr) -> sympy.Expr:
    """Floats in their shortest round-trip digits; E, pi… as floats.

    SymPy prints a float64 constant with 15 digits, which does not always read
    back as the same float; ``repr`` digits do. With E and pi gone, ``E`` in the
    string can only mean a column.
    """
    expr = expr.xreplace({c: sympy.Float(float(c)) for c in expr.atoms(sympy.NumberSymbol)})
    return expr.xreplace(
        {f: sympy.Float(repr(float(f))) for f in expr.atoms(sympy.Float) if f.is_finite}
    )


def model(est, X=None) -> str:
    """The fitted formula as a SymPy-parsable string in the DataFrame's column names.

    Plain ``+ - * / **`` and SymPy's function names (``sin``, ``cos``, ``exp``,
    ``log``, ``sqrt``, ``Abs``…). The formula is ``est.expression_`` (the shortest
    form equal to the tree on the training rows), its constants written in full
    precision, so the parsed string predicts what ``est.predict`` predicts on the
    training rows, to round-off.
    """
    columns = _column_names(est, X)
    placeholders = [sympy.Symbol(f"_cadsr_x{i}") for i in range(len(columns))]
    # the estimator's own symbols (symbol_names_: column names that are not plain symbols,
    # such as "E" or "x 1", get one there); models without it used the column names
    fitted = [sympy.Symbol(n) for n in getattr(est, "symbol_names_", None) or _column_names(est)]
    expr = _printable_numbers(est.expression_.xreplace(dict(zip(fitted, placeholders))))
    names = formula_names(columns, reserved=RESERVED_NAMES)
    expr = expr.xreplace({p: sympy.Symbol(n) for p, n in zip(placeholders, names)})
    return sympy.sstr(expr)


def complexity(est) -> int:
    """Nodes of the formula in SymPy's preorder traversal (as SRBench counts them)."""
    return sum(1 for _ in sympy.preorder_traversal(_printable_numbers(est.expression_)))


def _with_row(est, row):
    """A copy of the fitted ``est`` whose formula is the front row ``row``.

    ``est``'s chosen formula (``expression_``, ``predict``) is read from its
    front and the row each rule of ``model_selection`` chooses; the copy's front
    is the one row, which every rule then chooses. A shallow copy shares the
    read-only fitted record (history, settings).
    """
    member = copy.copy(est)
    member.front_rows_ = [row]
    member.selections_ = dict.fromkeys(RULES, 0)
    return member


def get_population(est) -> list:
    """At most 100 fitted estimators, one per Pareto-front formula (complexity vs loss).

    Each predicts with its own formula and works with :func:`model`. When the
    front is longer than 100, 100 members evenly spread over it are kept, always
    including the selected formula.
    """
    front = est.pareto_front_
    if len(front) > 100:
        keep = set(np.linspace(0, len(front) - 1, 100).round().astype(int).tolist())
        selected = [i for i, row in enumerate(front) if row.selected]
        if selected and selected[0] not in keep:
            keep.discard(min(keep, key=lambda i: abs(i - selected[0])))
            keep.add(selected[0])
        front = [front[i] for i in sorted(keep)]
    return [_with_row(est, row) for row in front]


def get_best_solution(est):
    """The selected formula (τ*, the best by the estimator's criterion): ``est`` itself."""
    return est
