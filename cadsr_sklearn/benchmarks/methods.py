"""The methods a benchmark compares: CADSR and two peers, under one time budget.

Each method is fitted on the same :class:`~.suites.Dataset` with the same seed
and wall-clock budget, and the formula it shows its user
(:func:`.metrics.judged_formula`) becomes a SymPy expression in the dataset's
feature names, so that one set of metrics judges all of them.

How ``max_time`` maps onto each API
-----------------------------------
cadsr
    ``CADSRRegressor(max_time=...)``: the search stops before an epoch that
    would overrun the budget (or earlier on an exact fit, ``tol``).
cadsr-units
    The same, told the physical units of the problem's variables
    (``fit(..., X_units=..., y_units=...)``, from the AI-Feynman units table);
    on a problem without units it is plain ``cadsr``.
gplearn
    gplearn has no clock. ``SymbolicRegressor`` is grown one generation at a
    time with ``warm_start=True`` (population 1000, its other defaults) and
    stops before a generation that, at the pace of the last one, would overrun
    ``max_time`` — the same rule as CADSR — or when its own
    ``stopping_criteria`` is met. Its ``random_state`` is a ``RandomState``
    seeded once, so the warm-started generations continue one random stream.
operon
    ``pyoperon.sklearn.SymbolicRegressor(max_time=...)``, which takes whole
    seconds (rounded, at least 1) and checks the clock between generations;
    its generation and evaluation caps are lifted so the clock decides.

Operators: every method gets the operator set of the run (the problem's own, or
CADSR's default set; ``None``) where its library has
it (gplearn has no ``pow``, so it is dropped; its ``exp`` is added as a
protected ``exp(min(x, 100))``). Problems without the constant token run gplearn
with ``const_range=None``; Operon always scales every leaf by a coefficient and
cannot be restricted there. All methods run single-threaded.

SymPy conversion (:func:`.metrics.judged_formula`, the peers' models through
:mod:`.peer_formulas`): CADSR's reported ``expression_``; gplearn's program is
walked node by node, Operon's model string (``get_model_string``) is parsed
with placeholder names that are then replaced by the feature symbols.
Protected operators are read as the plain functions (``div`` as ``/``,
``sqrt`` as ``sqrt``, ``log`` as ``log``), as SRBench does; predictions, and
so R², always come from the method's own ``predict``.
"""

from __future__ import annotations

import importlib.util
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from .metrics import judged_formula
from .suites import Dataset

__all__ = [
    "METHODS",
    "FitResult",
    "method_unavailable",
    "fit_method",
    "seconds_to_best",
]

METHODS: tuple[str, ...] = ("cadsr", "cadsr-units", "gplearn", "operon")
#: How close τ*'s loss must be to the final τ*'s, relatively, for the same formula
#: (:func:`seconds_to_best`): 1e-6 moves the BIC by 0.002 at S = 2000.
BEST_LOSS_RTOL = 1e-6
_PACKAGES = {"cadsr": "torch", "cadsr-units": "pint", "gplearn": "gplearn",
             "operon": "pyoperon"}


@dataclass
class FitResult:
    """A fitted model, judged later by :func:`.metrics.model_metrics`.

    ``info`` holds what a method reports about its run: ``epochs``, ``stop``,
    ``time_to_best_s``, ``k`` (the tree's complexity) and, with units,
    ``units_rejected`` (the mean over epochs of ``history_``'s
    ``units_rejected_fraction``) for CADSR,
    ``generations`` and ``stop`` for the peers.
    """

    model: sympy.Expr  # the judged formula (metrics.judged_formula), in Symbol(feature name)
    y_pred_train: np.ndarray
    y_pred_test: np.ndarray
    fit_time: float  # seconds of wall-clock time spent in fit
    evaluations: int | None  # expressions scored
    native: str  # the method's own rendering of the model
    info: dict = field(default_factory=dict)
    unsnapped: sympy.Expr | None = None  # CADSR: judged_formula(..., unsnapped=True)
    y_pred_test_unsnapped: np.ndarray | None = None  # CADSR: τ* before snapping, on X_test


def method_unavailable(method: str) -> str | None:
    """Why ``method`` cannot run here (unknown, or its package missing), else None."""
    if method not in METHODS:
        return f"unknown method {method!r}; choose from {', '.join(METHODS)}"
    package = _PACKAGES[method]
    if importlib.util.find_spec(package) is None:
        return f"--method {method} needs the {package} package: pip install 'cadsr-sklearn[bench]'"
    return None


