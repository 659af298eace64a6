"""Snapping fitted constants to simple numbers, judged by the criterion.

On noisy data Levenberg–Marquardt fits the noise too: the search finds the law's
form with constants a little off, ``x1*x3/(x2*(x0 - 0.99647))`` for
``x1*x3/(x2*(x0 - 1))``, ``x0**2.00065`` for ``x0**2``. After the search, each
fitted constant of τ* (and of the other formulas users choose from) is tried as
0 and as the simple numbers near it (:func:`cadsr_sklearn.expressions.simple_numbers.nearby`:
p/q, 2π, 4π², √2…, within ``rtol`` of it, shortest code first; an exponent of
``pow`` only as a fraction, for laws raise to rational powers), held there as a
*fixed literal* while the other constants are refitted, and the replacement is
kept when the criterion that judges the answer rises (:mod:`cadsr_sklearn.scoring.scorer`).
0 drops a constant the data cannot tell from zero: the description length
charges a fitted constant for its reach whatever its value, so a ``+ 0.0015``
the noise put next to a law costs more than the fit it buys, and the term goes
from the formula shown.

How a literal is counted: it stays a node of the tree, but it is no longer a
parameter the data were fitted with. The description length (the default
criterion) charges it its codelength (ln|p| + ln q, more for π and e; see
:func:`cadsr_sklearn.expressions.simple_numbers.codelength`) instead of the precision the
fitted constant needed, so 1/2 is cheap and 79/2 is not. The BIC's ``k``
(nodes + fitted constants) falls by one: its penalty counts the parameters
estimated from the data, and a literal is not estimated, so any literal is
free there. Either way a replacement must also pass ``S·log(MSE′/MSE) < log
S`` (σ² the model's MSE; S rows): with S = 2000 rows the fit may get 0.38 %
worse. A constant the data pin down (0.426 with little noise) stays; one the
noise cannot tell from 1 becomes 1.

Constants are snapped one at a time, greedily and deterministically:

1. For each fitted constant, every simple number near it, with the others
   refitted from where they are (one Levenberg–Marquardt run each, no random
   restart), is scored; the constant's snap is the *simplest* number that raises
   the criterion (0 first, then by codelength; the nearer at equal codelength).
   The BIC cannot prefer 1 to 11/12 when both fit within the noise; a reader
   can.
2. The constant whose snap raises the criterion most is fixed; repeat with the
   others until none can be.

A round scores a few trials per constant, so snapping a formula with P fitted
constants costs at most about 5·P²/2 fits: well under an epoch.
"""

from __future__ import annotations

import math
import time
from typing import Callable

from ...expressions.expression import Expression
from ...scoring.scorer import Candidate
from ...expressions.simple_numbers import nearby

__all__ = ["snap", "SNAP_WINDOW"]

SNAP_WINDOW = 0.05
"""Simple numbers within this relative distance of a fitted constant are tried."""


def snap(
    best: Candidate,
    score: Callable[[list[Expression]], list[Candidate]],
    max_loss: float = math.inf,
    deadline: float | None = None,
    rtol: float = SNAP_WINDOW,
    n_samples: float | None = None,
) -> Candidate:
    """Fix the constants of ``best`` to simple numbers while that raises the criterion.

    Parameters
    ----------
    best : Candidate
        A scored formula, with ``expression``, ``criterion`` and ``loss``.
    score : callable
        Maps a list of expressions to candidates, fitting each one's free
        constants from the values it holds (the search's
        ``Scorer.refit(..., fresh_starts=False)``).
    max_loss : float, default=inf
        Snaps whose training loss exceeds this are not taken (after an exact
        fit, a snap must keep it exact).
    deadline : float, optional
        :func:`time.perf_counter` time after which no new round starts (the first
        always runs).
    rtol : float, default=SNAP_WINDOW
        Relative distance within which simple numbers are tried.
    n_samples : float, optional
        Observations the loss is measured on (S: the rows, or the sum of their
        frequency weights). When given (and no finite
        ``max_loss`` applies), a snap must also pass the profile-likelihood BIC
        test, ``S·log(MSE′/MSE) < log S``, whatever the criterion: with the BIC's
        ``bic_variance="target"`` the BIC alone would let each snap raise
        the MSE by up to 2·log(S)/S of Var(y), so a constant the data pin down
        could be snapped.

    Returns
    -------
    Candidate
        ``best`` itself when nothing can be snapped, else the snapped formula.
    """
    current, first = best, True
    while first or deadline is None or time.perf_counter() < deadline:
        first = False
        # the loss a snap may reach: after an exact fit, staying exact; else the BIC test
        ceiling = max_loss
        if n_samples and not math.isfinite(max_loss):
            ceiling = current.loss * math.exp(math.log(n_samples) / n_samples)
        leader = _best_snap(current, score, ceiling, rtol)
        if leader is None:
            return current
        current = leader
    return current


def _best_snap(current: Candidate, score, max_loss: float, rtol: float) -> Candidate | None:
    """The candidate one snap away from ``current`` with the highest criterion, or None."""
    expression = current.expression
    trials, owners = [], []
    exponents = _exponents(expression)
    for k in range(expression.n_constants):
        if expression.fixed[k]:
            continue
        numbers = nearby(float(expression.constants[k]), rtol)
        if k in exponents:  # laws raise to rational powers: no x**(1/pi), no x**sqrt(3)
            numbers = [n for n in numbers if n.symbol.is_Rational]
        # 0 first: a constant the data cannot tell from zero is dropped, not kept for free
        for value in (0.0, *(n.value for n in numbers)):
            trials.append(expression.with_literal(k, value))
            owners.append(k)
    leader, snapped = None, set()
    # Trials are in order of simplicity within each constant: the first that raises
    # the criterion is that constant's snap.
    for k, cand in zip(owners, score(trials) if trials else []):
        if k in snapped or not (cand.loss <= max_loss and cand.criterion > current.criterion):
            continue
        snapped.add(k)
        if leader is None or cand.criterion > leader.criterion:
            leader = cand
    return leader


def _exponents(expression: Expression) -> set[int]:
    """The constants (by BFS index among the constants) that are the exponent of a ``pow``."""
    library, tokens = expression.library, expression.tokens
    const_id = library.const_id
    constant_index = {i: k for k, i in enumerate(i for i, t in enumerate(tokens) if t == const_id)}
    return {constant_index[expression.children(i)[1]] for i, t in enumerate(tokens)
            if library.names[t] == "pow" and tokens[expression.children(i)[1]] == const_id}
