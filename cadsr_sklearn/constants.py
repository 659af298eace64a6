"""Fitting the values of the constant tokens ``c`` (appendix Algorithm 4, "OptimizeConstants").

Every sampled expression with constant tokens has its constants fitted by
Levenberg–Marquardt (LM) least squares before it is scored, as in the paper.
Three things make this fast enough to run on every batch:

* **an analytic Jacobian by reverse-mode differentiation** through the BFS tree
  (:data:`_DERIVATIVES`), instead of finite differences. Every node has one
  parent, so one sweep from the root down gives d output / d node for every
  node as a single row, and the Jacobian's rows are those of the ``c`` leaves:
  one sweep whatever the number of constants;
* **constant folding of the structure**: subtrees without a constant token do not
  change while the constants move, so they are evaluated once per expression;
* **a small LM in NumPy** on the ``p x p`` normal equations (``p <= 10`` here),
  which avoids the per-call set-up of :func:`scipy.optimize.least_squares`
  (available as ``solver="scipy"`` for cross-checks).

Fitting uses a random subsample of at most ``const_fit_samples`` rows, drawn once
per fitter; results are cached by the expression's canonical key for the
fitter's lifetime.

A fit that fails — non-finite output at every starting point tried, or an
exception inside — sets all constants of that expression to NaN, so it
evaluates to NaN and scores ``-inf``; :attr:`ConstantFitter.success_` says which
fits of the last call failed. No warning ever escapes.
"""

from __future__ import annotations

import warnings
from math import sqrt
from typing import Callable, Sequence

import numpy as np
from scipy.linalg.lapack import dsyevd

from .expression import Expression
from .library import Library

__all__ = ["ConstantFitter", "fit_key"]


# --------------------------------------------------------------------------- derivatives
# Partial derivatives of each operator. Unary entries take (a, v) with v = f(a);
# binary entries take (a, b, v) with v = f(a, b) and return d v / d a (left) and
# d v / d b (right). Reusing v saves a transcendental call where possible.
_UNARY_D: dict[str, Callable] = {
    "sin": lambda a, v: np.cos(a),
    "cos": lambda a, v: -np.sin(a),
    "tan": lambda a, v: 1.0 + v * v,
    "log": lambda a, v: 1.0 / a,
    "sqrt": lambda a, v: 0.5 / v,
    "exp": lambda a, v: v,
    "square": lambda a, v: 2.0 * a,
    "cube": lambda a, v: 3.0 * a * a,
    "neg": lambda a, v: -1.0,
    "inv": lambda a, v: -v * v,
    "tanh": lambda a, v: 1.0 - v * v,
    "abs": lambda a, v: np.sign(a),
}


def _pow_db(a, b, v):
    # d(a^b)/db = a^b ln a; at a = 0 the limit is 0 (for b > 0), not 0 * -inf.
    return np.where(a == 0, 0.0, v * np.log(a))


_BINARY_D: dict[str, tuple[Callable, Callable]] = {
    "add": (lambda a, b, v: 1.0, lambda a, b, v: 1.0),
    "sub": (lambda a, b, v: 1.0, lambda a, b, v: -1.0),
    "mul": (lambda a, b, v: b, lambda a, b, v: a),
    "div": (lambda a, b, v: 1.0 / b, lambda a, b, v: -v / b),
    "pow": (lambda a, b, v: b * np.power(a, b - 1.0), _pow_db),
}

#: Derivative table keyed by token name (used by the reverse-mode Jacobian).
_DERIVATIVES: dict[str, object] = {**_UNARY_D, **_BINARY_D}


# --------------------------------------------------------------------------- integer exponents
# a**b is real for a < 0 only at integer b, so LM cannot move the exponent c of
# pow(x, c) once x takes a negative value: every step off an integer gives NaN,
# and x**5 + x**4 on x in [-1, 1] could never be fitted. The real part of the
# principal power, |a|**b * cos(pi b) for a < 0, is smooth in b and equals a**b at
# every integer b. LM runs on that relaxation; the exponents are then rounded
# and moved, one exponent at a time, to integers within 3 while that lowers the
# cost (see _fit_integer_exponents and _move_integer_exponents).
def _relaxed_pow(a, b):
    m = np.power(np.abs(a), b)
    return np.where(a < 0, m * np.cos(np.pi * b), m)