def fit_method(
    method: str,
    data: Dataset,
    operators: tuple[tuple[str, ...], tuple[str, ...], bool],
    max_time: float,
    seed: int,
    params: dict[str, Any] | None = None,
) -> FitResult:
    """Fit ``method`` on ``data.X_train`` within ``max_time`` seconds.

    Parameters
    ----------
    method : {"cadsr", "cadsr-units", "gplearn", "operon"}
    data : Dataset
    operators : (binary, unary, use_constants) or None
        The problem's operator set (CADSR names: add, sub, mul, div, pow, sin…):
        exactly these tokens (CADSR gets no ``1`` leaf). ``None``: CADSR's default
        token set (``CADSRRegressor()``'s operators, ``1`` and the constant),
        the peers the same operators where they have them.
    max_time : float
        Wall-clock budget of ``fit`` in seconds.
    seed : int
        ``random_state`` of the method.
    params : dict, optional
        Extra constructor parameters of the method's estimator.
    """
    if method == "cadsr-units":
        return _fit_cadsr(data, operators, max_time, seed, dict(params or {}), units=True)
    fit = {"cadsr": _fit_cadsr, "gplearn": _fit_gplearn, "operon": _fit_operon}[method]
    return fit(data, operators, max_time, seed, dict(params or {}))


def _default_operators() -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    from ..estimator import CADSRRegressor

    defaults = CADSRRegressor().get_params()
    return (tuple(defaults["binary_operators"]), tuple(defaults["unary_operators"]),
            bool(defaults["use_constants"]))


# --------------------------------------------------------------------- CADSR
def _fit_cadsr(data, operators, max_time, seed, params, units: bool = False) -> FitResult:
    from ..estimator import CADSRRegressor, SmallDataWarning

    kwargs = dict(
        max_time=max_time,
        random_state=seed,
        device="cpu",
        n_jobs=1,  # a task is one core: tasks run side by side (see execution.single_threaded)
    )
    if operators is not None:
        binary, unary, use_constants = operators
        kwargs.update(binary_operators=tuple(binary), unary_operators=tuple(unary),
                      use_constants=use_constants, use_one=False)
    kwargs.update(params)
    est = CADSRRegressor(**kwargs)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallDataWarning)  # few rows are what is measured
        if units and data.units is not None:
            est.fit(data.X_train, data.y_train, X_units=list(data.units),
                    y_units=data.target_units)
        else:
            est.fit(data.X_train, data.y_train)
    elapsed = time.perf_counter() - start
    names = list(data.feature_names)
    with np.errstate(all="ignore"):
        unsnapped_test = est.unsnapped_expression_.evaluate(np.asarray(data.X_test, float))
    history = est.history_
    time_to_best = seconds_to_best(history, elapsed)
    reduced = getattr(est, "reduction_", None)
    if reduced is not None and est.found_by_ == "reduction" and history:
        time_to_best = history[-1]["time"] + reduced.seconds  # it ran after the loop
    rejected = [h["units_rejected_fraction"] for h in history
                if h.get("units_rejected_fraction") is not None]
    return FitResult(
        model=judged_formula(est, names),
        y_pred_train=est.predict(data.X_train),
        y_pred_test=est.predict(data.X_test),
        fit_time=elapsed,
        evaluations=int(est.n_evaluations_),
        native=est.best_expression_.infix(names, 6),
        info={"epochs": est.n_epochs_, "stop": est.stop_reason_,
              "time_to_best_s": float(time_to_best), "k": int(est.best_expression_.complexity),
              "units_rejected": (float(np.mean(rejected)) if rejected and est.data_units_
                                 else None)},
        unsnapped=judged_formula(est, names, unsnapped=True, X=data.X_train),
        y_pred_test_unsnapped=np.where(np.isfinite(unsnapped_test), unsnapped_test, np.nan),
    )


