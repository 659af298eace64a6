"""Expressions as flat programs, and the compiled interpreter that runs them.

A *program* is an expression's BFS tree as two integer arrays of one entry per
node: the node's operation code (:mod:`.expressions.opcodes`) and its argument — the BFS
index of its first child for an operator (a binary operator's right child is
the next node, since BFS children are consecutive), the feature column for a
variable, the BFS number of the constant for ``c``. Children come after their
parent, so one backward walk over the nodes evaluates the tree (:func:`forward`)
and one forward walk carries derivatives from the root down
(:func:`reverse_jacobian`). Rows are taken a block at a time, so a tree's node
values stay in cache; a node of pow, exp, log, sin or cos runs its block in SIMD
code (:mod:`.vector_math`), and a node of a user's operator makes one call through
the operator table per block, so the loops of the built-in operators hold no call
they could not inline, and one compiled kernel serves every table. The
Levenberg–Marquardt fit (:mod:`cadsr_sklearn.scoring.levenberg_marquardt`) runs the same sweeps.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .opcodes import (ADD, CONSTANT, COS, CUSTOM_BINARY, CUSTOM_UNARY, EXP, FIRST_UNARY, LOG,
                      NO_CUSTOM, ONE, POW, RELAXED_POW, SIN, VARIABLE, is_binary, jit)
from .operations import (custom_rows, pow_d_exponent, raise_if_interrupted, row_d_left,
                         row_d_right, row_value)
from .positions import first_children
from .vector_math import exp_rows, log_rows, pow_rows, sin_cos_rows

__all__ = ["compile_tokens", "evaluate", "evaluate_batch", "node_values", "jacobian", "forward",
           "Variant", "variant", "reverse_jacobian"]

_BLOCK = 512  # rows evaluated together: a tree's node values stay in cache


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


@jit()
def forward(ops, args, X, c, val, nodes, table):
    """Values of ``nodes`` (children before parents) on the rows of ``X``."""
    n = X.shape[0]
    for i in nodes:
        op = ops[i]
        out = val[i]
        if op == VARIABLE:
            f = args[i]
            for r in range(n):
                out[r] = X[r, f]
        elif op == ONE:
            out[:n] = 1.0
        elif op == CONSTANT:
            out[:n] = c[args[i]]
        elif op >= CUSTOM_UNARY:  # a loop of its own: see the module docstring
            left = val[args[i]]
            right = val[args[i] + 1] if op >= CUSTOM_BINARY else left  # unary ones ignore it
            custom_rows(op, 0, left, right, out, n, table)
        elif op == POW or op == RELAXED_POW:  # these a block at a time, in SIMD (vector_math)
            pow_rows(val[args[i]], val[args[i] + 1], out, n, op == RELAXED_POW)
        elif op == EXP:
            exp_rows(val[args[i]], out, n)
        elif op == LOG:
            log_rows(val[args[i]], out, n)
        elif op == SIN or op == COS:
            sin_cos_rows(val[args[i]], out, n, op == COS)
        elif op < FIRST_UNARY:
            left, right = val[args[i]], val[args[i] + 1]
            for r in range(n):
                out[r] = row_value(op, left[r], right[r])
        else:
            left = val[args[i]]
            for r in range(n):
                out[r] = row_value(op, left[r], 0.0)


@jit()
def _evaluate_into(ops, args, X, c, y, val, nodes, stop_at_nonfinite, table):
    """y ← output on every row, block by block; with ``stop_at_nonfinite``, all NaN as soon
    as a block holds a value that is not finite (the rest need not be computed)."""
    S = X.shape[0]
    for r0 in range(0, S, _BLOCK):
        n = min(_BLOCK, S - r0)
        forward(ops, args, X[r0:r0 + n], c, val, nodes, table)
        for r in range(n):  # a loop: numba compiles a slice assignment with its shape check
            y[r0 + r] = val[0, r]
        if stop_at_nonfinite:
            for r in range(n):
                if not math.isfinite(val[0, r]):
                    y[:] = np.nan
                    return


def evaluate(ops, args, X, c, table=NO_CUSTOM):
    """Output ``(S,)`` of a program on the rows of ``X`` ``(S, d)`` at constants ``c``;
    ``table`` is its library's operator table (:func:`operator_table`)."""
    # the batch kernel on a batch of one: a kernel fewer to compile on a first fit
    Y = np.empty((1, X.shape[0]))
    evaluate_batch(ops, args, np.array([0, len(ops)]), np.asarray(c, dtype=np.float64),
                   np.array([0, len(c)]), X, np.zeros(1, dtype=np.int64), Y, False, table)
    raise_if_interrupted()
    return Y[0]


