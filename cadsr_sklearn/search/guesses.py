"""The user's hypotheses: formulas a person writes, scored as the search scores its own.

``CADSRRegressor(guesses=["1.5*m*v**2", …])`` starts the search from what its
user already believes. Each guess is read as a tree of the search's token
library (:mod:`cadsr_sklearn.expressions.formula_parser`), checked against what the
sampler could write itself (length and hard constraints: the replay buffer is
re-scored by teacher forcing through the sampler, which accepts no other tree),
its constants fitted from the values written, and scored with the same reward
and criterion as every sampled formula (:func:`seed_search`). It then joins
the replay buffer, so that the policy is trained towards it from the first
update, the hall of fame, and τ* when the criterion ranks it highest: a
search can only end with something the criterion ranks at least as high as
the best guess.

Each guess is reported as a :class:`~cadsr_sklearn.front.rows.GuessRow`
(:func:`guess_rows`, the estimator's ``guesses_``): the front's record of it,
with the text as written, so that the discovered law can be compared with the
user's on the criterion that chose it (:func:`~.rows.verdict`). :func:`formula_row`
scores one formula on other data in the same way (the estimator's ``score_formula``).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from ..sampling.constraints import Constraints
from ..expressions.expression import Expression
from ..expressions.formula_parser import formula_text, parse_formula
from ..front.rows import GuessRow, front_row
from ..scoring.scorer import Candidate, Scorer
from .build import Search, build_library, build_scoring
from .proposers import GUESS
from ..settings import SearchSettings

__all__ = ["guess_expressions", "rejection", "seed_search", "seed_formulas", "guess_rows",
           "formula_row"]


def guess_expressions(guesses: Sequence | None, names: Sequence[str],
                      constraints: Constraints) -> list[Expression]:
    """Each guess as a tree of ``constraints.library``, its constants at the values written.

    Raises ValueError, saying which guess and why, for one the library cannot
    write or the sampler could not have sampled.
    """
    expressions = []
    for guess, label in zip(guesses or (), _labels(guesses)):
        expression = parsed(guess, names, constraints.library, label)
        if constraints.units is not None:
            check = constraints.units.check(expression)
            if not check.consistent:
                raise ValueError(f"{label} is not dimensionally consistent with X_units and "
                                 f"y_units: {check.reason}.")
        if not constraints.admits([expression.tokens])[0]:
            raise ValueError(f"{label} cannot seed the search: "
                             f"{rejection(constraints, expression)} The search learns only from "
                             "formulas its sampler could write.")
        expressions.append(expression)
    return expressions


def parsed(formula, names: Sequence[str], library, label: str) -> Expression:
    """:func:`~.formula_parser.parse_formula`, its error naming ``label``."""
    try:
        return parse_formula(formula, names, library)
    except ValueError as err:
        raise ValueError(f"{label}: {err}") from None


def rejection(constraints: Constraints, expression: Expression) -> str:
    """Why the sampler could not write ``expression``: the first node a rule bans, and the
    rule (the first line of its docstring)."""
    library = constraints.library
    if len(expression) > constraints.max_length:
        return (f"its tree has {len(expression)} nodes, more than max_length="
                f"{constraints.max_length}.")
    tokens = torch.tensor([expression.tokens])
    for step in constraints.force(tokens, torch.tensor([len(expression)])):
        if not bool(step.allowed[0]):
            token = int(step.token[0])
            rule = next((r for r in constraints.rules
                         if _bans(r, constraints, step.state, token)), None)
            why = "" if rule is None else f" ({_rule_text(rule)})"
            return (f"node {step.t} of its tree (breadth-first order), "
                    f"{library.names[token]!r}, breaks the sampler's rule "
                    f"{getattr(rule, '__name__', '?')}{why}.")
    return "the sampler's constraints ban it."


def _bans(rule, constraints: Constraints, state, token: int) -> bool:
    allowed = torch.ones(1, len(constraints.library), dtype=torch.bool)
    rule(constraints, state, allowed)
    return not bool(allowed[0, token])


def _rule_text(rule) -> str:
    line = (rule.__doc__ or "").strip().splitlines()
    return line[0].replace("``", "").rstrip(".") if line else ""


def scored(scorer: Scorer, expressions: list[Expression], labels: list[str]) -> list[Candidate]:
    """The candidates of ``expressions``, each fitted on all the fitter's rows from the
    constants written, scored once (then cached: the search never refits them);
    ValueError for one not finite on the training rows, or one the criterion rejects."""
    candidates = scorer.score_given(expressions)
    for label, candidate in zip(labels, candidates):
        if not math.isfinite(candidate.loss):
            raise ValueError(f"{label} is not finite on every training row at any constants "
                             "the fit found (a log or square root of a negative number, a "
                             "division by zero?).")
        if not math.isfinite(candidate.criterion):
            raise ValueError(f"{label} fits the training rows, but the criterion rejects it: "
                             "it has no residual degree of freedom (as many fitted constants "
                             "as rows), or a sine, cosine or tangent whose argument spans "
                             "more periods than half the rows (below the Nyquist rate, the "
                             "rows cannot tell its period).")
    return candidates


def seed_search(search: Search, guesses: Sequence | None, names: Sequence[str]) -> None:
    """Put the guesses, scored, in a new ``search``'s replay buffer and hall of fame,
    and the best of them as τ* (see the module's docstring)."""
    expressions = guess_expressions(guesses, names, search.sampler.constraints)
    if not expressions:
        return
    _seed(search, scored(search.scorer, expressions, _labels(guesses)), GUESS)


def seed_formulas(search: Search, expressions: list[Expression], origin: str,
                  evaluations: int = 0) -> int:
    """Put formulas another search wrote in ``search`` as guesses are put (see
    :func:`seed_search`), scored by its scorer, ``origin`` named as their proposer. Those
    not finite on its rows, not dimensionally consistent or without a required feature
    are left out, and only those the sampler could write join the replay buffer
    (teacher forcing replays them through the sampler). The formulas scored, and the
    ``evaluations`` it took to write them, count in ``n_evaluations``; returns how many
    were scored."""
    constraints, units = search.sampler.constraints, search.units
    required = {int(constraints.library.variable_ids[i]) for i in constraints.required_features}
    expressions = [e for e in expressions if (units is None or units.consistent(e))
                   and required <= set(e.tokens)]
    search.state.n_evaluations += evaluations + len(expressions)
    if not expressions:
        return 0
    candidates = [c for c in search.scorer.score_given(expressions)
                  if math.isfinite(c.loss) and math.isfinite(c.criterion)]
    writable = constraints.admits([c.expression.tokens for c in candidates]) if candidates else []
    _seed(search, candidates, origin, replay=[c for c, ok in zip(candidates, writable) if ok])
    return len(expressions)


def _seed(search: Search, candidates: list[Candidate], origin: str,
          replay: list[Candidate] | None = None) -> None:
    """The candidates in the hall of fame, the best of them as τ* where it beats it, and
    those of ``replay`` (by default all) in the replay buffer, best rewards first."""
    for candidate in candidates:
        candidate.origin = candidate.origin or origin
    state = search.state
    replay = candidates if replay is None else replay
    ranked = sorted((c for c in replay if math.isfinite(c.reward)), key=lambda c: -c.reward)
    unique = list({c.expression.key: c for c in state.replay + ranked}.values())
    unique.sort(key=lambda c: -c.reward)
    state.replay = unique[:search.config.n_top]  # as the loop keeps it: the best rewards
    state.hall_of_fame.update(candidates)
    if candidates:
        best = max(candidates, key=lambda c: c.criterion)
        if state.best is None or best.criterion > state.best.criterion:
            state.best = best


def guess_rows(search: Search, guesses: Sequence | None, names: Sequence[str], X: np.ndarray,
               y: np.ndarray, sample_weight: np.ndarray | None,
               simplify: bool) -> list[GuessRow]:
    """The guesses as ``search`` scores them on ``(X, y)``, one row each: the fits of its
    final scorer, on all rows (those of :func:`seed_search`, unless the search scores a
    batch of rows; for a search continued on new data, fits there)."""
    labels = _labels(guesses)
    expressions = [parsed(g, names, search.library, label)
                   for g, label in zip(guesses or (), labels)]
    candidates = scored(search.final_scorer, expressions, labels) if expressions else []
    return [GuessRow.of(front_row(c, X, y, sample_weight, list(names), simplify=simplify,
                                  y_variance=search.y_variance),
                      formula_text(g))
            for g, c in zip(guesses or (), candidates)]


def formula_row(formula, settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                sample_weight: np.ndarray | None, names: Sequence[str],
                numpy_seed: int) -> GuessRow:
    """``formula`` fitted and scored on ``(X, y)`` as a search with ``settings`` would
    score it, its constant fitter seeded with ``numpy_seed``. No sampler constraint
    applies: nothing is sampled."""
    scoring = build_scoring(settings, X, y, sample_weight, numpy_seed)
    label = f"The formula {formula_text(formula)!r}"
    expression = parsed(formula, names, build_library(settings.library, X.shape[1]), label)
    [candidate] = scored(scoring.final_scorer, [expression], [label])
    return GuessRow.of(front_row(candidate, X, y, sample_weight, list(names),
                                 simplify=settings.report.simplify,
                                 y_variance=scoring.y_variance),
                      formula_text(formula))


def _labels(guesses: Sequence | None) -> list[str]:
    return [f"guesses[{i}] = {formula_text(g)!r}" for i, g in enumerate(guesses or ())]
