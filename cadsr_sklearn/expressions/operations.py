"""The value and the partial derivatives of every operator, on numbers and on rows.

This module holds the one implementation of each built-in operator's value
(:func:`builtin_value`) and partials (:func:`builtin_d_left`,
:func:`builtin_d_right`). pow (true and relaxed), exp, log, sin and cos are
:mod:`.vector_math`'s: the interpreter runs them a block of rows at a time, and
inlines in its row loops :func:`row_value`, :func:`row_d_left` and
:func:`row_d_right`, which leave them out and stay small enough to inline. The
expression's evaluation, the SymPy export's folding of numbers, the reverse-mode
Jacobian and the Levenberg–Marquardt fit all read them. A user's operator is
reached through the operator table (:func:`.opcodes.operator_table`): one call of a
C function per block of rows (:func:`custom_rows`), compiled by numba or a callback
into the NumPy function (see :mod:`cadsr_sklearn.expressions.custom_operators`).

Numerics are float64's, with no protection: ``log(-1)`` is NaN, ``1/0`` is inf,
``(-8)**(1/3)`` is NaN, ``asin(2)`` is NaN and its slope at 1 is inf.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .opcodes import (ABS, ACOS, ADD, ASIN, ATAN, COS, COSH, CUBE, CUSTOM_UNARY, DIV, EXP, INV, LOG,
                      MUL, NEG, NO_CUSTOM, POW, RELAXED_POW, SIN, SINH, SQRT, SQUARE, SUB, TAN,
                      TANH, custom_index, jit)
from . import vector_math

__all__ = ["interrupt_from_callback", "raise_if_interrupted", "apply", "d_left", "d_right",
           "apply_rows", "partials_rows", "builtin_value", "builtin_d_left", "builtin_d_right",
           "row_value", "row_d_left", "row_d_right", "pow_d_exponent", "custom_rows"]


@intrinsic
def _call_rows(typingctx, address, a, b, out, n):
    """``f(a, b, out, n)`` for the C function ``void f(const double *a, const double *b,
    double *out, int64 n)`` at ``address``, on the data of contiguous arrays."""
    arrays = (a, b, out)
    if not all(isinstance(t, types.Array) and t.dtype == types.float64 and t.ndim == 1
               and t.layout == "C" for t in arrays):
        return None  # a strided view has no pointer to hand over: a typing error, not garbage
    signature = types.void(types.int64, a, b, out, types.int64)

    def codegen(context, builder, sig, llvm_args):
        pointer = ir.DoubleType().as_pointer()
        function_type = ir.FunctionType(ir.VoidType(), [pointer, pointer, pointer, ir.IntType(64)])
        function = builder.inttoptr(llvm_args[0], function_type.as_pointer())
        data = [context.make_array(t)(context, builder, v).data
                for t, v in zip(sig.args[1:4], llvm_args[1:4])]
        builder.call(function, [*data, llvm_args[4]])
        return context.get_dummy_value()

    return signature, codegen


@jit(inline="always")
def custom_rows(op, which, a, b, out, n, table):
    """out[:n] ← function ``which`` (0 the value, 1 ∂/∂a, 2 ∂/∂b) of custom operator ``op``
    on a[:n] (and b[:n]): one call through ``table`` for the whole block of rows. NaN
    where ``table`` has no such function (a table that is not the program's library's)."""
    k = custom_index(op)
    if k >= table.shape[0] or table[k, which] == 0:
        out[:n] = math.nan
    else:
        _call_rows(table[k, which], a, b, out, n)


@jit(inline="always")
def _custom(op, which, a, b, table):
    """:func:`custom_rows` at one pair of numbers."""
    out = np.empty(1)
    custom_rows(op, which, np.full(1, a), np.full(1, b), out, 1, table)
    return out[0]


@jit()
def builtin_value(op, a, b):
    """The value of built-in operator ``op`` at ``a`` (and ``b`` for a binary one)."""
    if op == POW or op == RELAXED_POW or op == EXP or op == LOG or op == SIN or op == COS:
        return vector_math.value(op, a, b)
    return row_value(op, a, b)


@jit()
def row_value(op, a, b):
    """:func:`builtin_value` of any operator but pow (true or relaxed), log, exp, sin and cos,
    which the interpreter computes a block of rows at a time (:mod:`.vector_math`): a
    function small enough for the compiler to inline in a row loop."""
    if op == ADD:
        return a + b
    if op == SUB:
        return a - b
    if op == MUL:
        return a * b
    if op == DIV:
        return a / b
    if op == TAN:
        return math.tan(a)
    if op == SQRT:
        return math.sqrt(a) if a >= 0 else math.nan
    if op == SQUARE:
        return a * a
    if op == CUBE:
        return a * a * a
    if op == NEG:
        return -a
    if op == INV:
        return 1.0 / a
    if op == TANH:
        return math.tanh(a)
    if op == ABS:
        return abs(a)
    if op == ASIN:
        return math.asin(a)
    if op == ACOS:
        return math.acos(a)
    if op == ATAN:
        return math.atan(a)
    if op == SINH:
        return math.sinh(a)
    if op == COSH:
        return math.cosh(a)
    return math.nan


@jit()
def builtin_d_left(op, a, b, v):
    """∂v/∂a of ``v = apply(op, a, b)`` (the only partial of a unary operator)."""
    if op == SIN:  # (op codes as int32, the programs' type: one compilation of value)
        return vector_math.value(np.int32(COS), a, 0.0)
    if op == COS:
        return -vector_math.value(np.int32(SIN), a, 0.0)
    return row_d_left(op, a, b, v)


@jit()
def row_d_left(op, a, b, v):
    """:func:`builtin_d_left` of any operator but sin and cos, as :func:`row_value`."""
    if op == ADD or op == SUB:
        return 1.0
    if op == MUL:
        return b
    if op == DIV:
        return 1.0 / b
    if op == POW:
        # b·a^(b−1) = b·v/a, without a second pow (the costliest call of a fit)
        # (libm's a**(b−1) at a = 0 is vector_math.value's: 0 is off its fast path)
        return b * (v / a) if a != 0 else b * a ** (b - 1.0)
    if op == RELAXED_POW:
        m = b * abs(a) ** (b - 1.0)
        return -m * math.cos(math.pi * b) if a < 0 else m
    if op == TAN:
        return 1.0 + v * v
    if op == LOG:
        return 1.0 / a
    if op == SQRT:
        return 0.5 / v
    if op == EXP:
        return v
    if op == SQUARE:
        return 2.0 * a
    if op == CUBE:
        return 3.0 * a * a
    if op == NEG:
        return -1.0
    if op == INV:
        return -v * v
    if op == TANH:
        return 1.0 - v * v
    if op == ABS:
        return (a > 0) - (a < 0) + 0.0  # np.sign: 0 at 0
    if op == ASIN or op == ACOS:  # ±1/√(1 − a²): inf at ±1, NaN beyond
        slope = 1.0 / math.sqrt((1.0 - a) * (1.0 + a)) if abs(a) <= 1 else math.nan
        return slope if op == ASIN else -slope
    if op == ATAN:
        return 1.0 / (1.0 + a * a)
    if op == SINH:
        return math.cosh(a)
    if op == COSH:
        return math.sinh(a)
    return math.nan


@jit()
def builtin_d_right(op, a, b, v):
    """∂v/∂b of ``v = apply(op, a, b)`` for a binary operator."""
    if op == POW:
        return pow_d_exponent(a, v, vector_math.value(np.int32(LOG), a, 0.0))
    return row_d_right(op, a, b, v)


@jit()
def row_d_right(op, a, b, v):
    """:func:`builtin_d_right` of any operator but pow, as :func:`row_value`."""
    if op == ADD:
        return 1.0
    if op == SUB:
        return -1.0
    if op == MUL:
        return a
    if op == DIV:
        return -v / b
    if op == RELAXED_POW:
        if a == 0:
            return 0.0
        log_a = math.log(abs(a))
        if a < 0:
            m = abs(a) ** b
            return m * (log_a * math.cos(math.pi * b) - math.pi * math.sin(math.pi * b))
        return v * log_a
    return math.nan


@jit(inline="always")
def pow_d_exponent(a, v, log_a):
    """∂v/∂b of ``v = a**b`` given ``log_a = ln a``: v ln a; at a = 0 the limit 0 (for b > 0),
    not 0 · -inf; NaN for a negative base."""
    return 0.0 if a == 0 else v * log_a if a > 0 else math.nan


@jit()
def _value(op, a, b, table):
    """The value of any operator ``op``, a custom one's through ``table``."""
    op = np.int32(op)  # a program's type of op code: one compilation of the operators
    return _custom(op, 0, a, b, table) if op >= CUSTOM_UNARY else builtin_value(op, a, b)


