"""The demo's problem: pendulum measurements, and whether a found formula is the law.

``cadsr demo`` fits :func:`pendulum_data` and judges the result with
:func:`matches_truth` against T = 2π·sqrt(L/g).
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEMO_MAX_TIME", "DEMO_BATCH_SIZE", "pendulum_data", "matches_truth", "in_names"]

#: Budget of ``cadsr demo`` in seconds.
DEMO_MAX_TIME = 60.0
#: Batch size of ``cadsr demo``: within a minute, many small epochs learn more than
#: a few large ones (docs/experiments/policy-options.md, "The demo's batch").
DEMO_BATCH_SIZE = 250


def pendulum_data(n: int = 300, noise: float = 0.01, seed: int = 0):
    """Period of a simple pendulum, T = 2π·sqrt(L/g), on several planets.

    L (m) in [0.1, 2], g (m/s²) in [1.6, 25] (the Moon to Jupiter); Gaussian
    noise of ``noise`` times the RMS of T (SRBench's noise model).

    Returns
    -------
    X : ndarray of shape (n, 2)
        Columns L and g.
    T_true : ndarray of shape (n,)
        Noise-free periods.
    T : ndarray of shape (n,)
        Measured (noisy) periods.
    """
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.1, 2.0, n)
    g = rng.uniform(1.6, 25.0, n)
    T = 2 * np.pi * np.sqrt(L / g)
    X = np.column_stack([L, g])
    return X, T, T + rng.normal(0, noise * np.sqrt(np.mean(T**2)), n)


def matches_truth(model_expr, truth, rel_tol: float = 0.02, timeout: float = 5.0) -> bool:
    """Whether ``model_expr`` equals ``truth`` up to constants within ``rel_tol``.

    True when ``model / truth`` simplifies to a number within ``rel_tol`` of 1
    (the fitted 6.28… for 2π passes; a different power does not).
    """
    import sympy

    from ..benchmarks.metrics import SimplifyTimeout, round_floats, time_limit

    model_expr, truth = sympy.sympify(model_expr), sympy.sympify(truth)
    # physical quantities: positive symbols let sqrt(L/g) = sqrt(L)/sqrt(g)
    positive = {
        s: sympy.Symbol(s.name, positive=True) for s in model_expr.free_symbols | truth.free_symbols
    }
    # exact rationals (x**0.5 -> sqrt(x)), three decimals: SRBench's rounding
    model_expr = round_floats(model_expr, digits=3).xreplace(positive)
    try:
        with time_limit(timeout):
            ratio = sympy.simplify(model_expr / truth.xreplace(positive))
    except SimplifyTimeout:
        return False
    if not ratio.is_number:
        return False
    try:
        return abs(complex(ratio) - 1.0) <= rel_tol
    except TypeError:
        return False


def in_names(expr, names):
    """``expr`` with x0, x1, … renamed to ``names`` (a fit on a bare array, without pandas)."""
    import sympy

    default = {f"x{i}": name for i, name in enumerate(names)}
    return expr.xreplace({s: sympy.Symbol(default[s.name], **s.assumptions0)
                          for s in expr.free_symbols if s.name in default})