def _relaxed_pow_da(a, b, v):
    return b * np.power(np.abs(a), b - 1.0) * np.where(a < 0, -np.cos(np.pi * b), 1.0)


def _relaxed_pow_db(a, b, v):
    m = np.power(np.abs(a), b)
    log_a = np.log(np.abs(a))
    db = np.where(a < 0, m * (log_a * np.cos(np.pi * b) - np.pi * np.sin(np.pi * b)), v * log_a)
    return np.where(a == 0, 0.0, db)


# --------------------------------------------------------------------------- compiled form
_ONE = np.ones((1, 1))  # the eigenvectors of a 1 x 1 system; never written to
_ID, _NEG = "id", "neg"  # derivative markers that need no multiplication


class _Program:
    """An expression specialised to fixed rows: static subtrees folded, the rest as steps.

    :meth:`values` computes every node's value for constants ``c`` (BFS order);
    :meth:`jacobian` then sweeps derivatives down the tree from those values
    and returns the ``(p, n)`` matrix whose row ``j`` is d output / d ``c[j]``.
    Constants in ``fixed`` (BFS number -> value) are folded like literals; ``c``
    then holds the others, ``free`` their BFS numbers.
    """

    __slots__ = ("steps", "static", "n_constants", "exponents", "free")

    def __init__(self, tokens: Sequence[int], table: list, columns: Sequence[np.ndarray],
                 fixed: dict | None = None):
        fixed = fixed or {}
        m = len(tokens)
        static: list = [None] * m  # value of every subtree without a constant
        dynamic = [False] * m  # whether a constant lies in the subtree
        steps = []
        exponents = []  # (base node, BFS number of its exponent c) of every pow(., c)
        first = 1
        kids_of = [0] * m
        constant_number = [0] * m  # BFS number of the c at each node
        free = []
        p = 0
        for i in range(m):
            kids_of[i] = first
            first += table[tokens[i]][0]
            if table[tokens[i]][1] == "constant":
                constant_number[i] = p
                if p not in fixed:
                    free.append(p)
                p += 1
        position = {number: j for j, number in enumerate(free)}  # in the vector c
        # Children sit after their parent in BFS order, so one backward walk
        # sees every child before its parent.
        for i in range(m - 1, -1, -1):
            arity, kind, fn, dl, dr, feature, name = table[tokens[i]]
            a = kids_of[i]
            if arity == 2:
                b = a + 1
                if name == "pow" and table[tokens[b]][1] == "constant":
                    exponents.append((a, constant_number[b]))
                if not (dynamic[a] or dynamic[b]):
                    static[i] = fn(static[a], static[b])
                else:
                    dynamic[i] = True
                    steps.append((2, i, fn, a, b, dl if dynamic[a] else None,
                                  dr if dynamic[b] else None))
            elif arity == 1:
                if not dynamic[a]:
                    static[i] = fn(static[a])
                else:
                    dynamic[i] = True
                    steps.append((1, i, fn, a, None, dl, None))
            elif kind == "constant" and constant_number[i] in fixed:
                static[i] = np.float64(fixed[constant_number[i]])
            elif kind == "constant":
                dynamic[i] = True
                steps.append((0, i, None, position[constant_number[i]], None, None, None))
            elif kind == "variable":
                static[i] = columns[feature]
            else:  # the literal 1
                static[i] = 1.0
        self.steps = steps
        self.static = static
        self.n_constants = len(free)
        self.exponents = exponents
        self.free = free

    def values(self, c: np.ndarray) -> list:
        """Value of every node (scalars for variable-free subtrees), root first."""
        val = list(self.static)
        for kind, i, fn, a, b, _, _ in self.steps:
            if kind == 0:
                val[i] = c[a]
            elif kind == 1:
                val[i] = fn(val[a])
            else:
                val[i] = fn(val[a], val[b])
        return val

    def jacobian(self, val: list, n: int) -> np.ndarray:
        """d root / d c at the node values of :meth:`values`: ``(p, n)``, reverse mode.

        Every node has one parent, so each adjoint d root / d node is set exactly
        once, parent before child, and is one ``(n,)`` row (or a scalar) however
        many constants lie below: a single sweep gives every column of the
        Jacobian, where forward mode would carry ``(p, n)`` tangents up the tree.
        """
        J = np.empty((self.n_constants, n))
        adj: list = [None] * len(val)
        adj[0] = 1.0
        for kind, i, _, a, b, dl, dr in reversed(self.steps):  # parents first
            g = adj[i]
            if kind == 0:
                J[a] = g
            elif kind == 1:
                adj[a] = -g if dl is _NEG else g * dl(val[a], val[i])
            else:
                if dl is not None:
                    adj[a] = g if dl is _ID else g * dl(val[a], val[b], val[i])
                if dr is not None:
                    if dr is _ID:
                        adj[b] = g
                    elif dr is _NEG:
                        adj[b] = -g
                    else:
                        adj[b] = g * dr(val[a], val[b], val[i])
        return J


