"""Snapping fitted constants to simple numbers the data resolve, judged by the criterion.

On noisy data Levenberg–Marquardt fits the noise too: the search finds the law's
form with constants a little off, ``x1*x3/(x2*(x0 - 0.99647))`` for
``x1*x3/(x2*(x0 - 1))``, ``x0**2.00065`` for ``x0**2``. After the search, each
fitted constant of τ* (and of the other formulas users choose from) is tried as
0 and as the simple numbers the data *resolve* near it, held there as a *fixed
literal* while the other constants are refitted, and the replacement is kept
when the criterion that judges the answer rises (:mod:`cadsr_sklearn.scoring.scorer`).

Which numbers are tried: those within a few standard errors σ of the fitted
value θ̂ (σ from the formula's own Jacobian on the rows its constants were
fitted on, :func:`cadsr_sklearn.front.uncertainty.constant_uncertainty`) that
:func:`cadsr_sklearn.expressions.simple_numbers.resolves`: every *rival* (any
other simple number no more than ln 2 longer to write) is rejected by the data,
a likelihood ratio of e^4.5 (three standard errors) against it. Integers and
halves are far apart; elevenths are not: on sixteen noisy rows, 0.4545 ± 0.02
is no 5/11. The same rule works both ways: a constant pinned down to the last
digit, ``sin(y + 3.66519142918809)``, is 7π/6, since no rival lies within
round-off of it. A constant the data do not pin down (no residual degree of
freedom, or one that only acts with another) resolves nothing. An exponent of
``pow`` is tried only as a fraction: laws raise to rational powers.

0 is always tried, first: it is no claim about a number but the removal of a
term, a choice between two formulas that the criterion makes. The description
length charges a fitted constant for its reach whatever its value, so a
``+ 0.0015`` the noise put next to a law costs more than the fit it buys, and
the term goes from the formula shown.

How a literal is counted: it stays a node of the tree, but it is no longer a
parameter the data were fitted with. The description length (the default
criterion) charges it its codelength (ln|p| + ln q, more for π and e; see
:func:`cadsr_sklearn.expressions.simple_numbers.codelength`) instead of the precision the
fitted constant needed, so 1/2 is cheap and 79/2 is not. That codelength is
honest only because the rule above admitted the literal: it names the one
number of its length the data single out, not the nearest of several they
cannot tell apart. The BIC's ``k``
(nodes + fitted constants) falls by one: its penalty counts the parameters
estimated from the data, and a literal is not estimated, so any literal is
free there. Either way a replacement must also pass ``S·log(MSE′/MSE) < log
S`` (σ² the model's MSE; S rows): with S = 2000 rows the fit may get 0.38 %
worse.

Constants are snapped one at a time, greedily and deterministically:

1. For each fitted constant, every resolved simple number near it, with the
   others refitted from where they are (one Levenberg–Marquardt run each, no
   random restart), is scored; the constant's snap is the *simplest* number
   that raises the criterion (0 first, then by codelength; the nearer at equal
   codelength).
2. The constant whose snap raises the criterion most is fixed; the standard
   errors of the others are taken again, and the rounds repeat until no
   constant can be snapped.

For every snapped number, ``constants_``, the summary and ``cadsr show`` give the
value and standard error it was fitted with and the gap to its nearest rival
that the standard error was judged against
(:mod:`cadsr_sklearn.front.shown_constants`).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ...expressions.expression import Expression
from ...scoring.scorer import Candidate
from ...expressions.simple_numbers import SNAP_RTOL, candidates

__all__ = ["snap", "SNAP_WINDOW", "MAX_TRIALS"]

SNAP_WINDOW = 4.0
"""Simple numbers within this many standard errors of a fitted constant are tried (a snap
farther away fails the BIC test below on any table of up to 8·10⁶ rows)."""

MAX_TRIALS = 8
"""At most this many resolved numbers are tried per constant and round, shortest first."""


def snap(
    best: Candidate,
    score: Callable[[list[Expression]], list[Candidate]],
    standard_errors: Callable[[Expression], np.ndarray],
    max_loss: float = math.inf,
    deadline: float | None = None,
    n_samples: float | None = None,
) -> Candidate:
    """Fix the constants of ``best`` to simple numbers the data resolve while that raises
    the criterion.

    Parameters
    ----------
    best : Candidate
        A scored formula, with ``expression``, ``criterion`` and ``loss``.
    score : callable
        Maps a list of expressions to candidates, fitting each one's free
        constants from the values it holds (the search's
        ``Scorer.refit(..., fresh_starts=False)``).
    standard_errors : callable
        Maps an expression to the standard error of each of its constants (BFS
        order; NaN or inf where the data do not pin one down), on the rows
        ``score`` fits on.
    max_loss : float, default=inf
        Snaps whose training loss exceeds this are not taken (after an exact
        fit, a snap must keep it exact).
    deadline : float, optional
        :func:`time.perf_counter` time after which no new round starts (the first
        always runs).
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
        leader = _best_snap(current, score, standard_errors(current.expression), ceiling)
        if leader is None:
            return current
        current = leader
    return current


def _best_snap(current: Candidate, score, errors: np.ndarray,
               max_loss: float) -> Candidate | None:
    """The candidate one snap away from ``current`` with the highest criterion, or None."""
    expression = current.expression
    trials, owners = [], []
    exponents = _exponents(expression)
    for k in range(expression.n_constants):
        if expression.fixed[k]:
            continue
        # 0 first: a constant the data cannot tell from zero is dropped, not kept for free
        for value in (0.0, *_resolved(float(expression.constants[k]), float(errors[k]),
                                      rational=k in exponents)):
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


def _resolved(value: float, standard_error: float, rational: bool) -> list[float]:
    """The simple numbers near ``value`` ± ``standard_error`` that the data resolve, shortest
    first; only fractions where ``rational`` (laws raise to rational powers: no x**(1/pi))."""
    if not math.isfinite(standard_error):
        return []
    # round-off is the least a float64 fit is off by, however small the residuals
    error = max(standard_error, SNAP_RTOL * max(1.0, abs(value)))
    numbers = candidates(value, SNAP_WINDOW * error, error)
    if rational:
        numbers = [n for n in numbers if n.symbol.is_Rational]
    return [n.value for n in numbers[:MAX_TRIALS]]


def _exponents(expression: Expression) -> set[int]:
    """The constants (by BFS index among the constants) that are the exponent of a ``pow``."""
    library, tokens = expression.library, expression.tokens
    const_id = library.const_id
    constant_index = {i: k for k, i in enumerate(i for i, t in enumerate(tokens) if t == const_id)}
    return {constant_index[expression.children(i)[1]] for i, t in enumerate(tokens)
            if library.names[t] == "pow" and tokens[expression.children(i)[1]] == const_id}
