"""The peers' models as SymPy formulas: gplearn programs and Operon model strings.

:func:`.metrics.judged_formula` reads a fitted gplearn or Operon model through
these, so that one set of metrics judges every method. Protected operators are
read as the plain functions (``div`` as ``/``, ``sqrt`` as ``sqrt``, ``log`` as
``log``), as SRBench does.
"""

from __future__ import annotations

import numpy as np
import sympy

__all__ = ["gplearn_to_sympy", "operon_to_sympy"]

_GPLEARN_SYMPY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "sqrt": sympy.sqrt,
    "log": sympy.log,
    "exp": sympy.exp,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "neg": lambda a: -a,
    "inv": lambda a: 1 / a,
    "abs": sympy.Abs,
    "max": sympy.Max,
    "min": sympy.Min,
}


def gplearn_to_sympy(program: list, symbols: list[sympy.Symbol]) -> sympy.Expr:
    """SymPy form of a gplearn program (its prefix list of functions, feature indices, floats)."""
    position = 0

    def build() -> sympy.Expr:
        nonlocal position
        node = program[position]
        position += 1
        if isinstance(node, (int, np.integer)):
            return symbols[int(node)]
        if isinstance(node, (float, np.floating)):
            return sympy.Float(float(node))
        args = [build() for _ in range(node.arity)]
        return _GPLEARN_SYMPY[node.name](*args)

    return build()


def _operon_locals(symbols: list[sympy.Symbol]) -> dict:
    local = {f"v{i}": s for i, s in enumerate(symbols)}
    local.update(
        {
            "aq": lambda a, b: a / sympy.sqrt(1 + b**2),
            "logabs": lambda a: sympy.log(sympy.Abs(a)),
            "sqrtabs": lambda a: sympy.sqrt(sympy.Abs(a)),
            "square": lambda a: a**2,
            "cbrt": sympy.cbrt,
            "abs": sympy.Abs,
            "fmin": sympy.Min,
            "fmax": sympy.Max,
        }
    )
    return local


def operon_to_sympy(model_string: str, symbols: list[sympy.Symbol]) -> sympy.Expr:
    """SymPy form of an Operon infix string written with the names ``v0, v1, …``.

    ``^`` is power.
    """
    return sympy.sympify(model_string, locals=_operon_locals(symbols), convert_xor=True)