def _token_table(library: Library, relaxed: bool = False) -> list:
    """Per token id: (arity, kind, function, d/d left or unary, d/d right, feature, name).

    ``relaxed`` puts the real part of the principal power in place of ``pow``.
    """
    table = []
    for tok in library.tokens:
        dl = dr = None
        if tok.arity == 1:
            dl = _NEG if tok.name == "neg" else _UNARY_D[tok.name]
        elif tok.arity == 2:
            dl, dr = _BINARY_D[tok.name]
            if tok.name == "add":
                dl, dr = _ID, _ID
            elif tok.name == "sub":
                dl, dr = _ID, _NEG
        fn = tok.function
        if relaxed and tok.name == "pow":
            fn, dl, dr = _relaxed_pow, _relaxed_pow_da, _relaxed_pow_db
        table.append((tok.arity, tok.kind, fn, dl, dr, tok.feature, tok.name))
    return table


# --------------------------------------------------------------------------- LM solvers
_STALL = (10, 1e-2)


def _levenberg_marquardt(program: _Program, target: np.ndarray, sqrt_w, c0: np.ndarray,
                         max_nfev: int, xtol: float, ftol: float, floor: float,
                         stall: tuple[int, float] = _STALL):
    """Minimise ½‖√w·(f(c) − y)‖² from ``c0``: (c, cost, f(c)), or None if f(c0) is not finite.

    Marquardt's scaled damping (A + μ·D) δ = −g on the normal equations, with D
    the running maximum of diag(A) (as MINPACK keeps its column norms) and
    Nielsen's update of μ from the gain ratio. The scaled A is diagonalised once
    per accepted step, so a rejected step costs one forward pass and no solve.
    Trial points are evaluated without derivatives; the Jacobian is taken only
    at accepted points. A trial with non-finite output counts as a failed
    step (more damping), so LM can back away from the edge of the domain.
    """
    n = target.shape[0]

    def residual(val):
        r = val[0] - target
        if sqrt_w is not None:
            r = r * sqrt_w
        if r.shape != (n,):
            r = np.broadcast_to(r, (n,))
        return r

    c = np.array(c0, dtype=np.float64)
    val = program.values(c)
    r = residual(val)
    cost = 0.5 * float(r @ r)
    if not np.isfinite(cost):
        return None
    nfev = 1
    history = [cost]  # cost after each forward pass
    window, stall = stall
    mu, nu = 1e-3, 2.0
    D = None
    while cost > floor and nfev < max_nfev:
        T = program.jacobian(val, n)  # (p, n)
        if sqrt_w is not None:
            T *= sqrt_w
        if not np.isfinite(T).all():
            T = np.nan_to_num(T, nan=0.0, posinf=0.0, neginf=0.0)
        A = T @ T.T  # (p, p)
        g = T @ r  # (p,)
        diag = A.diagonal()
        D = diag.copy() if D is None else np.maximum(D, diag)
        s = 1.0 / np.sqrt(np.where(D > 0, D, 1.0))
        gs = g * s
        # Stationary: the Jacobian columns are orthogonal to the residual (MINPACK's gtol).
        if gs @ gs <= 1e-24 * 2.0 * cost:
            break
        if len(g) == 1:  # the common case needs no decomposition
            lam, Q = diag * s * s, _ONE
        else:
            # LAPACK directly: np.linalg.eigh costs 3-5x more on a p x p matrix this small.
            lam, Q, info = dsyevd(A * s[:, None] * s[None, :], lower=1)
            if info != 0:
                break
            lam = np.maximum(lam, 0.0)
        qg = Q.T @ gs
        while True:
            step = -s * (Q @ (qg / (lam + mu)))
            c_new = c + step
            val_new = program.values(c_new)
            nfev += 1
            r_new = residual(val_new)
            cost_new = 0.5 * float(r_new @ r_new)
            if cost_new < cost:  # False for NaN
                predicted = 0.5 * float(step @ (mu * D * step - g))
                rho = (cost - cost_new) / predicted if predicted > 0 else 1.0
                mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
                nu = 2.0
                # Both tests relative (MINPACK's xtol): an absolute floor would stop
                # constants of a tiny-scaled target at round-off of their start.
                converged = (cost - cost_new <= ftol * cost
                             or sqrt(step @ step) <= xtol * sqrt(c @ c))
                c, val, r, cost = c_new, val_new, r_new, cost_new
                history.append(cost)
                # Stalled: less than `stall` relative progress over the last
                # `window` passes. Such fits creep (constants drifting to
                # infinity) and never reach the top of the batch.
                if converged or (nfev > window and cost > (1.0 - stall) * history[-window - 1]):
                    return c, cost, val[0]
                break
            history.append(cost)
            mu *= nu
            nu *= 2.0
            if mu > 1e20 or nfev >= max_nfev:
                return c, cost, val[0]
    return c, cost, val[0]


