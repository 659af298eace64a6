"""Levenberg–Marquardt fitting of a program's constants, compiled, a batch at a time.

One run (:func:`_levenberg_marquardt`) solves the damped normal equations with
the reverse-mode Jacobian of :mod:`.expressions.program`, stops by MINPACK's relative tests
or at the round-off floor, and ends a creeping fit early (:class:`LMSettings`).
A power's exponent over negative bases is fitted on the relaxed power and then
moved to integers (the section "integer exponents"). :func:`fit_batch` fits many
programs from several starts each on the caller's threads, without a Python call
per node or per iteration (a user's operator that numba could not compile is
the exception: its callback runs Python once per block of rows).

The first call on a machine compiles these kernels (numba; cached on disk after). numba
compiles each jitted function as a unit of its own, holding a copy of everything it calls, so
the steps that only give one fit its structure (:func:`_fit_one` and the integer-exponent
steps) are inlined into :func:`fit_batch` (``inline="always"``), and the kernels copy rows
by loops (:func:`~.expressions.opcodes.copy_into`) rather than by slice assignment or
``np.where``/``np.outer``, whose compiled shape checks and error messages are larger than the
loops they stand for.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..expressions.opcodes import (ADD, CONSTANT, MUL, NO_CUSTOM, POW, RELAXED_POW, VARIABLE,
                                   copy_into, jit)
from ..expressions.operations import apply
from ..expressions.program import (evaluate, evaluate_batch, forward, jacobian, node_values,
                                   reverse_jacobian, variant)

__all__ = ["LMSettings", "FitBatch", "FitRows", "FitOutputs", "fit_batch", "warm_up"]


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


@jit(inline="always")
def _relaxed(ops):
    out = ops.copy()
    for i in range(len(out)):
        if out[i] == POW:
            out[i] = RELAXED_POW
    return out


@jit()
def _cost(root, target, sqrt_w, resid):
    """½‖√w·(root − y)‖², the residuals written to ``resid``; not finite where root is not."""
    total = 0.0
    for r in range(len(target)):
        x = (root[r] - target[r]) * sqrt_w[r]
        resid[r] = x
        total += x * x
    return 0.5 * total


@jit()
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


@jit()
def _damped_solve(scaled, gs, mu, y):
    """y ← −(scaled + μI)⁻¹·gs by Cholesky's factorisation, written out for p ≤ 10.

    Returns False where the damped matrix is not positive definite to round-off (a
    Jacobian of deficient rank with μ near 0): the caller then damps more. For such
    small systems LAPACK's call costs far more than these p³/6 multiplications, and a
    factorisation per trial is cheaper than one eigendecomposition per accepted step.
    """
    p = len(gs)
    L = np.empty((p, p))
    for k in range(p):
        for j in range(k + 1):
            total = scaled[k, j]
            for i in range(j):
                total -= L[k, i] * L[j, i]
            if j < k:
                L[k, j] = total / L[j, j]
            elif total + mu > 0.0:  # False for NaN too
                L[k, k] = math.sqrt(total + mu)
            else:
                return False
    for k in range(p):  # L z = −gs
        total = -gs[k]
        for i in range(k):
            total -= L[k, i] * y[i]
        y[k] = total / L[k, k]
    for k in range(p - 1, -1, -1):  # Lᵀ y = z
        total = y[k]
        for i in range(k + 1, p):
            total -= L[i, k] * y[i]
        y[k] = total / L[k, k]
    return True


@jit(inline="always")
def _all_finite(x):
    """Whether every entry of ``x`` is finite."""
    for value in x:
        if not math.isfinite(value):
            return False
    return True


class FitBatch(NamedTuple):
    """Programs to fit, concatenated: program ``j`` is ``ops[node_start[j]:node_start[j+1]]``
    (likewise ``args``), its starting points rows ``start_row[j]:start_row[j+1]`` of
    ``starts``, first ``P`` columns; ``fixed[const_start[j]:const_start[j+1]]`` flags the
    constants it holds at their starting value (literals)."""

    ops: np.ndarray  # (N,) op codes of every node of every program
    args: np.ndarray  # (N,)
    node_start: np.ndarray  # (B + 1,) where each program's nodes begin
    starts: np.ndarray  # (R, P_max) starting constants, one row per start
    start_row: np.ndarray  # (B + 1,) where each program's starts begin
    const_start: np.ndarray  # (B + 1,) where each program's constants begin
    fixed: np.ndarray  # (P,) of bool


class FitRows(NamedTuple):
    """The rows the constants are fitted on, and the operator table of the programs."""

    X: np.ndarray  # (n, d)
    target: np.ndarray  # (n,)
    sqrt_w: np.ndarray  # (n,) ones when unweighted
    table: np.ndarray  # (K, 3) the library's operator table (.opcodes.operator_table)


class FitOutputs(NamedTuple):
    """Where :func:`fit_batch` writes, per program ``j``."""

    constants: np.ndarray  # (P,) program j's at const_start[j]:const_start[j+1]
    fitted: np.ndarray  # (B,) of bool: whether a fit held
    Y: np.ndarray  # (B, n) the output on the fitting rows, or (0, n) when not wanted


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


@jit()
def _levenberg_marquardt(v, args, data, c, max_nfev, s, y_out):
    """Minimise ½‖√w·(f(c) − y)‖² over the free constants of ``v``, from ``c`` (BFS order)

    Marquardt's scaled damping (A + μ·D) δ = −g on the normal equations, with D
    the running maximum of diag(A) (as MINPACK keeps its column norms) and
    Nielsen's update of μ from the gain ratio. Each trial solves the damped system
    by a Cholesky factorisation (:func:`_damped_solve`), so a rejected step costs one
    forward pass and a p × p solve.
    Trial points are evaluated without derivatives; the Jacobian is taken only
    at accepted points. A trial with non-finite output counts as a failed step
    (more damping), so LM can back away from the edge of the domain.

    Returns ``(ok, cost)``: ``c`` holds the result and ``y_out`` the output
    there; ``ok`` is False when f at the start is not finite.
    """
    n = len(data.target)
    p = len(v.free)
    cur = 0
    forward(v.ops, args, data.X, c, data.val[0], v.all_nodes, data.table)
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
    y = np.empty(p)  # the scaled step
    # The trial buffer shares the static rows: evaluate everything there once.
    for i in range(len(v.ops)):
        copy_into(data.val[1, i], data.val[0, i])
    done = False
    while cost > s.floor and nfev < max_nfev and not done:
        J = data.J[:p]  # (p, n)
        reverse_jacobian(v, args, data.val[cur], n, data.sqrt_w, J, data.adj, data.table)
        A, g = _normal_equations(J, data.resid[cur])  # (p, p), (p,)
        scale = np.empty(p)
        for k in range(p):
            D[k] = max(D[k], A[k, k])
            scale[k] = 1.0 / math.sqrt(D[k] if D[k] > 0 else 1.0)
        gs = g * scale
        # Stationary: the Jacobian columns are orthogonal to the residual (MINPACK's gtol).
        if gs @ gs <= 1e-24 * 2.0 * cost:
            break
        # A·(scale scaleᵀ) by loops: numba's np.outer compiles to as much code as this function
        scaled = np.empty((p, p))
        finite = True
        for k in range(p):
            for j in range(p):
                scaled[k, j] = A[k, j] * (scale[k] * scale[j])
                finite = finite and math.isfinite(scaled[k, j])
        if not finite:
            break
        while True:
            if not _damped_solve(scaled, gs, mu, y):
                mu *= nu
                nu *= 2.0
                if mu > 1e20:
                    done = True
                    break
                continue
            step = scale * y
            for k in range(p):
                trial_c[v.free[k]] = c[v.free[k]] + step[k]
            trial = 1 - cur
            forward(v.ops, args, data.X, trial_c, data.val[trial], v.dynamic_nodes,
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
                copy_into(c, trial_c)
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
            copy_into(trial_c, c)
            history[n_history] = cost
            n_history += 1
            mu *= nu
            nu *= 2.0
            if mu > 1e20 or nfev >= max_nfev:
                done = True
                break
    copy_into(y_out, data.val[cur, 0])
    return True, cost


# ---------------------------------------------------------------------------- integer exponents
# a**b is real for a < 0 only at integer b, so LM cannot move the exponent c of
# pow(x, c) once x takes a negative value: every step off an integer gives NaN,
# and x**5 + x**4 on x in [-1, 1] could never be fitted. LM runs on the relaxed
# power (RELAXED_POW) instead; the exponents are then rounded and moved, one at a
# time, to integers within ``integer_radius`` while that lowers the cost.
@jit(inline="always")
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


@jit()
def _negative_bases(ops, args, data, c, bases, numbers, skip):
    """Which exponents (not in ``skip``) sit over a base that is negative on some row at ``c``."""
    n, m = len(data.target), len(ops)
    forward(ops, args, data.X, c, data.val[0], np.arange(m - 1, -1, -1), data.table)
    negative = np.zeros(len(bases), dtype=np.bool_)
    for e in range(len(bases)):
        if skip[numbers[e]]:
            continue
        for r in range(n):
            if data.val[0, bases[e], r] < 0:
                negative[e] = True
                break
    return negative


@jit(inline="always")
def _refit_around(ops, args, fixed, data, c, max_nfev, s, y_out):
    """(ok, cost, c′): ``c`` with the constants not ``fixed`` refitted from their values."""
    v = variant(ops, args, fixed)
    c = c.copy()
    if len(v.free):
        ok, cost = _levenberg_marquardt(v, args, data, c, max_nfev, s, y_out)
        if not ok:
            return False, cost, c
    else:
        forward(ops, args, data.X, c, data.val[0], v.all_nodes, data.table)
        cost = _cost(data.val[0, 0], data.target, data.sqrt_w, data.resid[0])
        copy_into(y_out, data.val[0, 0])
    return math.isfinite(cost), cost, c


@jit(inline="always")
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
                        copy_into(y_out, y_trial)
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
            copy_into(y_out, y_trial)
    return c, cost


@jit(inline="always")
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
    ok, cost = _levenberg_marquardt(variant(relaxed, args, rounded), args, data, c,
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
@jit(inline="always")
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
    every = variant(ops, args, fixed)
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
                c = c0.copy()
                for i in range(len(c)):
                    if not fixed[i]:
                        c[i] = 1.0
                ok, cost = _levenberg_marquardt(every, args, data, c, s.max_nfev, s, y_try)
                exact = exact or (ok and cost <= s.floor)
            else:
                if len(bases) == 0 or exact:
                    continue
                ok, cost, c = _fit_integer_exponents(ops, args, fixed, bases, numbers, data, c0, s,
                                                     y_try)
            if ok and math.isfinite(cost) and _all_finite(c) and cost < best_cost:
                copy_into(best_c, c)
                copy_into(y_best, y_try)
                best_cost = cost
                found = True
        if best_cost <= s.floor:
            break  # exact to round-off: no restart can do better
    return found


@jit()
def fit_batch(batch, jobs, rows, s, out):
    """Fit program ``j`` of ``batch`` (:class:`FitBatch`) on ``rows`` (:class:`FitRows`)
    for each ``j`` in ``jobs``, by the settings ``s`` (:class:`LMSettings`), into ``out``
    (:class:`FitOutputs`). Work is independent across ``j``: threads may split ``jobs``.
    """
    n = len(rows.target)
    m_max, P_max = 1, 1
    for j in jobs:
        m_max = max(m_max, batch.node_start[j + 1] - batch.node_start[j])
        P_max = max(P_max, batch.const_start[j + 1] - batch.const_start[j])
    data = _Data(rows.X, rows.target, rows.sqrt_w, np.empty((2, m_max, n)),
                 np.empty((m_max, n)), np.empty((P_max, n)), np.empty((2, n)), rows.table)
    y = np.empty(n)
    for j in jobs:
        nodes = slice(batch.node_start[j], batch.node_start[j + 1])
        constants = slice(batch.const_start[j], batch.const_start[j + 1])
        P = batch.const_start[j + 1] - batch.const_start[j]
        # contiguous copies: every kernel then sees one array type (one compilation)
        o, a = batch.ops[nodes].copy(), batch.args[nodes].copy()
        held = batch.fixed[constants].copy()
        starts = batch.starts[batch.start_row[j]:batch.start_row[j + 1], :P]
        out.fitted[j] = _fit_one(o, a, held, data, starts, s, out.constants[constants], y)
        if out.Y.shape[0] and out.fitted[j]:
            copy_into(out.Y[j], y)
        elif out.Y.shape[0]:
            out.Y[j] = np.nan


def warm_up() -> None:
    """Compile every kernel a search and its export run, or load them from the disk cache.

    The first call on a machine compiles (tens of seconds, once); later ones, in
    any process, load the cached code. The arguments have the types the search
    passes, so no kernel compiles again later. The check that registers a user's
    operator (:mod:`.expressions.custom_operators`) compiles its own kernels, once, on
    the first registration: a search without one does not wait for them.
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
    rows = FitRows(X, target, np.ones(len(target)), NO_CUSTOM)
    out = FitOutputs(np.empty(2), np.zeros(1, dtype=np.bool_), np.empty((1, len(target))))
    for fixed in ([False, False], [True, False]):  # every constant free; a literal held
        batch = FitBatch(ops, args, one, np.ones((1, 2)), np.array([0, 1], dtype=np.int64),
                         constants, np.array(fixed))
        fit_batch(batch, jobs, rows, settings, out)
    evaluate(ops, args, X, np.ones(2))
    jacobian(ops, args, X, np.ones(2))  # the answer's standard errors
    node_values(ops, args, X, np.ones(2))  # the criterion's periodic term
    evaluate_batch(ops, args, one, np.ones(2), constants, X, jobs, np.empty((1, len(target))), True,
                   NO_CUSTOM)
    apply(ADD, 1.0, 1.0)
