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

from ._symbolic import (
    SimplifyTimeout,
    alarm_available,
    node_count,
    round_floats,
    simplified_complexity_unbounded,
    symbolic_solution_unbounded,
    time_limit,
)

__all__ = [
    "ACCURACY_R2",
    "SYMBOLIC_MIN_R2",
    "r2_score",
    "round_floats",
    "is_symbolic_solution",
    "simplified_complexity",
    "model_metrics",
    "SimplifyTimeout",
    "time_limit",
]

#: Test R² above which a model is an "accuracy solution".
ACCURACY_R2 = 0.999
#: Test R² a model needs before its symbolic form is even compared with the truth.
SYMBOLIC_MIN_R2 = 0.5

_SCRIPT = Path(__file__).with_name("_symbolic.py")
#: Seconds a child process gets beyond its two simplifications (Python and SymPy start-up).
_CHILD_GRACE = 30.0


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
    """Run ``task`` ("symbolic" or "complexity") with a time limit that holds in any thread."""
    if alarm_available():
        if task == "symbolic":
            return symbolic_solution_unbounded(model, truth, timeout, real)
        return simplified_complexity_unbounded(model, timeout)
    result = _in_child(task, model, truth, timeout, real)
    if result is None:  # killed or crashed: the same fallbacks as a time-out
        return False if task == "symbolic" else node_count(round_floats(sympy.sympify(model)))
    return result


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
    """All of SRBench's per-run metrics for one fitted model.

    Returns
    -------
    dict
        ``r2_test``, ``accuracy_solution`` (bool), ``symbolic_solution`` (bool,
        or None without a ground truth) and ``complexity`` (simplified).
    """
    r2 = r2_score(y_test, y_pred)
    symbolic = None
    if truth is not None:
        symbolic = is_symbolic_solution(model, truth, timeout, r2=r2)
    return {
        "r2_test": r2,
        "accuracy_solution": bool(r2 > ACCURACY_R2),
        "symbolic_solution": symbolic,
        "complexity": simplified_complexity(model, timeout),
    }