def _scipy_lm(program: _Program, target, sqrt_w, c0, max_nfev, xtol, ftol, floor, stall=None):
    """The same problem through :func:`scipy.optimize.least_squares` (MINPACK lmder)."""
    from scipy.optimize import least_squares

    n = target.shape[0]
    w = 1.0 if sqrt_w is None else sqrt_w

    def fun(c):
        r = np.broadcast_to((program.values(c)[0] - target) * w, (n,))
        return np.where(np.isfinite(r), r, 1e150)  # MINPACK cannot take NaN

    def jac(c):
        J = program.jacobian(program.values(c), n) * w
        return np.nan_to_num(J.T, nan=0.0, posinf=0.0, neginf=0.0)

    if np.any(fun(c0) == 1e150):
        return None
    res = least_squares(fun, c0, jac=jac, method="lm", xtol=xtol, ftol=ftol, max_nfev=max_nfev)
    if not np.all(np.isfinite(res.x)) or np.any(res.fun == 1e150):
        return None
    return res.x, float(res.cost), program.values(res.x)[0]


_SOLVERS = {"lm": _levenberg_marquardt, "scipy": _scipy_lm}


def _cost(out, target, sqrt_w) -> float:
    """½‖√w·(out − y)‖², not finite where ``out`` is not."""
    r = np.broadcast_to(out - target, target.shape)
    if sqrt_w is not None:
        r = r * sqrt_w
    return 0.5 * float(r @ r)


def _negative_bases(program: _Program, val: list, skip=()) -> list:
    """BFS numbers of the exponents ``c`` of ``pow(base, c)`` whose base is negative somewhere."""
    return [j for base, j in program.exponents
            if j not in skip and np.any(np.asarray(val[base]) < 0)]


