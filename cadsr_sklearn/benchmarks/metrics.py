"""SRBench's metrics: accuracy solution, symbolic solution, simplified complexity.

Definitions follow SRBench (La Cava et al., 2021):

* accuracy solution: test R² > 0.999;
* symbolic solution: only considered when test R² > 0.5; floats with |c| < 1e-4
  are set to 0 and the rest rounded to 3 decimals; solved when
  ``truth − model`` or ``model / truth`` simplifies to a constant and the
  model is not 0;
* simplified complexity: nodes in SymPy's preorder traversal of the
  simplified model.

``sympy.simplify`` can run for a very long time, so every simplification here
runs under a wall-clock limit and counts as "not simplified" when it expires.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

import sympy

from ..expression import sympy_complexity

__all__ = [
    "round_floats",
    "is_symbolic_solution",
    "simplified_complexity",
    "SimplifyTimeout",
    "time_limit",
]


class SimplifyTimeout(Exception):
    """A SymPy simplification ran past its time limit."""


@contextmanager
def time_limit(seconds: float):
    """Raise :class:`SimplifyTimeout` in the block after ``seconds`` (main thread, POSIX).

    Elsewhere (threads, Windows) the block runs without a limit.
    """
    usable = (
        seconds
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def _raise(signum, frame):
        raise SimplifyTimeout

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def round_floats(expr: sympy.Expr, digits: int = 3, zero_below: float = 1e-4) -> sympy.Expr:
    """SRBench's rounding: |c| < ``zero_below`` → 0, other floats to ``digits`` decimals."""
    replacements = {}
    for f in expr.atoms(sympy.Float):
        value = float(f)
        replacements[f] = sympy.Integer(0) if abs(value) < zero_below else sympy.Float(round(value, digits))
    return expr.xreplace(replacements)


def is_symbolic_solution(model: sympy.Expr, truth: sympy.Expr, timeout: float = 10.0) -> bool:
    """Whether ``model`` equals ``truth`` up to an additive or multiplicative constant."""
    model = round_floats(sympy.sympify(model))
    if model == 0:
        return False
    try:
        with time_limit(timeout):
            difference = sympy.simplify(truth - model)
            if not difference.free_symbols:
                return True
            ratio = sympy.simplify(model / truth)
            return bool(not ratio.free_symbols and ratio != 0)
    except SimplifyTimeout:
        return False


def simplified_complexity(model: sympy.Expr, timeout: float = 10.0) -> int:
    """Nodes of the simplified, rounded model (the unsimplified count on time-out)."""
    model = round_floats(sympy.sympify(model))
    try:
        with time_limit(timeout):
            model = sympy.simplify(model)
    except SimplifyTimeout:
        pass
    return sympy_complexity(model)
