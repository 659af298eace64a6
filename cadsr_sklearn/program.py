"""Expressions as flat programs, and the compiled kernels that run them.

A *program* is an expression's BFS tree as two integer arrays of one entry per
node: the node's operation code (:data:`OPCODES`) and its argument — the BFS
index of its first child for an operator (a binary operator's right child is
the next node, since BFS children are consecutive), the feature column for a
variable, the BFS number of the constant for ``c``. Children come after their
parent, so one backward walk over the nodes evaluates the tree and one forward
walk carries derivatives from the root down.

This module holds the one implementation of every operator's value
(:func:`apply`) and partial derivatives (:func:`d_left`, :func:`d_right`); the
expression's evaluation, the SymPy export's folding of numbers, the reverse-mode
Jacobian and the Levenberg–Marquardt fit all read them. A user's operator
(:mod:`.custom_operators`) is compiled to C functions whose addresses the
kernels receive in an *operator table* (:func:`operator_table`). A node of
such an operator takes its own loop over the rows, calling through the table,
so the loops of the built-in operators hold no call they could not inline and
run as fast as before, and one compiled (and disk-cached) kernel serves every
table. Everything here is compiled by numba (no ``fastmath``, so results are
IEEE-exact and what is predicted is bit for bit what was scored), releases the
GIL, and runs a whole fit without a Python call per node or per iteration.
Compiled code is cached on disk next to this file, or in the user's cache
directory where the package is read-only.

Numerics are float64's, with no protection: ``log(-1)`` is NaN, ``1/0`` is inf,
``(-8)**(1/3)`` is NaN.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .positions import first_children

__all__ = ["OPCODES", "LMSettings", "NO_CUSTOM", "arity", "compile_tokens", "operator_table",
           "apply", "d_left", "d_right", "evaluate", "evaluate_batch", "node_values", "jacobian",
           "fit_batch", "warm_up"]

# ---------------------------------------------------------------------------- op codes
VARIABLE, ONE, CONSTANT = 0, 1, 2
ADD, SUB, MUL, DIV, POW = 3, 4, 5, 6, 7
#: Real part of the principal power, |a|**b·cos(πb) for a < 0: smooth in b, equal
#: to a**b at every integer b (used to fit integer exponents over negative bases).
RELAXED_POW = 8
SIN, COS, TAN, LOG, SQRT, EXP, SQUARE, CUBE, NEG, INV, TANH, ABS = range(9, 21)
_FIRST_UNARY = SIN
#: Op codes of user-registered operators (:mod:`.custom_operators`): 100 + k for a unary
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
}

_BLOCK = 512  # rows evaluated together: a tree's node values stay in cache


def arity(op: int) -> int:
    """Number of children of a node with operation code ``op``."""
    if op >= CUSTOM_UNARY:
        return 2 if op >= CUSTOM_BINARY else 1
    return 2 if ADD <= op < _FIRST_UNARY else 1 if op >= _FIRST_UNARY else 0


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


def _jit(**options):
    """numba's njit, cached on disk where a cache can be written, else in memory only."""
    def decorate(function):
        try:
            return numba.njit(cache=True, nogil=True, error_model="numpy", **options)(function)
        except RuntimeError:  # no writable cache location ("cannot cache function")
            return numba.njit(nogil=True, error_model="numpy", **options)(function)
    return decorate


# ---------------------------------------------------------------------------- operators
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


@_jit()
def custom_index(op):
    """The row of the operator table of custom operator code ``op`` (:func:`custom_opcode`)."""
    return op - (CUSTOM_BINARY if op >= CUSTOM_BINARY else CUSTOM_UNARY)


@_jit()
def _binary(op):
    """Whether operator ``op`` (not a terminal) takes two children."""
    return op < _FIRST_UNARY or op >= CUSTOM_BINARY


@_jit()
def _custom_rows(op, which, a, b, out, n, table):
    """out[:n] ← function ``which`` (0 the value, 1 ∂/∂a, 2 ∂/∂b) of custom operator ``op``
    on a[:n] (and b[:n]): one call through ``table`` for the whole block of rows. NaN
    where ``table`` has no such function (a table that is not the program's library's)."""
    k = custom_index(op)
    if k >= table.shape[0] or table[k, which] == 0:
        out[:n] = math.nan
    else:
        _call_rows(table[k, which], a, b, out, n)


@_jit()
def _custom(op, which, a, b, table):
    """:func:`_custom_rows` at one pair of numbers."""
    out = np.empty(1)
    _custom_rows(op, which, np.full(1, a), np.full(1, b), out, 1, table)
    return out[0]