def _fit_integer_exponents(tokens, tables, program, columns, target, sqrt_w, c0, solver, args):
    """Fit on the relaxation of ``pow``, round every exponent over a negative base, refit.

    The rounded exponents are then held fixed while LM refits the other
    constants on the true expression; unless that fit is exact, the rounded
    exponents are then moved to neighbouring integers while that lowers the
    cost (:func:`_move_integer_exponents`). Returns (c, cost, f(c)), or None when no
    exponent sits over a negative base at ``c0`` (the ordinary fit covers that
    case) or when the result is not finite.
    """
    # The innermost pow over a negative base sees the same base in the true and the
    # relaxed expression, so the (cheaper) true one tells whether there is any.
    if not _negative_bases(program, program.values(c0)):
        return None
    table, relaxed_table = tables
    relaxed = _Program(tokens, relaxed_table, columns)
    result = solver(relaxed, target, sqrt_w, c0, *args)
    if result is None:
        return None
    c = result[0].copy()
    rounded: dict = {}
    to_round = _negative_bases(relaxed, relaxed.values(c))
    rest = program  # no base negative at the relaxed optimum: there it is the true pow
    # Rounding one exponent can turn another base negative (pow(x, c1) + c2 as a
    # base): round until every exponent over a negative base is an integer.
    while to_round:
        for j in to_round:
            c[j] = rounded[j] = float(np.round(c[j]))
        rest = _Program(tokens, table, columns, fixed=rounded)
        to_round = _negative_bases(program, rest.values(c[rest.free]), skip=rounded)
    result = _refit_around(rest, c, target, sqrt_w, solver, args)
    if result is None:
        return None
    if rounded and result[1] > args[3]:
        try:  # never let the moves cost the rounded fit
            result = _move_integer_exponents(tokens, table, columns, target, sqrt_w, *result,
                                             rounded, solver, args)
        except Exception:
            pass
    return result


def _refit_around(program: _Program, c: np.ndarray, target, sqrt_w, solver, args):
    """``c`` with the free constants of ``program`` refitted from their values in ``c``.

    Returns (c, cost, f(c)), or None when the output is not finite.
    """
    if program.n_constants:
        result = solver(program, target, sqrt_w, c[program.free], *args)
        if result is None:
            return None
        c = c.copy()
        c[program.free], cost, out = result
    else:
        out = program.values(np.zeros(0))[0]
        cost = _cost(out, target, sqrt_w)
    return (c, cost, out) if np.isfinite(cost) else None


_INTEGER_RADIUS, _INTEGER_SWEEPS, _TRIAL_NFEV = 3, 3, 10


def _nearest_integers(value: float, radius: int):
    """value - 1, value + 1, value - 2, ... out to ``radius``, nearest first."""
    for step in range(1, radius + 1):
        yield value - step
        yield value + step


def _move_integer_exponents(tokens, table, columns, target, sqrt_w, c, cost, out, rounded,
                            solver, args):
    """Integer coordinate descent on the exponents that were rounded.

    The relaxation is multimodal: from starts near 1, the exponents of
    x + x**c + x**c + x**c settle as often on (2, 6, 1) as on a permutation
    of (2, 3, 4), and rounding keeps whichever it got. So each rounded exponent
    in turn is moved to the integers within ``_INTEGER_RADIUS`` of it, nearest
    first, with the other constants refitted from where they are; the first
    move that lowers the cost is kept. Sweeps repeat until no move helps, the
    fit is exact, or ``_INTEGER_SWEEPS`` have run. A move's refit gets only
    ``_TRIAL_NFEV`` passes, since the other constants start from their fit to
    the neighbouring exponents (on the Nguyen-2–4 structures this found the
    same exact fits as the full budget, at half the cost); the final exponents
    then get one full refit. Returns (c, cost, f(c)).
    """
    floor = args[3]
    trial_args = (min(args[0], _TRIAL_NFEV),) + tuple(args[1:])
    fixed = dict(rounded)
    moved_any = False
    for _ in range(_INTEGER_SWEEPS):
        moved = False
        for j in rounded:
            for value in _nearest_integers(fixed[j], _INTEGER_RADIUS):
                trial_c = c.copy()
                trial_c[j] = value
                trial = _Program(tokens, table, columns, fixed={**fixed, j: value})
                result = _refit_around(trial, trial_c, target, sqrt_w, solver, trial_args)
                if result is not None and result[1] < cost:
                    c, cost, out = result
                    fixed[j] = value
                    moved = moved_any = True
                    break
            if cost <= floor:
                return c, cost, out
        if not moved:
            break
    if moved_any:  # moves were refitted on a short budget: finish the last one
        final = _Program(tokens, table, columns, fixed=fixed)
        result = _refit_around(final, c, target, sqrt_w, solver, args)
        if result is not None and result[1] < cost:
            c, cost, out = result
    return c, cost, out