@jit()
def _node_values(ops, args, X, c, table):
    """:func:`node_values`, compiled."""
    val = np.empty((len(ops), X.shape[0]))
    forward(ops, args, X, c, val, np.arange(len(ops) - 1, -1, -1), table)
    return val


def node_values(ops, args, X, c, table=NO_CUSTOM):
    """Value ``(m, S)`` of every node of a program on the rows of ``X``, root first."""
    values = _node_values(ops, args, X, c, table)
    raise_if_interrupted()
    return values


@jit()
def evaluate_batch(ops, args, node_start, constants, const_start, X, jobs, Y, stop_at_nonfinite,
                   table):
    """Row ``j`` of ``Y`` ``(B, S)`` ← output of program ``j`` for each ``j`` in ``jobs``.

    With ``stop_at_nonfinite``, an output that is not finite somewhere is all NaN,
    and its evaluation stops at the first block of rows that shows it.
    """
    m_max = 0
    for j in range(len(node_start) - 1):
        m_max = max(m_max, node_start[j + 1] - node_start[j])
    val = np.empty((m_max, min(_BLOCK, max(X.shape[0], 1))))
    for j in jobs:
        o = ops[node_start[j]:node_start[j + 1]].copy()
        p = args[node_start[j]:node_start[j + 1]].copy()
        c = constants[const_start[j]:const_start[j + 1]].copy()
        _evaluate_into(o, p, X, c, Y[j], val, np.arange(len(o) - 1, -1, -1), stop_at_nonfinite,
                       table)



class Variant(NamedTuple):
    """A program with some constants held fixed: what LM moves and what it re-evaluates."""

    ops: np.ndarray  # (m,) op codes (the true or the relaxed pow)
    free: np.ndarray  # (p,) BFS numbers of the constants LM moves
    free_position: np.ndarray  # (P,) index into ``free``, or −1 for a fixed constant
    dynamic: np.ndarray  # (m,) whether a free constant lies below the node
    dynamic_nodes: np.ndarray  # the dynamic nodes, children first
    all_nodes: np.ndarray  # every node, children first


@jit()
def variant(ops, args, fixed):
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
        elif op >= ADD and is_binary(op):
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
    return Variant(ops, free, free_position, dynamic, dynamic_nodes,
                    np.arange(m - 1, -1, -1))


@jit()
def reverse_jacobian(v, args, val, n, sqrt_w, J, adj, table):
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
                        custom_rows(op, 1 + child - a, left, right, partial, n, table)
                        for r in range(n):
                            partial[r] = g[r] * partial[r]
            elif op < FIRST_UNARY:
                right = val[a + 1]
                if v.dynamic[a]:
                    for r in range(n):
                        adj[a, r] = g[r] * row_d_left(op, left[r], right[r], out[r])
                if v.dynamic[a + 1] and op == POW:  # v·ln a, with ln a in SIMD code first
                    partial = adj[a + 1]
                    log_rows(left, partial, n)
                    for r in range(n):
                        partial[r] = g[r] * pow_d_exponent(left[r], out[r], partial[r])
                elif v.dynamic[a + 1]:
                    for r in range(n):
                        adj[a + 1, r] = g[r] * row_d_right(op, left[r], right[r], out[r])
            elif op == SIN or op == COS:  # cos a or −sin a, in SIMD code first
                partial = adj[a]
                sin_cos_rows(left, partial, n, op == SIN)
                sign = 1.0 if op == SIN else -1.0
                for r in range(n):
                    partial[r] = g[r] * (sign * partial[r])  # builtin_d_left's, row by row
            else:
                for r in range(n):
                    adj[a, r] = g[r] * row_d_left(op, left[r], 0.0, out[r])


@jit()
def _program_jacobian(ops, args, X, c, table):
    """:func:`jacobian`, compiled."""
    n, m, P = X.shape[0], len(ops), len(c)
    v = variant(ops, args, np.zeros(P, dtype=np.bool_))
    val, adj, J = np.empty((m, n)), np.empty((m, n)), np.empty((P, n))
    forward(ops, args, X, c, val, v.all_nodes, table)
    reverse_jacobian(v, args, val, n, np.ones(n), J, adj, table)
    return J


def jacobian(ops, args, X, c, table=NO_CUSTOM):
    """d output / d c ``(P, S)`` of a program at constants ``c`` on the rows of ``X``.

    Reverse mode, as the fit takes it; entries that are not finite are 0.
    """
    J = _program_jacobian(ops, args, X, c, table)
    raise_if_interrupted()
    return J