@_jit()
def _apply(op, a, b):
    """The value of built-in operator ``op`` at ``a`` (and ``b`` for a binary one)."""
    if op == ADD:
        return a + b
    if op == SUB:
        return a - b
    if op == MUL:
        return a * b
    if op == DIV:
        return a / b
    if op == POW:
        return a**b
    if op == RELAXED_POW:
        m = abs(a) ** b
        return m * math.cos(math.pi * b) if a < 0 else m
    if op == SIN:
        return math.sin(a)
    if op == COS:
        return math.cos(a)
    if op == TAN:
        return math.tan(a)
    if op == LOG:
        return math.log(a) if a >= 0 else math.nan
    if op == SQRT:
        return math.sqrt(a) if a >= 0 else math.nan
    if op == EXP:
        return math.exp(a)
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
    return math.nan


@_jit()
def _d_left(op, a, b, v):
    """∂v/∂a of ``v = apply(op, a, b)`` (the only partial of a unary operator)."""
    if op == ADD or op == SUB:
        return 1.0
    if op == MUL:
        return b
    if op == DIV:
        return 1.0 / b
    if op == POW:
        # b·a^(b−1) = b·v/a, without a second pow (the costliest call of a fit)
        return b * (v / a) if a != 0 else b * a ** (b - 1.0)
    if op == RELAXED_POW:
        m = b * abs(a) ** (b - 1.0)
        return -m * math.cos(math.pi * b) if a < 0 else m
    if op == SIN:
        return math.cos(a)
    if op == COS:
        return -math.sin(a)
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
    return math.nan


@_jit()
def _d_right(op, a, b, v):
    """∂v/∂b of ``v = apply(op, a, b)`` for a binary operator."""
    if op == ADD:
        return 1.0
    if op == SUB:
        return -1.0
    if op == MUL:
        return a
    if op == DIV:
        return -v / b
    if op == POW:
        # d(a^b)/db = a^b ln a; at a = 0 the limit is 0 (for b > 0), not 0 · -inf.
        return 0.0 if a == 0 else v * math.log(a) if a > 0 else math.nan
    if op == RELAXED_POW:
        if a == 0:
            return 0.0
        log_a = math.log(abs(a))
        if a < 0:
            m = abs(a) ** b
            return m * (log_a * math.cos(math.pi * b) - math.pi * math.sin(math.pi * b))
        return v * log_a
    return math.nan


@_jit()
def _value(op, a, b, table):
    """The value of any operator ``op``, a custom one's through ``table``."""
    return _custom(op, 0, a, b, table) if op >= CUSTOM_UNARY else _apply(op, a, b)


@_jit()
def _partials(op, a, b, v, table):
    """(∂v/∂a, ∂v/∂b) of any operator ``op``, a custom one's through ``table``."""
    if op >= CUSTOM_UNARY:
        return _custom(op, 1, a, b, table), _custom(op, 2, a, b, table)
    return _d_left(op, a, b, v), _d_right(op, a, b, v)


def apply(op, a, b, table=NO_CUSTOM):
    """The value of operator ``op`` at numbers ``a`` (and ``b`` for a binary one); a custom
    operator's through ``table`` (:func:`operator_table`)."""
    return _value(op, a, b, table)


def d_left(op, a, b, v, table=NO_CUSTOM):
    """∂v/∂a of ``v = apply(op, a, b)`` at numbers (the only partial of a unary operator)."""
    return _partials(op, a, b, v, table)[0]


def d_right(op, a, b, v, table=NO_CUSTOM):
    """∂v/∂b of ``v = apply(op, a, b)`` at numbers, for a binary operator."""
    return _partials(op, a, b, v, table)[1]


@_jit()
def apply_rows(op, a, b, table):
    """:func:`apply` on ``(n,)`` arrays: the value ``(n,)`` of an operator, row by row."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    out = np.empty(len(a))
    if op >= CUSTOM_UNARY:
        _custom_rows(op, 0, a, b, out, len(a), table)
    else:
        for r in range(len(a)):
            out[r] = _apply(op, a[r], b[r])
    return out


@_jit()
def partials_rows(op, a, b, v, table):
    """(∂v/∂a, ∂v/∂b) ``(n,)`` each of an operator on ``(n,)`` arrays (:func:`d_left`,
    :func:`d_right`)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    left, right = np.empty(len(a)), np.empty(len(a))
    if op >= CUSTOM_UNARY:
        _custom_rows(op, 1, a, b, left, len(a), table)
        _custom_rows(op, 2, a, b, right, len(a), table)
    else:
        for r in range(len(a)):
            left[r], right[r] = _d_left(op, a[r], b[r], v[r]), _d_right(op, a[r], b[r], v[r])
    return left, right