def _fit_one(tokens, tables, columns, target, sqrt_w, starts, options):
    """Best constants over the starting points ``starts`` (r, p), or None.

    Returns ``(constants, output)``: the constants in BFS order and the
    expression's output at them on the fitting rows (``(n,)``, or a scalar for a
    variable-free expression), computed on the way, so the caller need not
    evaluate the expression again on those rows. ``tables`` holds the token
    table and its relaxed twin (:func:`_token_table`).

    More fits may follow a start:

    * the first time a start's output is not finite, one from all ones (never
      with ``init="ones"``, where all ones was the first start): a negative
      base under ``pow`` is finite only at an integer exponent, 1 is the one
      integer every init scheme is centred on, and ``log(x + c)`` on
      x ∈ [-1, 1] is defined at c = 1 but not at c = 0.7;
    * from every start, unless a fit from it is already exact, if an exponent
      ``c`` of ``pow`` sits over a negative base there: the fit on the relaxed
      ``pow``, with that exponent then rounded (and moved to a neighbouring
      integer while that helps) and the other constants refitted
      (:func:`_fit_integer_exponents`).

    The lowest cost wins.
    """
    try:
        program = _Program(tokens, tables[0], columns)
        solver = _SOLVERS[options["solver"]]
        args = (options["max_nfev"], options["xtol"], options["ftol"], options["floor"],
                options["stall"])
        best, best_cost, best_out = None, np.inf, None
        tried_ones = not options["fallback_ones"]
        for c0 in starts:
            results = [solver(program, target, sqrt_w, c0, *args)]
            if results[0] is None and not tried_ones:
                tried_ones = True
                results.append(solver(program, target, sqrt_w, np.ones(len(c0)), *args))
            exact = any(r is not None and r[1] <= options["floor"] for r in results)
            if program.exponents and not exact:
                try:  # never let the extra fit cost the ordinary one
                    results.append(_fit_integer_exponents(tokens, tables, program, columns,
                                                          target, sqrt_w, c0, solver, args))
                except Exception:
                    pass
            for result in results:
                if result is None:
                    continue
                c, cost, out = result
                if np.isfinite(cost) and np.all(np.isfinite(c)) and cost < best_cost:
                    best, best_cost, best_out = c, cost, out
            if best_cost <= options["floor"]:
                break  # exact to round-off: no restart can do better
        if best is None:
            return None
        return best, best_out
    except Exception:  # a fit that raises leaves the expression invalid, never the search
        return None


def _fit_many(jobs, library, columns, target, sqrt_w, options, keep_outputs=False):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        tables = (_token_table(library), _token_table(library, relaxed=True))
        results = [_fit_one(t, tables, columns, target, sqrt_w, starts, options)
                   for t, starts in jobs]
        if not keep_outputs:  # don't hold (or ship back from workers) n floats per fit
            results = [None if r is None else (r[0], None) for r in results]
        return results


# --------------------------------------------------------------------------- public
_INITS = ("near_one", "uniform", "ones")
_NO_CONSTANTS = object()


def fit_key(tokens: tuple[int, ...]):
    """The fitter's cache key for BFS token ids, packed into bytes: ~5x smaller than a tuple."""
    try:
        return bytes(tokens)
    except ValueError:  # a library of more than 256 tokens
        return tokens