@jit()
def _partials(op, a, b, v, table):
    """(∂v/∂a, ∂v/∂b) of any operator ``op``, a custom one's through ``table``."""
    op = np.int32(op)  # a program's type of op code: one compilation of the operators
    if op >= CUSTOM_UNARY:
        return _custom(op, 1, a, b, table), _custom(op, 2, a, b, table)
    return builtin_d_left(op, a, b, v), builtin_d_right(op, a, b, v)


# A Ctrl-C that lands in a called-back operator (:mod:`.expressions.custom_operators`) cannot leave
# the callback (ctypes would print and drop it): the callback notes it here, and the
# Python that called the kernel raises it once the kernel has returned.
_INTERRUPTED = threading.Event()


def interrupt_from_callback() -> None:
    """Note a KeyboardInterrupt caught inside an operator's callback."""
    _INTERRUPTED.set()


def raise_if_interrupted() -> None:
    """Raise the KeyboardInterrupt a callback noted during the kernel call that just ended."""
    if _INTERRUPTED.is_set():
        _INTERRUPTED.clear()
        raise KeyboardInterrupt


def apply(op, a, b, table=NO_CUSTOM):
    """The value of operator ``op`` at numbers ``a`` (and ``b`` for a binary one); a custom
    operator's through ``table`` (:func:`operator_table`)."""
    value = _value(op, a, b, table)
    raise_if_interrupted()
    return value