def seconds_to_best(history: list[dict], elapsed: float) -> float:
    """Seconds into the search at the end of the first epoch whose τ* is the final one:
    its complexity and, to ``BEST_LOSS_RTOL``, its loss. A later refit of the same
    formula's constants that moves its loss in the ninth digit is no new find;
    ``elapsed`` for a search with no epoch."""
    if not history:
        return elapsed
    final = history[-1]
    return next(h["time"] for h in history
                if h["best_complexity"] == final["best_complexity"]
                and abs(h["best_loss"] - final["best_loss"])
                <= BEST_LOSS_RTOL * abs(final["best_loss"]))


# ------------------------------------------------------------------- gplearn
def _protected_exp(x):
    with np.errstate(over="ignore"):
        return np.exp(np.minimum(x, 100.0))


_GPLEARN_UNARY = {"sin", "cos", "tan", "log", "sqrt", "neg", "inv", "abs"}


def _gplearn_function_set(binary, unary) -> list:
    from gplearn.functions import make_function

    functions: list = [op for op in binary if op in {"add", "sub", "mul", "div"}]
    for op in unary:
        if op in _GPLEARN_UNARY:
            functions.append(op)
        elif op == "exp":
            functions.append(make_function(function=_protected_exp, name="exp", arity=1))
    return functions


def _fit_gplearn(data, operators, max_time, seed, params) -> FitResult:
    from gplearn.genetic import SymbolicRegressor

    binary, unary, use_constants = operators or _default_operators()
    max_generations = int(params.pop("generations", 100_000))
    kwargs = dict(
        population_size=1000,
        function_set=_gplearn_function_set(binary, unary),
        const_range=(-1.0, 1.0) if use_constants else None,
        n_jobs=1,
        random_state=np.random.RandomState(seed),
        warm_start=True,
        low_memory=True,
        generations=1,
    )
    kwargs.update(params)
    est = SymbolicRegressor(**kwargs)
    start = time.perf_counter()
    last = start
    est.fit(data.X_train, data.y_train)
    stop = "generations"
    while est.generations < max_generations:
        now = time.perf_counter()
        if (now - start) + (now - last) > max_time:
            stop = "max_time"
            break
        if est.run_details_["best_fitness"][-1] <= est.stopping_criteria:
            stop = "stopping_criteria"
            break
        last = now
        est.set_params(generations=est.generations + 1)
        est.fit(data.X_train, data.y_train)
    elapsed = time.perf_counter() - start
    n_generations = len(est.run_details_["generation"])
    with np.errstate(all="ignore"):
        y_train, y_test = est.predict(data.X_train), est.predict(data.X_test)
    return FitResult(
        model=judged_formula(est, data.feature_names),
        y_pred_train=y_train,
        y_pred_test=y_test,
        fit_time=elapsed,
        evaluations=n_generations * est.population_size,
        native=str(est._program),
        info={"generations": n_generations, "stop": stop},
    )


# -------------------------------------------------------------------- Operon
_OPERON_SYMBOLS = {
    "add", "sub", "mul", "div", "pow", "sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "abs",
    "square", "asin", "acos", "atan", "sinh", "cosh",
}


def _fit_operon(data, operators, max_time, seed, params) -> FitResult:
    from pyoperon.sklearn import SymbolicRegressor

    binary, unary, use_constants = operators or _default_operators()
    allowed = [op for op in (*binary, *unary) if op in _OPERON_SYMBOLS]
    allowed += ["constant", "variable"] if use_constants else ["variable"]
    kwargs = dict(
        allowed_symbols=",".join(allowed),
        max_time=max(1, int(round(max_time))),
        generations=10**9,
        max_evaluations=10**15,
        n_threads=1,
        random_state=seed,
    )
    kwargs.update(params)
    est = SymbolicRegressor(**kwargs)
    start = time.perf_counter()
    est.fit(data.X_train, data.y_train)
    elapsed = time.perf_counter() - start
    stats = getattr(est, "stats_", {}) or {}
    evaluations = stats.get("evaluation_count")
    with np.errstate(all="ignore"):
        y_train, y_test = est.predict(data.X_train), est.predict(data.X_test)
    return FitResult(
        model=judged_formula(est, data.feature_names),
        y_pred_train=np.asarray(y_train, dtype=np.float64),
        y_pred_test=np.asarray(y_test, dtype=np.float64),
        fit_time=elapsed,
        evaluations=None if evaluations is None else int(evaluations),
        native=est.get_model_string(est.model_, 6, names=list(data.feature_names)),
        info={"generations": stats.get("generations")},
    )