class ConstantFitter:
    """Fits the constant tokens of expressions to one training set.

    Build one per ``fit`` call of the estimator; call :meth:`fit` on every batch.

    Parameters
    ----------
    X : ndarray of shape (S, n_features)
        Training inputs.
    y : ndarray of shape (S,)
        Training targets.
    sample_weight : ndarray of shape (S,), optional
        Non-negative row weights; residuals are scaled by ``sqrt(w)`` so LM
        minimises the weighted sum of squares.
    const_fit_samples : int, default=1000
        LM sees a random subsample of at most this many rows, drawn once per
        fitter from ``random_state`` (all rows, in order, when ``S`` is smaller).
    random_state : None, int or numpy.random.Generator
        Source of the subsample and of the starting constants.
    n_jobs : int or None, default=None
        ``None``/1: fit in this process (the default, as in scikit-learn).
        Otherwise the uncached expressions are split into ``n_jobs`` chunks for
        :class:`joblib.Parallel`: on an idle 2-core machine two processes fit a
        batch of 1000 about 1.5x faster (``benchmarks/bench_constants.py``),
        but only where nothing else wants the cores. Results do not depend on
        ``n_jobs``.
    init : {"near_one", "uniform", "ones"}, default="near_one"
        Starting constants: Uniform(0.5, 1.5) per constant; Uniform(0, 1) (the
        authors' choice); or all ones (DSO's). When the first start gives
        non-finite output, all ones is tried once more; when an exponent of
        ``pow`` sits over a negative base, it is also fitted as an integer (see
        :func:`_fit_one`).
    n_restarts : int, default=0
        Extra starting points per expression, drawn like ``init`` (Uniform(0.5,
        1.5) for ``"ones"``); the lowest cost wins.
    max_nfev : int, default=100
        Forward passes per LM run (accepted and rejected steps). A start may add
        up to three more runs: from all ones (once per expression), on the
        relaxed ``pow``, and the refit after rounding; then up to 3 sweeps of
        moves of each of the k rounded exponents to the 6 integers within 3,
        each move tried costing a refit of at most 10 passes (so at most
        180·k passes), and one full refit at the end if any move was kept.
    xtol, ftol : float, default=1e-10
        Relative step and relative cost-decrease tolerances.
    solver : {"lm", "scipy"}, default="lm"
        The built-in LM, or MINPACK through :func:`scipy.optimize.least_squares`
        (same Jacobian; slower, kept for cross-checks).

    Attributes
    ----------
    success_ : ndarray of bool
        For the last :meth:`fit` call, parallel to its input: False where the fit
        failed (those expressions have NaN constants, so they evaluate to NaN and
        score ``-inf``). Expressions without constants count as successes:
        there is nothing to fit (whether they are valid is the reward's call).
    rows_ : ndarray of int
        The subsample used for fitting.
    outputs_ : dict
        For the last :meth:`fit` call with ``keep_outputs=True``, the output on
        the rows ``rows_`` (an ``(n,)`` array, or a scalar for a variable-free
        expression) of every expression fitted in that call (cache hits and
        failures excluded), keyed by :func:`fit_key`. LM computes it anyway;
        when ``rows_`` is every row, it is the expression's prediction, so the
        caller need not evaluate it again. Not cached across calls (one array
        per structure would grow without bound).
    n_fitted_ : int
        Number of distinct structures fitted so far (cache misses).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        const_fit_samples: int = 1000,
        random_state: int | np.random.Generator | None = None,
        n_jobs: int | None = None,
        init: str = "near_one",
        n_restarts: int = 0,
        max_nfev: int = 100,
        xtol: float = 1e-10,
        ftol: float = 1e-10,
        solver: str = "lm",
    ) -> None:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X of shape {X.shape} and y of shape {y.shape} do not match.")
        if init not in _INITS:
            raise ValueError(f"init must be one of {_INITS}, got {init!r}.")
        if solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {tuple(_SOLVERS)}, got {solver!r}.")
        if int(const_fit_samples) < 1:
            raise ValueError(f"const_fit_samples must be >= 1, got {const_fit_samples}.")
        if int(max_nfev) < 1 or int(n_restarts) < 0:
            raise ValueError("max_nfev must be >= 1 and n_restarts >= 0.")
        self.rng = (random_state if isinstance(random_state, np.random.Generator)
                    else np.random.default_rng(random_state))
        S = X.shape[0]
        if S > const_fit_samples:
            rows = np.sort(self.rng.choice(S, size=int(const_fit_samples), replace=False))
        else:
            rows = np.arange(S)
        self.rows_ = rows
        self.columns = [np.ascontiguousarray(X[rows, j]) for j in range(X.shape[1])]
        self.target = np.ascontiguousarray(y[rows])
        if sample_weight is None:
            self.sqrt_w = None
        else:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape != y.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
                raise ValueError("sample_weight must be finite, non-negative and one per row.")
            self.sqrt_w = np.sqrt(w[rows])
        # Stop once the residual is at float64 round-off of the targets, RMS below
        # 64·eps·rms(y): further steps only chase noise. (The BIC reward treats
        # everything below 1024·eps·rms(y) as exact, see rewards.py.)
        wy = self.target if self.sqrt_w is None else self.target * self.sqrt_w
        scale2 = float(np.mean(wy * wy)) if len(wy) else 0.0
        floor = 0.5 * len(wy) * (64 * np.finfo(float).eps) ** 2 * scale2
        self.options = dict(solver=solver, max_nfev=int(max_nfev), xtol=float(xtol),
                            ftol=float(ftol), floor=floor, fallback_ones=init != "ones",
                            stall=_STALL)
        self.n_jobs = n_jobs
        self.init = init
        self.n_restarts = int(n_restarts)
        self.cache: dict = {}  # key -> fitted constants (BFS order), or None if the fit failed
        self.success_ = np.zeros(0, dtype=bool)
        self.outputs_: dict = {}
        self.n_fitted_ = 0

    def _starts(self, p: int) -> np.ndarray:
        """Starting constants (1 + n_restarts, p), BFS order."""
        if self.init == "ones":
            first = np.ones((1, p))
        elif self.init == "uniform":
            first = self.rng.random((1, p))
        else:
            first = self.rng.uniform(0.5, 1.5, (1, p))
        if not self.n_restarts:
            return first
        lo, hi = (0.0, 1.0) if self.init == "uniform" else (0.5, 1.5)
        return np.vstack([first, self.rng.uniform(lo, hi, (self.n_restarts, p))])

    def fit(self, expressions: Sequence[Expression], keep_outputs: bool = False,
            warm_start: bool = False) -> list[Expression]:
        """Expressions with fitted constants, parallel to ``expressions``.

        Expressions without constant tokens are returned as they are. A failed
        fit gives NaN constants and a False in :attr:`success_`. With
        ``keep_outputs``, :attr:`outputs_` holds the fitted expressions' outputs
        on the rows ``rows_``. With ``warm_start``, every structure is fitted
        afresh, first from the constants the expression holds (1 in place of a
        non-finite one; of a structure given twice, the first copy's), then
        from the usual starting points, and the cache is neither read nor
        written: for edits of a fitted formula, whose other constants are
        already right.
        """
        expressions = list(expressions)
        keys = [fit_key(e.tokens) for e in expressions]
        cache = {} if warm_start else self.cache
        todo: dict = {}
        for e, key in zip(expressions, keys):
            if key not in cache and key not in todo and e.n_constants:
                # Starting points are drawn here, in input order, so results do
                # not depend on how the work is split across processes.
                starts = self._starts(e.n_constants)
                if warm_start:  # a non-finite value held is started at 1
                    held = np.where(np.isfinite(e.constants), e.constants, 1.0)
                    starts = np.vstack([held, starts])
                todo[key] = (e.tokens, starts)
        self.outputs_ = {}
        if todo:
            jobs = list(todo.values())
            results = self._run(jobs, expressions[0].library, keep_outputs)
            for key, result in zip(todo, results):
                if result is None:
                    cache[key] = None
                else:
                    cache[key], output = result
                    if keep_outputs:
                        self.outputs_[key] = output
            self.n_fitted_ += len(jobs)

        out, success = [], np.ones(len(expressions), dtype=bool)
        for j, (e, key) in enumerate(zip(expressions, keys)):
            c = cache.get(key, _NO_CONSTANTS)
            if c is _NO_CONSTANTS:
                out.append(e)
            elif c is None:
                success[j] = False
                out.append(e.with_constants(np.full(e.n_constants, np.nan)))
            else:
                out.append(e.with_constants(c.copy()))  # the cache keeps its own copy
        self.success_ = success
        return out

    def _run(self, jobs, library, keep_outputs):
        n_jobs = self.n_jobs
        if n_jobs is not None and n_jobs != 1 and len(jobs) > 1:
            from joblib import Parallel, delayed, effective_n_jobs

            k = max(1, min(effective_n_jobs(n_jobs), len(jobs)))
            chunks = [jobs[i::k] for i in range(k)]
            parts = Parallel(n_jobs=k)(
                delayed(_fit_many)(chunk, library, self.columns, self.target, self.sqrt_w,
                                   self.options, keep_outputs)
                for chunk in chunks
            )
            results: list = [None] * len(jobs)
            for i, part in enumerate(parts):
                results[i::k] = part
            return results
        return _fit_many(jobs, library, self.columns, self.target, self.sqrt_w, self.options,
                         keep_outputs)
