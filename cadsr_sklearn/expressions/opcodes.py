"""Operation codes: what each node of a program (:mod:`cadsr_sklearn.expressions.program`) computes.

A node's code names a built-in operator, a terminal (an input variable, the
literal 1, a fitted constant) or a user's operator (:mod:`.expressions.custom_operators`),
whose functions the kernels reach through the library's *operator table*
(:func:`operator_table`). Everything that decodes a code is here, so the
numbering is written once. :func:`jit` is the one way the kernels are compiled:
numba, no ``fastmath`` (IEEE-exact, so what is predicted is bit for bit what was
scored), releasing the GIL, cached on disk next to the package or in the user's
cache directory where the package is read-only.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["OPCODES", "PERIODS", "NO_CUSTOM", "MAX_CUSTOM", "arity", "custom_opcode",
           "custom_index", "operator_table", "is_binary", "jit", "copy_into"]

VARIABLE, ONE, CONSTANT = 0, 1, 2
ADD, SUB, MUL, DIV, POW = 3, 4, 5, 6, 7
#: Real part of the principal power, |a|**b·cos(πb) for a < 0: smooth in b, equal
#: to a**b at every integer b (used to fit integer exponents over negative bases).
RELAXED_POW = 8
SIN, COS, TAN, LOG, SQRT, EXP, SQUARE, CUBE, NEG, INV, TANH, ABS = range(9, 21)
# Added after the first twelve, so that those keep their numbers.
ASIN, ACOS, ATAN, SINH, COSH = range(21, 26)
FIRST_UNARY = SIN
#: Op codes of user-registered operators (:mod:`.expressions.custom_operators`): 100 + k for a unary
#: one, 200 + k for a binary one, k its place in the library's ``custom_operators`` and
#: its row in the operator table (:func:`custom_opcode`, :func:`custom_index`).
CUSTOM_UNARY, CUSTOM_BINARY = 100, 200
#: How many custom operators one library can hold (the op codes' room).
MAX_CUSTOM = CUSTOM_BINARY - CUSTOM_UNARY
#: The operator table of a library without custom operators.
NO_CUSTOM = np.zeros((0, 3), dtype=np.int64)

#: Operation code of every token name an operator can have.
OPCODES: dict[str, int] = {
    "add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW,
    "sin": SIN, "cos": COS, "tan": TAN, "log": LOG, "sqrt": SQRT, "exp": EXP,
    "square": SQUARE, "cube": CUBE, "neg": NEG, "inv": INV, "tanh": TANH, "abs": ABS,
    "asin": ASIN, "acos": ACOS, "atan": ATAN, "sinh": SINH, "cosh": COSH,
}

#: The period of each periodic operator, in its argument's own units: what a periodic
#: node's look-elsewhere cost counts in (:func:`cadsr_sklearn.scoring.rewards.mdl`).
PERIODS: dict[int, float] = {SIN: 2.0 * np.pi, COS: 2.0 * np.pi, TAN: np.pi}


def arity(op: int) -> int:
    """Number of children of a node with operation code ``op``."""
    if op >= CUSTOM_UNARY:
        return 2 if op >= CUSTOM_BINARY else 1
    return 2 if ADD <= op < FIRST_UNARY else 1 if op >= FIRST_UNARY else 0


def custom_opcode(k: int, arity: int) -> int:
    """The op code of custom operator ``k`` (its row of the operator table) of ``arity``."""
    if not 0 <= k < MAX_CUSTOM:
        raise ValueError(f"A library holds at most {MAX_CUSTOM} custom operators.")
    return (CUSTOM_BINARY if arity == 2 else CUSTOM_UNARY) + k


def operator_table(rows) -> np.ndarray:
    """The operator table ``(K, 3)`` int64 of custom operators 0 … K−1: per row the
    addresses of the C functions ``void f(const double *a, const double *b, double *out,
    int64 n)`` that write the value, ∂/∂a and ∂/∂b on ``n`` rows (0 for none: the kernels
    give NaN). A unary operator's functions ignore ``b``."""
    return np.array(list(rows), dtype=np.int64).reshape(-1, 3)


def jit(**options):
    """numba's njit, cached on disk where a cache can be written, else in memory only."""
    def decorate(function):
        try:
            return numba.njit(cache=True, nogil=True, error_model="numpy", **options)(function)
        except RuntimeError:  # no writable cache location ("cannot cache function")
            return numba.njit(nogil=True, error_model="numpy", **options)(function)
    return decorate


@jit()
def copy_into(out, x):
    """out ← x, element by element. Loops, not ``out[:] = x``: numba compiles a slice
    assignment with its shape check and error message (string formatting) into every
    kernel that calls it, seconds of a first fit's compilation."""
    for i in range(len(x)):
        out[i] = x[i]


@jit()
def custom_index(op):
    """The row of the operator table of custom operator code ``op`` (:func:`custom_opcode`)."""
    return op - (CUSTOM_BINARY if op >= CUSTOM_BINARY else CUSTOM_UNARY)


@jit()
def is_binary(op):
    """Whether operator ``op`` (not a terminal) takes two children."""
    return op < FIRST_UNARY or op >= CUSTOM_BINARY
