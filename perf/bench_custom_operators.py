"""Benchmark: fit the constants of a batch of formulas holding a custom operator.

The same 200 random formulas (``bench_constants.random_tree`` over
``("add", "mul")`` and one unary operator, at most 16 nodes and 4 constants, at
least one) on 200 rows, the target 2.5·exp(−(1.3x − 2)²), one thread, a fresh
fitter each run. The operator is the Gaussian bump exp(−a²) given two ways:

- ``compiled``: a custom operator numba compiles;
- ``called-back``: the same functions as a callable object numba cannot compile.

Prints per way the median seconds over ``--runs`` and the share of formulas whose
fitted cost agrees with the compiled operator's to 1e-8 (relative). Run it on two
versions to compare::

    python perf/bench_custom_operators.py
    PYTHONPATH=/path/to/old/checkout python perf/bench_custom_operators.py

``--smoke`` fits 20 formulas on 50 rows once: that the script runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def _gauss(a):
    return np.exp(-a * a)


def _gauss_derivative(a):
    return -2 * a * np.exp(-a * a)


class _Uncompilable:
    """A callable object: numba cannot compile it, so the operator is called back."""

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


def _formulas(operator, n: int, seed: int):
    from bench_constants import random_tree

    from cadsr_sklearn import Library

    library = Library(1, ("add", "mul"), (operator,))
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    while len(out) < n:
        e = random_tree(library, rng, max_nodes=16, max_constants=4)
        if e.n_constants and e.key not in seen:
            seen.add(e.key)
            out.append(e)
    return out


def _fit(formulas, X, y):
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter

    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    start = time.perf_counter()
    fitted = fitter.fit(formulas)
    seconds = time.perf_counter() - start
    costs = np.array([np.sum((e.evaluate(X) - y) ** 2) for e in fitted])
    return seconds, costs


def main() -> int:
    import sympy

    from cadsr_sklearn import Operator

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n-expr", type=int, default=200)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.n_expr, args.rows = 1, 20, 50

    x = np.linspace(-1, 3, args.rows)
    X, y = x[:, None], 2.5 * np.exp(-(1.3 * x - 2) ** 2)
    sympy_form = lambda a: sympy.exp(-a**2)  # noqa: E731
    ways = {
        "compiled": Operator("gauss", _gauss, _gauss_derivative, sympy_form),
        "called-back": Operator("gauss", _Uncompilable(_gauss),
                                _Uncompilable(_gauss_derivative), sympy_form),
    }
    results = {}
    for name, operator in ways.items():
        formulas = _formulas(operator, args.n_expr, 0)
        _fit(formulas, X, y)  # compile and warm up
        runs = [_fit(formulas, X, y) for _ in range(args.runs)]
        results[name] = (statistics.median(s for s, _ in runs), runs[0][1])
    reference = results["compiled"][1]
    print(f"{args.n_expr} formulas, {args.rows} rows, one thread, median of {args.runs} runs")
    for name, (seconds, costs) in results.items():
        both = np.isfinite(reference) & np.isfinite(costs)
        agree = np.abs(costs[both] - reference[both]) <= 1e-8 * np.maximum(1e-12, reference[both])
        same_validity = np.mean(np.isfinite(reference) == np.isfinite(costs))
        print(f"{name:12s} {seconds:8.3f} s   cost as compiled: {agree.mean():6.1%} of the "
              f"{both.sum()} fitted by both; validity as compiled: {same_validity:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
