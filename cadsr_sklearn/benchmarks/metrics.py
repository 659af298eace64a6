"""SRBench's metrics: test R², accuracy solution, symbolic solution, simplified complexity.

Definitions follow SRBench (La Cava et al., 2021):

* accuracy solution: test R² > 0.999;
* symbolic solution: only considered when test R² > 0.5; floats with |c| < 1e-4
  are set to 0 and the rest rounded to 3 decimals; solved when
  ``truth − model`` or ``model / truth`` simplifies to a constant and the
  model is not 0. One departure, on by default: a model that test rejects is
  tried again over the reals (real symbols, logs of products split), since
  SRBench's complex symbols reject exact answers such as
  ``log((x + 1)*(x**2 + 1))`` for ``log(x + 1) + log(x**2 + 1)``;
  ``real=False`` gives SRBench's test as written;
* simplified complexity: nodes in SymPy's preorder traversal of the
  simplified (rounded) model.

Which formula of a fitted model is judged is decided in one place,
:func:`judged_formula`: the formula the method shows its user (for CADSR,
``expression_``). Beside SRBench's metrics, :func:`model_metrics` records
SRBench's verdict as written (``solved_srbench``), whether the model is exact on
the noiseless test set (:func:`is_exact`) and the size of the judged formula.

``sympy.simplify`` can run for a very long time, so every simplification here
is bounded. In a main thread (the CLI, loky worker processes) a ``SIGALRM``
interrupts it; anywhere else (threads of a Dask worker or of joblib's threading
backend, where signals cannot be used, or when someone else's alarm is pending)
the work runs in a child Python process that is killed at the limit. A
simplification that runs out of time counts as "not simplified".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import sympy
from sympy.polys.polyerrors import BasePolynomialError

from ._symbolic import (
    SimplifyTimeout,
    alarm_available,
    node_count,
    round_floats,
    simplified_complexity_unbounded,
    symbolic_solution_unbounded,
    symbolic_verdicts_unbounded,
    time_limit,
)
from .peer_formulas import gplearn_to_sympy, operon_to_sympy

__all__ = [
    "ACCURACY_R2",
    "SYMBOLIC_MIN_R2",
    "EXACT_NMSE",
    "judged_formula",
    "r2_score",
    "is_exact",
    "round_floats",
    "node_count",
    "is_symbolic_solution",
    "symbolic_verdicts",
    "simplified_complexity",
    "model_metrics",
    "SimplifyTimeout",
    "time_limit",
]

#: Test R² above which a model is an "accuracy solution".
ACCURACY_R2 = 0.999
#: Test R² a model needs before its symbolic form is even compared with the truth.
SYMBOLIC_MIN_R2 = 0.5
#: Test MSE, relative to the variance of the noiseless test targets, at or below which a
#: model is exact on the test set (the estimator's default ``tol``).
EXACT_NMSE = 1e-20

_SCRIPT = Path(__file__).with_name("_symbolic.py")
#: Seconds a child process gets beyond its two simplifications (Python and SymPy start-up).
_CHILD_GRACE = 30.0


def judged_formula(model, symbols, *, unsnapped: bool = False, X=None) -> sympy.Expr:
    """The formula of a fitted model that a benchmark judges: the one its user is shown.

    Every path of ``cadsr bench`` judges this formula and no other: a run
    (symbolic solution, complexity, size), ``--rescore`` (which re-reads it from
    the results file's ``model`` column) and the presets. So a fit counts as
    solved or not the same way everywhere.

    * CADSR: :attr:`~cadsr_sklearn.CADSRRegressor.expression_`, the formula the
      estimator reports: the ``model_selection`` row of the front, its constants
      snapped (``snap_constants``) and simplified on the training rows
      (``simplify``). Not the token tree ``best_expression_``, which ``predict``
      evaluates: it can hold ``1**x``, ``/1`` or a constant fitted to
      round-off of 1/2 that the reported formula does not. With
      ``unsnapped=True``, the same rule applied to ``unsnapped_expression_``
      (τ* with its constants as fitted, simplified the same way on the
      training rows ``X``): the formula ``snap_constants=False`` would show.
    * gplearn: its program, read as SRBench reads it (protected ``div``,
      ``log``, ``sqrt`` as the plain functions).
    * Operon: its model string (``get_model_string``, 12 digits).
    * A SymPy expression (or string) is already a formula: returned as it is,
      its symbols renamed like an estimator's.

    The estimator's feature symbols (``x0, x1, …`` for arrays) are renamed, column
    by column, to ``symbols``: the judged formula is in the problem's variables,
    as its ground truth is. R² always comes from the method's own ``predict``.

    Parameters
    ----------
    model : fitted CADSRRegressor, gplearn or Operon SymbolicRegressor, or sympy.Expr
    symbols : sequence of sympy.Symbol or str
        The problem's variables, in column order.
    unsnapped : bool, default=False
        CADSR only: judge τ* before snapping instead.
    X : ndarray, optional
        The training rows; needed with ``unsnapped`` when the estimator simplifies.
    """
    symbols = [s if isinstance(s, sympy.Symbol) else sympy.Symbol(str(s)) for s in symbols]
    if hasattr(model, "best_expression_"):  # CADSR
        names = list(model.symbol_names_)
        own = [sympy.Symbol(n) for n in names]
        if not unsnapped:
            formula = model.expression_
        else:
            tree = model.unsnapped_expression_
            formula = tree.to_sympy(names)
            if model.simplify:
                if X is None:
                    raise ValueError("the unsnapped formula is simplified on the training rows: "
                                     "pass X")
                from ..front.simplification import simplest_equivalent

                X = np.asarray(X, dtype=np.float64)
                with np.errstate(all="ignore"):
                    reference = tree.evaluate(X)
                formula = simplest_equivalent(formula, X, reference, own)
    elif unsnapped:
        raise ValueError(f"only CADSR has an unsnapped formula, not {type(model).__name__}")
    elif hasattr(model, "_program"):  # gplearn
        return gplearn_to_sympy(model._program.program, symbols)
    elif hasattr(model, "get_model_string"):  # Operon
        placeholder = [f"v{i}" for i in range(len(symbols))]
        return operon_to_sympy(model.get_model_string(model.model_, 12, names=placeholder),
                               symbols)
    else:
        formula = sympy.sympify(model, locals={s.name: s for s in symbols})
        own = symbols
    if len(own) != len(symbols):
        raise ValueError(f"the model has {len(own)} features, the problem {len(symbols)}")
    return formula.xreplace({a: b for a, b in zip(own, symbols) if a != b})


def r2_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Coefficient of determination; ``-inf`` when a prediction is not finite.

    A model undefined on a test point (log of a negative number outside the
    training domain) is not a usable model there, so it gets the worst score
    instead of an exception.
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_pred.shape != y_true.shape or not np.all(np.isfinite(y_pred)):
        return -np.inf
    ss_res = float(np.sum((y_true - y_pred) ** 2))
    ss_tot = float(np.sum((y_true - y_true.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else -np.inf
    return 1.0 - ss_res / ss_tot


def is_exact(y_pred: np.ndarray, y_test: np.ndarray) -> bool:
    """Whether a model equals the truth on the noiseless test points up to round-off.

    Test MSE ≤ :data:`EXACT_NMSE` · Var(y_test). Not SRBench's symbolic
    solution, and never merged into it: it also counts exact forms that SymPy
    cannot match to the truth, and DSR's own success criterion (NMSE < 1e-12
    on a fresh noiseless test set) is this test with a looser threshold.
    """
    y_pred = np.asarray(y_pred, dtype=np.float64)
    y_test = np.asarray(y_test, dtype=np.float64)
    if y_pred.shape != y_test.shape or not np.all(np.isfinite(y_pred)):
        return False
    return float(np.mean((y_pred - y_test) ** 2)) <= EXACT_NMSE * float(np.var(y_test))


def _in_child(task: str, model: sympy.Expr, truth: sympy.Expr | None, timeout: float,
              real: bool = True):
    """Run a :mod:`._symbolic` task in a fresh Python process; ``None`` if it was killed."""
    request = {
        "task": task,
        "model": sympy.srepr(model),
        "truth": None if truth is None else sympy.srepr(truth),
        "timeout": timeout,
        "real": real,
    }
    # At most seven bounded blocks (six simplifications and the log split), each under the
    # child's own alarm, plus start-up; the kill is for what an alarm cannot stop (a long
    # call into C, no SIGALRM).
    hard_limit = 7 * timeout + _CHILD_GRACE
    try:
        done = subprocess.run(
            [sys.executable, str(_SCRIPT)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=hard_limit,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    return json.loads(done.stdout)["result"]


def bounded(task: str, model: sympy.Expr, truth: sympy.Expr | None = None, timeout: float = 10.0,
            real: bool = True):
    """Run ``task`` ("symbolic", "verdicts" or "complexity") with a limit that holds in any thread.

    Where SymPy gives up (a time-out, a crash, or an exception of its own: a
    ``ValueError`` such as an integer too long to print, a ``TypeError`` such as
    "Invalid NaN comparison" deep in ``simplify``, a polynomial algorithm's
    ``HeuristicGCDFailed``) the answer is the time-out's: not solved, and the
    unsimplified size.
    """
    result = None
    if alarm_available():
        try:
            if task == "symbolic":
                return symbolic_solution_unbounded(model, truth, timeout, real)
            if task == "verdicts":
                return symbolic_verdicts_unbounded(model, truth, timeout, real)
            return simplified_complexity_unbounded(model, timeout)
        except (ValueError, TypeError, AttributeError, RecursionError, ZeroDivisionError,
                BasePolynomialError):
            pass  # SymPy failed on this formula: judged as on a time-out
    else:
        result = _in_child(task, model, truth, timeout, real)
    if result is None:  # killed, crashed or given up: the same fallbacks as a time-out
        if task == "complexity":
            return node_count(round_floats(sympy.sympify(model)))
        return (False, False) if task == "verdicts" else False
    return tuple(result) if task == "verdicts" else result


def is_symbolic_solution(
    model: sympy.Expr, truth: sympy.Expr, timeout: float = 10.0, r2: float | None = None,
    real: bool = True,
) -> bool:
    """Whether ``model`` equals ``truth`` up to an additive or multiplicative constant.

    Parameters
    ----------
    model, truth : sympy.Expr
        In the same symbols (plain ``sympy.Symbol`` of the feature names).
    timeout : float
        Seconds per simplification.
    r2 : float, optional
        The model's test R²; SRBench only compares models with R² > 0.5.
    real : bool, default=True
        Also accept a model equal to the truth as a function of real
        variables (see :func:`._symbolic.symbolic_solution_unbounded`);
        ``False`` is SRBench's test as written, over complex symbols.
    """
    if r2 is not None and not r2 > SYMBOLIC_MIN_R2:
        return False
    return bool(bounded("symbolic", sympy.sympify(model), sympy.sympify(truth), timeout, real))


def symbolic_verdicts(
    model: sympy.Expr, truth: sympy.Expr, timeout: float = 10.0, r2: float | None = None,
) -> tuple[bool, bool]:
    """(solved over the reals, solved by SRBench's test as written), in one pass.

    The same as ``(is_symbolic_solution(…), is_symbolic_solution(…, real=False))``
    at the cost of the first: a model SRBench's test accepts is solved by both.
    """
    if r2 is not None and not r2 > SYMBOLIC_MIN_R2:
        return False, False
    real, srbench = bounded("verdicts", sympy.sympify(model), sympy.sympify(truth), timeout)
    return bool(real), bool(srbench)


def simplified_complexity(model: sympy.Expr, timeout: float = 10.0) -> int:
    """Nodes of the simplified, rounded model (the unsimplified count on time-out)."""
    return int(bounded("complexity", sympy.sympify(model), None, timeout))


def model_metrics(
    model: sympy.Expr,
    y_test: np.ndarray,
    y_pred: np.ndarray,
    truth: sympy.Expr | None = None,
    timeout: float = 10.0,
) -> dict:
    """All of SRBench's per-run metrics for one judged formula (see :func:`judged_formula`).

    Returns
    -------
    dict
        ``r2_test``, ``accuracy_solution`` (bool), ``symbolic_solution`` (bool,
        or None without a ground truth: judged over the reals),
        ``solved_srbench`` (the same, by SRBench's test as written),
        ``exact_test`` (:func:`is_exact`), ``complexity`` (simplified) and
        ``size`` (nodes of the formula as it is, unsimplified).
    """
    r2 = r2_score(y_test, y_pred)
    symbolic = srbench = None
    if truth is not None:
        symbolic, srbench = symbolic_verdicts(model, truth, timeout, r2=r2)
    return {
        "r2_test": r2,
        "accuracy_solution": bool(r2 > ACCURACY_R2),
        "symbolic_solution": symbolic,
        "solved_srbench": srbench,
        "exact_test": is_exact(y_pred, y_test),
        "complexity": simplified_complexity(model, timeout),
        "size": node_count(sympy.sympify(model)),
    }