# ---------------------------------------------------------------------------- programs
def compile_tokens(tokens, opcode_of_token: np.ndarray, argument_of_token: np.ndarray,
                   arity_of_token: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The program (op codes, arguments) of a BFS token sequence, both ``(m,)`` int32.

    The per-token arrays come from :attr:`Library.opcodes` and friends: a
    variable's argument is its feature, any other token's is filled in here.
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    ops = opcode_of_token[tokens].astype(np.int32)
    args = argument_of_token[tokens].astype(np.int32)
    arity = arity_of_token[tokens]
    first_child = first_children(arity)
    is_operator = arity > 0
    args[is_operator] = first_child[is_operator]
    is_constant = ops == CONSTANT
    args[is_constant] = np.arange(int(is_constant.sum()))
    return ops, args


@_jit()
def _forward(ops, args, X, r0, n, c, val, nodes, table):
    """Values of ``nodes`` (children before parents) on rows r0 … r0+n−1 of ``X``."""
    for i in nodes:
        op = ops[i]
        out = val[i]
        if op == VARIABLE:
            f = args[i]
            for r in range(n):
                out[r] = X[r0 + r, f]
        elif op == ONE:
            out[:n] = 1.0
        elif op == CONSTANT:
            out[:n] = c[args[i]]
        elif op >= CUSTOM_UNARY:  # a loop of its own: see the module docstring
            left = val[args[i]]
            right = val[args[i] + 1] if op >= CUSTOM_BINARY else left  # unary ones ignore it
            _custom_rows(op, 0, left, right, out, n, table)
        elif op < _FIRST_UNARY:
            left, right = val[args[i]], val[args[i] + 1]
            for r in range(n):
                out[r] = _apply(op, left[r], right[r])
        else:
            left = val[args[i]]
            for r in range(n):
                out[r] = _apply(op, left[r], 0.0)


@_jit()
def _evaluate_into(ops, args, X, c, y, val, nodes, stop_at_nonfinite, table):
    """y ← output on every row, block by block; with ``stop_at_nonfinite``, all NaN as soon
    as a block holds a value that is not finite (the rest need not be computed)."""
    S = X.shape[0]
    for r0 in range(0, S, _BLOCK):
        n = min(_BLOCK, S - r0)
        _forward(ops, args, X, r0, n, c, val, nodes, table)
        y[r0:r0 + n] = val[0, :n]
        if stop_at_nonfinite and not np.all(np.isfinite(val[0, :n])):
            y[:] = np.nan
            return


@_jit()
def _evaluate(ops, args, X, c, table):
    """:func:`evaluate`, compiled."""
    y = np.empty(X.shape[0])
    val = np.empty((len(ops), min(_BLOCK, max(X.shape[0], 1))))
    _evaluate_into(ops, args, X, c, y, val, np.arange(len(ops) - 1, -1, -1), False, table)
    return y


def evaluate(ops, args, X, c, table=NO_CUSTOM):
    """Output ``(S,)`` of a program on the rows of ``X`` ``(S, d)`` at constants ``c``;
    ``table`` is its library's operator table (:func:`operator_table`)."""
    return _evaluate(ops, args, X, c, table)


@_jit()
def _node_values(ops, args, X, c, table):
    """:func:`node_values`, compiled."""
    val = np.empty((len(ops), X.shape[0]))
    _forward(ops, args, X, 0, X.shape[0], c, val, np.arange(len(ops) - 1, -1, -1), table)
    return val


def node_values(ops, args, X, c, table=NO_CUSTOM):
    """Value ``(m, S)`` of every node of a program on the rows of ``X``, root first."""
    return _node_values(ops, args, X, c, table)


@_jit()
def evaluate_batch(ops, args, node_start, constants, const_start, X, jobs, Y, stop_at_nonfinite,
                   table):
    """Row ``j`` of ``Y`` ``(B, S)`` ← output of program ``j`` for each ``j`` in ``jobs``.

    With ``stop_at_nonfinite``, an output that is not finite somewhere is all NaN,
    and its evaluation stops at the first block of rows that shows it.
    """
    m_max = np.max(node_start[1:] - node_start[:-1])
    val = np.empty((m_max, min(_BLOCK, max(X.shape[0], 1))))
    for j in jobs:
        o = ops[node_start[j]:node_start[j + 1]].copy()
        p = args[node_start[j]:node_start[j + 1]].copy()
        c = constants[const_start[j]:const_start[j + 1]].copy()
        _evaluate_into(o, p, X, c, Y[j], val, np.arange(len(o) - 1, -1, -1), stop_at_nonfinite,
                       table)


# ---------------------------------------------------------------------------- LM
class LMSettings(NamedTuple):
    """How one Levenberg–Marquardt run stops (all tests relative, as MINPACK's)."""

    max_nfev: int  # forward passes per run, accepted and rejected steps
    xtol: float  # relative step: ‖δ‖ ≤ xtol·‖c‖
    ftol: float  # relative decrease of the cost
    floor: float  # a cost at or below this is exact to round-off
    stall_window: int  # passes over which …
    stall_fraction: float  # … less than this relative progress ends a creeping fit
    fallback_ones: bool  # a start with non-finite output is retried from all ones
    trial_nfev: int  # passes of a refit after an integer exponent moves
    integer_radius: int  # integers tried on either side of a rounded exponent
    integer_sweeps: int  # coordinate-descent sweeps over the rounded exponents


class _Variant(NamedTuple):
    """A program with some constants held fixed: what LM moves and what it re-evaluates."""

    ops: np.ndarray  # (m,) op codes (the true or the relaxed pow)
    free: np.ndarray  # (p,) BFS numbers of the constants LM moves
    free_position: np.ndarray  # (P,) index into ``free``, or −1 for a fixed constant
    dynamic: np.ndarray  # (m,) whether a free constant lies below the node
    dynamic_nodes: np.ndarray  # the dynamic nodes, children first
    all_nodes: np.ndarray  # every node, children first


@_jit()
def _variant(ops, args, fixed):
    m, P = len(ops), len(fixed)
    free_position = np.full(P, -1, dtype=np.int64)
    p = 0
    for k in range(P):
        if not fixed[k]:
            free_position[k] = p
            p += 1
    free = np.empty(p, dtype=np.int64)
    for k in range(P):
        if free_position[k] >= 0:
            free[free_position[k]] = k
    dynamic = np.zeros(m, dtype=np.bool_)
    count = 0
    for i in range(m - 1, -1, -1):
        op = ops[i]
        if op == CONSTANT:
            dynamic[i] = not fixed[args[i]]
        elif op >= ADD and _binary(op):
            dynamic[i] = dynamic[args[i]] or dynamic[args[i] + 1]
        elif op >= ADD:
            dynamic[i] = dynamic[args[i]]
        count += dynamic[i]
    dynamic_nodes = np.empty(count, dtype=np.int64)
    count = 0
    for i in range(m - 1, -1, -1):
        if dynamic[i]:
            dynamic_nodes[count] = i
            count += 1
    return _Variant(ops, free, free_position, dynamic, dynamic_nodes,
                    np.arange(m - 1, -1, -1))


@_jit()
def _relaxed(ops):
    out = ops.copy()
    for i in range(len(out)):
        if out[i] == POW:
            out[i] = RELAXED_POW
    return out


@_jit()
def _jacobian(v, args, val, n, sqrt_w, J, adj, table):
    """J ``(p, n)`` ← d root / d c (free constants) at the node values ``val``, reverse mode.

    Every node has one parent, so each adjoint d root / d node is set once,
    parent before child, as one row however many constants lie below: a single
    sweep gives every row of the Jacobian. Rows are scaled by √w; a non-finite
    entry becomes 0 (that row of data then does not steer the step).
    """
    ops = v.ops
    adj[0, :n] = 1.0
    for i in range(len(ops)):  # parents first
        if not v.dynamic[i]:
            continue
        op = ops[i]
        g = adj[i]
        if op == CONSTANT:
            row = J[v.free_position[args[i]]]
            for r in range(n):
                x = g[r] * sqrt_w[r]
                row[r] = x if math.isfinite(x) else 0.0
        elif op >= ADD:
            a = args[i]
            out, left = val[i], val[a]
            if op >= CUSTOM_UNARY:  # a loop of its own: see the module docstring
                right = val[a + 1] if op >= CUSTOM_BINARY else left  # unary ones ignore it
                for child in range(a, a + 1 + (op >= CUSTOM_BINARY)):
                    if v.dynamic[child]:
                        partial = adj[child]  # ∂node/∂child first, then times the adjoint
                        _custom_rows(op, 1 + child - a, left, right, partial, n, table)
                        for r in range(n):
                            partial[r] = g[r] * partial[r]
            elif op < _FIRST_UNARY:
                right = val[a + 1]
                if v.dynamic[a]:
                    for r in range(n):
                        adj[a, r] = g[r] * _d_left(op, left[r], right[r], out[r])
                if v.dynamic[a + 1]:
                    for r in range(n):
                        adj[a + 1, r] = g[r] * _d_right(op, left[r], right[r], out[r])
            else:
                for r in range(n):
                    adj[a, r] = g[r] * _d_left(op, left[r], 0.0, out[r])


@_jit()
def _cost(root, target, sqrt_w, resid):
    """½‖√w·(root − y)‖², the residuals written to ``resid``; not finite where root is not."""
    total = 0.0
    for r in range(len(target)):
        x = (root[r] - target[r]) * sqrt_w[r]
        resid[r] = x
        total += x * x
    return 0.5 * total


@_jit()
def _program_jacobian(ops, args, X, c, table):
    """:func:`jacobian`, compiled."""
    n, m, P = X.shape[0], len(ops), len(c)
    v = _variant(ops, args, np.zeros(P, dtype=np.bool_))
    val, adj, J = np.empty((m, n)), np.empty((m, n)), np.empty((P, n))
    _forward(ops, args, X, 0, n, c, val, v.all_nodes, table)
    _jacobian(v, args, val, n, np.ones(n), J, adj, table)
    return J


def jacobian(ops, args, X, c, table=NO_CUSTOM):
    """d output / d c ``(P, S)`` of a program at constants ``c`` on the rows of ``X``.

    Reverse mode, as the fit takes it; entries that are not finite are 0.
    """
    return _program_jacobian(ops, args, X, c, table)


@_jit()
def _normal_equations(J, r):
    """(JJᵀ, Jr) by plain loops: a p × p system (p ≤ 10 here) needs no BLAS, and loops sum
    in one fixed order, so a fit never depends on where a thread's buffers sit in memory."""
    p, n = J.shape
    A, g = np.zeros((p, p)), np.zeros(p)
    for k in range(p):
        for j in range(k + 1):
            total = 0.0
            for i in range(n):
                total += J[k, i] * J[j, i]
            A[k, j] = A[j, k] = total
        total = 0.0
        for i in range(n):
            total += J[k, i] * r[i]
        g[k] = total
    return A, g


@_jit()
def _times(M, x):
    """M @ x for a small matrix, by plain loops (see _normal_equations)."""
    out = np.zeros(M.shape[0])
    for k in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[k] += M[k, j] * x[j]
    return out


class _Data(NamedTuple):
    """The fitting rows and the buffers one thread reuses from fit to fit."""

    X: np.ndarray  # (n, d)
    target: np.ndarray  # (n,)
    sqrt_w: np.ndarray  # (n,) ones when unweighted
    val: np.ndarray  # (2, m, n) node values at the current and the trial point
    adj: np.ndarray  # (m, n) adjoints
    J: np.ndarray  # (P, n)
    resid: np.ndarray  # (2, n)
    table: np.ndarray  # (K, 3) the library's operator table


@_jit()
def _levenberg_marquardt(v, args, data, c, max_nfev, s, y_out):
    """Minimise ½‖√w·(f(c) − y)‖² over the free constants of ``v``, from ``c`` (BFS order)

    Marquardt's scaled damping (A + μ·D) δ = −g on the normal equations, with D
    the running maximum of diag(A) (as MINPACK keeps its column norms) and
    Nielsen's update of μ from the gain ratio. The scaled A is diagonalised once
    per accepted step, so a rejected step costs one forward pass and no solve.
    Trial points are evaluated without derivatives; the Jacobian is taken only
    at accepted points. A trial with non-finite output counts as a failed step
    (more damping), so LM can back away from the edge of the domain.

    Returns ``(ok, cost)``: ``c`` holds the result and ``y_out`` the output
    there; ``ok`` is False when f at the start is not finite.
    """
    n = len(data.target)
    p = len(v.free)
    cur = 0
    _forward(v.ops, args, data.X, 0, n, c, data.val[0], v.all_nodes, data.table)
    cost = _cost(data.val[0, 0], data.target, data.sqrt_w, data.resid[0])
    if not math.isfinite(cost):
        return False, cost
    history = np.empty(max_nfev + 2)
    history[0] = cost
    n_history = 1
    nfev = 1
    mu, nu = 1e-3, 2.0
    D = np.zeros(p)
    trial_c = c.copy()
    # The trial buffer shares the static rows: evaluate everything there once.
    data.val[1, :len(v.ops)] = data.val[0, :len(v.ops)]
    done = False
    while cost > s.floor and nfev < max_nfev and not done:
        J = data.J[:p]  # (p, n)
        _jacobian(v, args, data.val[cur], n, data.sqrt_w, J, data.adj, data.table)
        A, g = _normal_equations(J, data.resid[cur])  # (p, p), (p,)
        scale = np.empty(p)
        for k in range(p):
            D[k] = max(D[k], A[k, k])
            scale[k] = 1.0 / math.sqrt(D[k] if D[k] > 0 else 1.0)
        gs = g * scale
        # Stationary: the Jacobian columns are orthogonal to the residual (MINPACK's gtol).
        if gs @ gs <= 1e-24 * 2.0 * cost:
            break
        scaled = A * np.outer(scale, scale)
        if not np.all(np.isfinite(scaled)):
            break
        if p == 1:  # the common case needs no decomposition
            lam = np.array([scaled[0, 0]])
            Q = np.ones((1, 1))
        else:
            try:
                lam, Q = np.linalg.eigh(scaled)
            except Exception:  # LAPACK did not converge: stop at the last accepted point
                break
            lam = np.maximum(lam, 0.0)
            Q = np.ascontiguousarray(Q)  # one array type on both branches
        qg = _times(Q.T, gs)
        while True:
            step = -scale * _times(Q, qg / (lam + mu))
            for k in range(p):
                trial_c[v.free[k]] = c[v.free[k]] + step[k]
            trial = 1 - cur
            _forward(v.ops, args, data.X, 0, n, trial_c, data.val[trial], v.dynamic_nodes,
                     data.table)
            nfev += 1
            cost_new = _cost(data.val[trial, 0], data.target, data.sqrt_w, data.resid[trial])
            if cost_new < cost:  # False for NaN
                predicted = 0.5 * (step @ (mu * D * step - g))
                rho = (cost - cost_new) / predicted if predicted > 0 else 1.0
                mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
                nu = 2.0
                c_norm = 0.0
                for k in range(p):
                    c_norm += c[v.free[k]] ** 2
                # Both tests relative (MINPACK's xtol): an absolute floor would stop
                # constants of a tiny-scaled target at round-off of their start.
                converged = (cost - cost_new <= s.ftol * cost
                             or math.sqrt(step @ step) <= s.xtol * math.sqrt(c_norm))
                c[:] = trial_c
                cur = trial
                cost = cost_new
                history[n_history] = cost
                n_history += 1
                # Stalled: less than `stall_fraction` relative progress over the last
                # `stall_window` passes. Such fits creep (constants drifting to
                # infinity) and never reach the top of the batch.
                if converged or (nfev > s.stall_window and cost > (1.0 - s.stall_fraction)
                                 * history[n_history - s.stall_window - 1]):
                    done = True
                break
            trial_c[:] = c
            history[n_history] = cost
            n_history += 1
            mu *= nu
            nu *= 2.0
            if mu > 1e20 or nfev >= max_nfev:
                done = True
                break
    y_out[:] = data.val[cur, 0]
    return True, cost


# ---------------------------------------------------------------------------- integer exponents
# a**b is real for a < 0 only at integer b, so LM cannot move the exponent c of
# pow(x, c) once x takes a negative value: every step off an integer gives NaN,
# and x**5 + x**4 on x in [-1, 1] could never be fitted. LM runs on the relaxed
# power (RELAXED_POW) instead; the exponents are then rounded and moved, one at a
# time, to integers within ``integer_radius`` while that lowers the cost.
@_jit()
def _exponents(ops, args):
    """(base node, BFS number of the exponent) of every ``pow(., c)``, children first."""
    count = 0
    for i in range(len(ops)):
        if ops[i] == POW and ops[args[i] + 1] == CONSTANT:
            count += 1
    bases = np.empty(count, dtype=np.int64)
    numbers = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(len(ops) - 1, -1, -1):
        if ops[i] == POW and ops[args[i] + 1] == CONSTANT:
            bases[k] = args[i]
            numbers[k] = args[args[i] + 1]
            k += 1
    return bases, numbers


@_jit()
def _negative_bases(ops, args, data, c, bases, numbers, skip):
    """Which exponents (not in ``skip``) sit over a base that is negative on some row at ``c``."""
    n, m = len(data.target), len(ops)
    _forward(ops, args, data.X, 0, n, c, data.val[0], np.arange(m - 1, -1, -1), data.table)
    negative = np.zeros(len(bases), dtype=np.bool_)
    for e in range(len(bases)):
        if skip[numbers[e]]:
            continue
        for r in range(n):
            if data.val[0, bases[e], r] < 0:
                negative[e] = True
                break
    return negative


@_jit()
def _refit_around(ops, args, fixed, data, c, max_nfev, s, y_out):
    """(ok, cost, c′): ``c`` with the constants not ``fixed`` refitted from their values."""
    v = _variant(ops, args, fixed)
    c = c.copy()
    if len(v.free):
        ok, cost = _levenberg_marquardt(v, args, data, c, max_nfev, s, y_out)
        if not ok:
            return False, cost, c
    else:
        n = len(data.target)
        _forward(ops, args, data.X, 0, n, c, data.val[0], v.all_nodes, data.table)
        cost = _cost(data.val[0, 0], data.target, data.sqrt_w, data.resid[0])
        y_out[:] = data.val[0, 0]
    return math.isfinite(cost), cost, c


@_jit()
def _move_integer_exponents(ops, args, data, c, cost, y_out, fixed, order, s):
    """Integer coordinate descent on the exponents that were rounded: ``(c, cost)``.

    The relaxation is multimodal: from starts near 1, the exponents of
    x + x**c + x**c + x**c settle as often on (2, 6, 1) as on a permutation
    of (2, 3, 4), and rounding keeps whichever it got. So each rounded exponent
    in turn is moved to the integers within ``integer_radius`` of it, nearest
    first, with the other constants refitted from where they are; the first
    move that lowers the cost is kept. Sweeps repeat until no move helps, the
    fit is exact, or ``integer_sweeps`` have run. A move's refit gets only
    ``trial_nfev`` passes, since the other constants start from their fit to
    the neighbouring exponents; the final exponents then get one full refit.
    """
    trial_nfev = min(s.max_nfev, s.trial_nfev)
    y_trial = np.empty_like(y_out)
    moved_any = False
    for _ in range(s.integer_sweeps):
        moved = False
        for j in order:
            here = c[j]
            for distance in range(1, s.integer_radius + 1):
                for side in (-1.0, 1.0):
                    trial_c = c.copy()
                    trial_c[j] = here + side * distance
                    ok, trial_cost, trial_c = _refit_around(ops, args, fixed, data, trial_c,
                                                            trial_nfev, s, y_trial)
                    if ok and trial_cost < cost:
                        c, cost = trial_c, trial_cost
                        y_out[:] = y_trial
                        moved = moved_any = True
                        break
                if c[j] != here:
                    break
            if cost <= s.floor:
                return c, cost
        if not moved:
            break
    if moved_any:  # moves were refitted on a short budget: finish the last one
        ok, final_cost, final_c = _refit_around(ops, args, fixed, data, c, s.max_nfev, s, y_trial)
        if ok and final_cost < cost:
            c, cost = final_c, final_cost
            y_out[:] = y_trial
    return c, cost


@_jit()
def _fit_integer_exponents(ops, args, fixed, bases, numbers, data, c0, s, y_out):
    """Fit on the relaxed power, round every exponent over a negative base, refit: (ok, cost, c).

    The rounded exponents are then held fixed while LM refits the other
    constants on the true expression; unless that fit is exact, the rounded
    exponents are then moved to neighbouring integers while that lowers the
    cost. Not ok when no exponent sits over a negative base at ``c0`` (the
    ordinary fit covers that case) or when the result is not finite.
    """
    P = len(c0)
    rounded = fixed.copy()  # held: the fixed literals, then every exponent rounded
    # The innermost pow over a negative base sees the same base in the true and the
    # relaxed expression, so the (cheaper) true one tells whether there is any.
    if not np.any(_negative_bases(ops, args, data, c0, bases, numbers, rounded)):
        return False, math.inf, c0
    relaxed = _relaxed(ops)
    c = c0.copy()
    ok, cost = _levenberg_marquardt(_variant(relaxed, args, rounded), args, data, c,
                                    s.max_nfev, s, y_out)
    if not ok:
        return False, cost, c
    order = np.empty(P, dtype=np.int64)  # the rounded exponents, in the order rounded
    n_rounded = 0
    to_round = _negative_bases(relaxed, args, data, c, bases, numbers, rounded)
    # Rounding one exponent can turn another base negative (pow(x, c1) + c2 as a
    # base): round until every exponent over a negative base is an integer.
    while np.any(to_round):
        for e in range(len(bases)):
            if to_round[e]:
                j = numbers[e]
                c[j] = np.rint(c[j])
                rounded[j] = True
                order[n_rounded] = j
                n_rounded += 1
        to_round = _negative_bases(ops, args, data, c, bases, numbers, rounded)
    ok, cost, c = _refit_around(ops, args, rounded, data, c, s.max_nfev, s, y_out)
    if not ok:
        return False, cost, c
    if n_rounded and cost > s.floor:
        c, cost = _move_integer_exponents(ops, args, data, c, cost, y_out, rounded,
                                          order[:n_rounded], s)
    return True, cost, c


# ---------------------------------------------------------------------------- one fit
@_jit()
def _fit_one(ops, args, fixed, data, starts, s, best_c, y_best):
    """Best constants over the starting points ``starts`` ``(r, P)``: whether any fit held.

    ``best_c`` receives the constants (BFS order), ``y_best`` the output there.
    Constants flagged in ``fixed`` ``(P,)`` keep their starting value (a literal
    fixed by snapping, the same in every start). More fits may follow a start:

    * the first time a start's output is not finite, one from all ones (unless
      ``fallback_ones`` is off, as with ``init="ones"``): a negative base under
      ``pow`` is finite only at an integer exponent, 1 is the one integer every
      init scheme is centred on, and ``log(x + c)`` on x ∈ [-1, 1] is defined
      at c = 1 but not at c = 0.7;
    * from every start, unless a fit from it is already exact, if an exponent
      ``c`` of ``pow`` sits over a negative base there: the fit on the relaxed
      ``pow``, with that exponent then rounded (and moved to a neighbouring
      integer while that helps) and the other constants refitted.

    The lowest cost wins; an exact fit ends the search.
    """
    bases, numbers = _exponents(ops, args)
    every = _variant(ops, args, fixed)
    y_try = np.empty_like(y_best)
    best_cost = math.inf
    found = False
    tried_ones = not s.fallback_ones
    for k in range(starts.shape[0]):
        c0 = starts[k].copy()
        for attempt in range(3):  # the start, all ones once, integer exponents
            if attempt == 0:
                c = c0.copy()
                ok, cost = _levenberg_marquardt(every, args, data, c, s.max_nfev, s, y_try)
                exact = ok and cost <= s.floor
                retry_ones = not ok and not tried_ones
            elif attempt == 1:
                if not retry_ones:
                    continue
                tried_ones = True
                c = np.where(fixed, c0, 1.0)
                ok, cost = _levenberg_marquardt(every, args, data, c, s.max_nfev, s, y_try)
                exact = exact or (ok and cost <= s.floor)
            else:
                if len(bases) == 0 or exact:
                    continue
                ok, cost, c = _fit_integer_exponents(ops, args, fixed, bases, numbers, data, c0, s,
                                                     y_try)
            if ok and math.isfinite(cost) and np.all(np.isfinite(c)) and cost < best_cost:
                best_c[:] = c
                y_best[:] = y_try
                best_cost = cost
                found = True
        if best_cost <= s.floor:
            break  # exact to round-off: no restart can do better
    return found


@_jit()
def fit_batch(ops, args, node_start, starts, start_row, const_start, fixed, jobs, X, target,
              sqrt_w, s, constants, fitted, Y, table):
    """Fit program ``j`` for each ``j`` in ``jobs``; programs are concatenated.

    Program ``j`` is ``ops[node_start[j]:node_start[j+1]]`` (likewise ``args``);
    its starting points are rows ``start_row[j]:start_row[j+1]`` of ``starts``
    ``(R, P_max)``, first ``P`` columns; ``fixed[const_start[j]:const_start[j+1]]``
    flags the constants it holds at their starting value. Writes its constants to
    ``constants[const_start[j]:const_start[j+1]]``, whether a fit held to
    ``fitted[j]`` and, if ``Y`` has rows, its output on the fitting rows to
    ``Y[j]``. ``table`` is the programs' library's operator table (:func:`operator_table`).
    Work is independent across ``j``: threads may split ``jobs``.
    """
    n = len(target)
    m_max, P_max = 1, 1
    for j in jobs:
        m_max = max(m_max, node_start[j + 1] - node_start[j])
        P_max = max(P_max, const_start[j + 1] - const_start[j])
    data = _Data(X, target, sqrt_w, np.empty((2, m_max, n)), np.empty((m_max, n)),
                 np.empty((P_max, n)), np.empty((2, n)), table)
    y = np.empty(n)
    for j in jobs:
        P = const_start[j + 1] - const_start[j]
        # contiguous copies: every kernel then sees one array type (one compilation)
        o = ops[node_start[j]:node_start[j + 1]].copy()
        a = args[node_start[j]:node_start[j + 1]].copy()
        held = fixed[const_start[j]:const_start[j + 1]].copy()
        fitted[j] = _fit_one(o, a, held, data, starts[start_row[j]:start_row[j + 1], :P], s,
                             constants[const_start[j]:const_start[j + 1]], y)
        if Y.shape[0] and fitted[j]:
            Y[j] = y
        elif Y.shape[0]:
            Y[j] = np.nan


def warm_up() -> None:
    """Compile every kernel a search and its export run, or load them from the disk cache.

    The first call on a machine compiles (tens of seconds, once); later ones, in
    any process, load the cached code. The arguments have the types the search
    passes, so no kernel compiles again later.
    """
    # add(mul(c, x0), pow(x0, c)), BFS; x0 takes negative values: the integer-exponent path too
    ops = np.array([ADD, MUL, POW, CONSTANT, VARIABLE, VARIABLE, CONSTANT], dtype=np.int32)
    args = np.array([1, 3, 5, 0, 0, 0, 1], dtype=np.int32)
    X = np.linspace(-1.0, 1.0, 8)[:, None]
    target = 2.0 * X[:, 0] + X[:, 0] ** 2
    one = np.array([0, len(ops)], dtype=np.int64)
    constants = np.array([0, 2], dtype=np.int64)
    jobs = np.arange(1)
    settings = LMSettings(max_nfev=20, xtol=1e-10, ftol=1e-10, floor=0.0, stall_window=10,
                          stall_fraction=1e-2, fallback_ones=True, trial_nfev=10,
                          integer_radius=3, integer_sweeps=3)
    fitted_constants, fitted = np.empty(2), np.zeros(1, dtype=np.bool_)
    for fixed in ([False, False], [True, False]):  # every constant free; a literal held
        fit_batch(ops, args, one, np.ones((1, 2)), np.array([0, 1], dtype=np.int64), constants,
                  np.array(fixed), jobs, X, target, np.ones(len(target)), settings,
                  fitted_constants, fitted, np.empty((1, len(target))), NO_CUSTOM)
    evaluate(ops, args, X, np.ones(2))
    column = X[:, 0].copy()
    apply_rows(ADD, column, column, NO_CUSTOM)  # the registration check of custom operators
    partials_rows(ADD, column, column, column, NO_CUSTOM)
    evaluate_batch(ops, args, one, np.ones(2), constants, X, jobs, np.empty((1, len(target))), True,
                   NO_CUSTOM)
    apply(ADD, 1.0, 1.0)