def d_left(op, a, b, v, table=NO_CUSTOM):
    """∂v/∂a of ``v = apply(op, a, b)`` at numbers (the only partial of a unary operator)."""
    return _partials(op, a, b, v, table)[0]


def d_right(op, a, b, v, table=NO_CUSTOM):
    """∂v/∂b of ``v = apply(op, a, b)`` at numbers, for a binary operator."""
    return _partials(op, a, b, v, table)[1]


@jit()
def apply_rows(op, a, b, table):
    """:func:`apply` on ``(n,)`` arrays: the value ``(n,)`` of an operator, row by row."""
    op = np.int32(op)  # a program's type of op code: one compilation of the operators
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    out = np.empty(len(a))
    if op >= CUSTOM_UNARY:
        custom_rows(op, 0, a, b, out, len(a), table)
    else:
        for r in range(len(a)):
            out[r] = builtin_value(op, a[r], b[r])
    return out


@jit()
def partials_rows(op, a, b, v, table):
    """(∂v/∂a, ∂v/∂b) ``(n,)`` each of an operator on ``(n,)`` arrays (:func:`d_left`,
    :func:`d_right`)."""
    op = np.int32(op)  # a program's type of op code: one compilation of the operators
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    left, right = np.empty(len(a)), np.empty(len(a))
    if op >= CUSTOM_UNARY:
        custom_rows(op, 1, a, b, left, len(a), table)
        custom_rows(op, 2, a, b, right, len(a), table)
    else:
        for r in range(len(a)):
            left[r] = builtin_d_left(op, a[r], b[r], v[r])
            right[r] = builtin_d_right(op, a[r], b[r], v[r])
    return left, right
