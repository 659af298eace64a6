"""The simplest formulas, scored beside the search's own: an answer never worse than a line.

A search of a few hundred formulas can miss even a straight line, and a user
with a tiny budget would then get a formula that predicts worse than the mean.
So before the answer is chosen, the affine ``y = a·x_j + b`` in each feature j
and the constant ``y = c`` are
fitted and scored as every sampled formula is (same constant fit, reward and
criterion), and join the hall of fame; one that the criterion ranks above τ*
takes its place
(:func:`add_baselines`). τ* is therefore never ranked below the best of them,
and the front holds each of them or a formula at its complexity that the
criterion prefers.

Only formulas the sampler could write are added: a library without the
constant token, or without ``add`` and ``mul``, writes no affine formula, and
``required_features``, ``max_constants`` and the other sampler constraints
apply as they do to sampled formulas, but for the rule against constant-only
subtrees, which spares the sampler draws a constant fit absorbs and would bar
``y = c`` itself (a search on eight rows then answered ``sqrt(t)``, which its
own criterion ranks below the constant, with a training R² of −1.7); with
physical units the affine formula in a feature of other units than the target's
is rejected by the units check.
They are scored after the loop, not before, so that the search itself (its
samples, fits and policy updates) is the same with and without them.

``y = c`` is the answer every other must beat: a formula that fits its
training rows worse than their mean is ranked below it by the criterion unless
it is cheaper to write than one fitted constant. Its fitted mean is snapped to
a simple number only where the data resolve that number
(:mod:`cadsr_sklearn.search.refinement.snapping`).
"""

from __future__ import annotations

import math

import sympy

from ...sampling.constraints import Constraints
from ...expressions.expression import Expression
from ...expressions.formula_parser import parse_formula
from ...expressions.library import Library
from ...scoring.scorer import Candidate, HallOfFame, Scorer

__all__ = ["baseline_expressions", "add_baselines"]

# Where the baselines' constants start: LM fits a formula linear in its constants
# from anywhere; neither is an exact 1, which the parser would write as the literal 1.
_SLOPE_START, _INTERCEPT_START = 2.0, 0.5


def baseline_expressions(library: Library) -> list[Expression]:
    """``c`` and ``c·x_j + c`` for every feature j, as trees of ``library`` (those it can write)."""
    if library.const_id is None:
        return []
    names = [f"x{j}" for j in range(library.n_features)]
    formulas = [sympy.Float(_INTERCEPT_START)] + [
        sympy.Float(_SLOPE_START) * sympy.Symbol(name) + sympy.Float(_INTERCEPT_START)
        for name in names]
    expressions = []
    for formula in formulas:
        try:
            expressions.append(parse_formula(formula, names, library))
        except ValueError:  # an operator the library lacks
            continue
    return expressions


def add_baselines(best: Candidate | None, hall_of_fame: HallOfFame, scorer: Scorer,
                  constraints: Constraints) -> Candidate | None:
    """Score the baselines the sampler's ``constraints`` admit, add them to ``hall_of_fame``,
    and return τ*: ``best``, or the baseline the criterion ranks highest where it ranks above
    it.

    Their constants are fitted from the same start only (no random restarts), on all the
    fitter's rows: the fits draw nothing from the fitter's random state, so whatever is
    fitted after them (pruning, snapping) is fitted as it would be without them.
    """
    expressions = baseline_expressions(constraints.library)
    if expressions:
        allowed = constraints.admits([e.tokens for e in expressions], as_answers=True)
        expressions = [e for e, ok in zip(expressions, allowed) if ok]
    if not expressions:
        return best
    candidates = scorer.refit(expressions, fresh_starts=False)
    hall_of_fame.update(candidates)
    finite = [c for c in candidates if math.isfinite(c.criterion)]  # (units can reject them)
    leader = max(finite, key=lambda c: c.criterion, default=None)
    if leader is not None and (best is None or leader.criterion > best.criterion):
        return leader
    return best
