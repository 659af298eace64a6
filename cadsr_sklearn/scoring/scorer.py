"""Scored candidates: what the search, pruning and snapping share.

A :class:`Candidate` is an expression with its fitted constants, its reward
R(τ), its *criterion* and its training loss. The reward ranks a batch for the
policy update (the paper's BIC by default); the criterion judges the answer —
τ*, the hall of fame, pruning and snapping — and is by default the description
length, which stays right on small tables where the BIC is not (see
:mod:`cadsr_sklearn.scoring.rewards`); without one it is the reward. The
:class:`Scorer` makes candidates: it fits the constants of each sampled
expression (Levenberg–Marquardt, :mod:`cadsr_sklearn.scoring.constant_fitter`), evaluates it
on the training rows and scores it, caching by key, so that an expression
sampled again costs nothing. The :class:`HallOfFame` keeps the best candidate
at each complexity by the criterion; its Pareto front is what users choose from.

The epoch loop (:mod:`cadsr_sklearn.search.training`) scores each batch with a
:class:`Scorer`; pruning (:mod:`cadsr_sklearn.search.refinement.pruning`) and snapping
(:mod:`cadsr_sklearn.search.refinement.snapping`) score their edits of τ* with its
:meth:`Scorer.refit`. This module imports none of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .constant_fitter import ConstantFitter, fit_key
from .rewards import Reward
from ..units.rule import UnitsRule
from ..expressions.expression import Expression, evaluate_many

__all__ = ["Candidate", "HallOfFame", "Scorer", "MIN_RESIDUAL_DOF", "ROWS_PER_CONSTANT",
           "AUTO_MAX_CONSTANTS", "constant_cap", "fittable_constants"]

#: Rows a formula must have beyond its fitted constants. With fewer, it passes through the
#: data whatever the law (an interpolant): no fit of it is evidence, and none is exact.
MIN_RESIDUAL_DOF = 2

#: Rows per fitted constant that ``max_constants="auto"`` keeps, and below which ``fit``
#: warns that an explicit ``max_constants`` is large for the table.
ROWS_PER_CONSTANT = 3

#: The most constants ``max_constants="auto"`` allows, however many the rows.
AUTO_MAX_CONSTANTS = 10


def fittable_constants(max_constants: int | str, n_rows: float) -> int:
    """The constant tokens a sampled formula may hold.

    ``max_constants`` is the user's cap; ``"auto"`` is two (a line, a power law), one per
    :data:`ROWS_PER_CONSTANT` rows beyond that, and at most :data:`AUTO_MAX_CONSTANTS`:
    so that six rows are searched with two constants, the most they can pin. Whatever
    the cap, a formula holds at most ``n_rows − MIN_RESIDUAL_DOF`` constants, so that it
    leaves residual degrees of freedom.

    ``n_rows`` is S, the number of observations (with frequency weights their sum, which
    need not be whole)."""
    return max(0, min(constant_cap(max_constants, n_rows), _whole(n_rows) - MIN_RESIDUAL_DOF))


def constant_cap(max_constants: int | str, n_rows: float) -> int:
    """``max_constants`` as a number: ``"auto"`` resolved for S = ``n_rows``, before the
    residual degrees of freedom of :func:`fittable_constants` are kept."""
    if max_constants == "auto":
        return min(AUTO_MAX_CONSTANTS, max(2, _whole(n_rows) // ROWS_PER_CONSTANT))
    return max_constants


def _whole(n_rows: float) -> int:
    return math.floor(n_rows * (1 + 1e-12))  # weights that sum to 6 to round-off count 6


@dataclass
class Candidate:
    """A scored expression."""

    expression: Expression
    reward: float  # R(τ), what the policy update ranks
    loss: float  # training mean squared error
    criterion: float | None = None  # what judges the answer; the reward when None
    screened: bool = False  # constants fitted on the Scorer's screening rows only
    #: Not dimensionally consistent: rejected (reward −∞) before its constants were fitted.
    rejected_for_units: bool = False
    #: The proposer that first wrote it (:mod:`cadsr_sklearn.search.proposers`); None
    #: until the search hands it to one.
    origin: str | None = None
    #: The rows of the training table its constants were fitted on (least squares on
    #: them), where their uncertainty is judged; None: every row. Carried by the
    #: candidate, not asked of a scorer, because the answer can hold fits of two scorers
    #: (the loop's on a batch or subsample, the answer's on every row).
    fitted_rows: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.criterion is None:
            self.criterion = self.reward

    @property
    def complexity(self) -> int:
        return self.expression.complexity

    def is_exact(self, exact_loss: float, n_rows: float) -> bool:
        """Whether it fits ``n_rows`` rows exactly: a training loss at most ``exact_loss``
        with at least :data:`MIN_RESIDUAL_DOF` rows to spare beyond its fitted constants."""
        return self.loss <= exact_loss and n_rows - self.expression.n_fitted >= MIN_RESIDUAL_DOF


class HallOfFame:
    """Best expression at each complexity; its Pareto front is what users choose from.

    Within a complexity the highest criterion wins, first come first kept, the
    same rule that picks τ*: so τ* always holds its slot, even when another form
    of it differs only by round-off in the loss.
    """

    def __init__(self) -> None:
        self.by_complexity: dict[int, Candidate] = {}

    def update(self, candidates: list[Candidate]) -> None:
        for cand in candidates:
            if not math.isfinite(cand.criterion):
                continue
            best = self.by_complexity.get(cand.complexity)
            if best is None or cand.criterion > best.criterion:
                self.by_complexity[cand.complexity] = cand

    def copy(self) -> "HallOfFame":
        """A hall of fame of the same candidates, updated apart from this one."""
        copied = HallOfFame()
        copied.by_complexity = dict(self.by_complexity)
        return copied

    def pareto_front(self, keep: Candidate | None = None) -> list[Candidate]:
        """Candidates whose loss is lower than that of every simpler candidate, one per complexity.

        ``keep`` (τ*) is always included, in its complexity's slot: with the BIC
        it is on the front anyway, but the ablation rewards (SPL counts
        multiplications) can prefer a formula that a simpler one beats on loss.
        """
        slots = dict(self.by_complexity)
        if keep is not None:
            slots[keep.complexity] = keep
        front: list[Candidate] = []
        for k in sorted(slots):
            cand = slots[k]
            if cand is keep or not front or cand.loss < front[-1].loss:
                front.append(cand)
        return front



_MAX_REUSED_ROWS = 10_000
_EVALUATION_FLOATS = 1 << 23  # predictions held at once while scoring (64 MiB)


class Scorer:
    """Constants → predictions → reward for sampled expressions, cached by key.

    With a ``screen`` fitter (a subsample of the fitter's rows), every new
    expression's constants are first fitted on the screening rows, and only
    the ``n_full_refits`` best of each batch are then refitted on all the fitter's
    rows, from the screened constants, keeping the better of the two fits:
    every member of the batch's top α % (and so of the replay buffer, and τ*)
    has been refitted so, while the many formulas far from the top cost a
    fraction of a full fit. A screened fit whose output is not finite on all
    rows (a constant at the edge of a domain only the screening rows respect)
    is fitted again in full. Every reward is computed on all rows either way.
    """

    def __init__(self, fitter: ConstantFitter, reward: Reward, X: np.ndarray,
                 screen: ConstantFitter | None = None, n_full_refits: int = 0,
                 criterion: Reward | None = None, units: UnitsRule | None = None,
                 table_rows: np.ndarray | None = None):
        if criterion is not None and not criterion.shares_targets(reward):
            raise ValueError("The criterion must be bound to the reward's targets and weights.")
        self.fitter, self.reward = fitter, reward
        #: The data's physical units: a formula that is not dimensionally consistent
        #: is rejected (reward −∞) before its constants are fitted.
        self.units = units
        self.criterion = criterion  # None: the reward judges the answer too
        self.screen, self.n_full_refits = screen, n_full_refits
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        #: The rows of the training table that ``X`` holds (a row batch, or the answer's
        #: sample of a huge table); None: ``X`` is the table. The fitters' ``rows_``
        #: index ``X``; a candidate's ``fitted_rows`` index the table.
        self.table_rows = table_rows
        # in the table's rows, once: every candidate of a fitter shares its array
        self._fitter_rows, self._screen_rows = (
            None if f is None else f.rows_ if table_rows is None else table_rows[f.rows_]
            for f in (fitter, screen))
        self.cache: dict[tuple, Candidate] = {}
        #: Keys whose constants were fitted on all the fitter's rows.
        self.fitted_on_all_rows: set = set()
        # When LM saw every row, its output at the fitted constants already is the
        # prediction, bit for bit (capped: a batch's outputs take B·S floats at once).
        self.reuse_outputs = len(fitter.rows_) == len(X) and len(X) <= _MAX_REUSED_ROWS

    def __getstate__(self) -> dict:
        # The cache as plain tuples: a checkpoint holds tens of thousands of entries,
        # and tuples of bytes and floats pickle ten times faster than Candidates.
        state = dict(self.__dict__)
        state["cache"] = [(c.expression.tokens, c.expression.constants.tobytes(),
                           c.expression.fixed.tobytes(), c.reward, c.loss, c.criterion,
                           c.screened, c.rejected_for_units, c.origin)
                          for c in self.cache.values()]
        state["library"] = next((c.expression.library for c in self.cache.values()), None)
        return state

    def __setstate__(self, state: dict) -> None:
        library, packed = state.pop("library"), state.pop("cache")
        self.__dict__.update(state)
        self.cache = {}
        for tokens, constants, fixed, *scores in packed:
            expression = Expression(tokens, library, np.frombuffer(constants).copy(),
                                    np.frombuffer(fixed, dtype=bool).copy())
            candidate = Candidate(expression, *scores)
            candidate.fitted_rows = self._table_rows(self.screen if candidate.screened
                                                     else self.fitter)
            self.cache[expression.key] = candidate

    @property
    def n_rejected_for_units(self) -> int:
        """How many of the formulas scored so far (sampled, edited or given) the units check
        rejected."""
        return sum(c.rejected_for_units for c in self.cache.values())

    def __call__(self, expressions: list[Expression]) -> list[Candidate]:
        new = {e.key: e for e in expressions if e.key not in self.cache}
        if new:
            fitter = self.screen or self.fitter
            scored = self._fit_and_score(list(new.values()), fitter, from_held=False)
            if self.screen is None:
                self.fitted_on_all_rows.update(new)
                candidates = scored.candidates
            else:
                candidates = self._fit_screened_failures(scored)
            for cand in candidates:
                self.cache[cand.expression.key] = cand
        if self.screen is not None:
            self._refit_leaders_on_all_rows(expressions)
        return [self.cache[e.key] for e in expressions]

    def _fit_screened_failures(self, scored: "_Scored") -> list[Candidate]:
        """Screened candidates, those whose fit held on the screening rows but whose output is
        not finite on every row fitted again on all the fitter's rows; all marked final but
        the other screened fits (formulas without constants have nothing to refit)."""
        candidates = list(scored.candidates)
        again = [j for j, (cand, held) in enumerate(zip(candidates, scored.fit_held))
                 if held and cand.expression.n_fitted and not math.isfinite(cand.reward)]
        if again:
            full = self._fit_and_score([candidates[j].expression for j in again], self.fitter,
                                       from_held=False)
            for j, cand in zip(again, full.candidates):
                candidates[j] = cand
        self.fitted_on_all_rows.update(candidates[j].expression.key for j in again)
        self.fitted_on_all_rows.update(c.expression.key for c in candidates
                                       if not c.expression.n_fitted)
        return candidates

    def _refit_leaders_on_all_rows(self, expressions: list[Expression]) -> None:
        """Refit the batch's ``n_full_refits`` best screened candidates on all the fitter's rows."""
        keys = list(dict.fromkeys(e.key for e in expressions))
        rewards = np.array([self.cache[k].reward for k in keys])
        leaders = [keys[i] for i in np.argsort(-rewards, kind="stable")[:self.n_full_refits]
                   if np.isfinite(rewards[i]) and keys[i] not in self.fitted_on_all_rows]
        for cand in self.refit_on_all_rows([self.cache[k] for k in leaders]):
            self.cache[cand.expression.key] = cand
            self.fitted_on_all_rows.add(cand.expression.key)

    def refit_on_all_rows(self, candidates: list[Candidate]) -> list[Candidate]:
        """Candidates refitted on all the fitter's rows from their constants; the better fit."""
        if not candidates:
            return []
        refitted = self._fit_and_score([c.expression for c in candidates], self.fitter,
                                       from_held=True, fresh_starts=False).candidates
        for old, new in zip(candidates, refitted):
            new.origin = old.origin  # the same formula, whoever wrote it
        return [new if new.reward >= old.reward else old for old, new in zip(candidates, refitted)]

    def score_given(self, expressions: list[Expression]) -> list[Candidate]:
        """Candidates of expressions given from outside the sampler (a user's guesses),
        each fitted on all the fitter's rows, first from the constants it holds; cached,
        so that each is fitted once and the search's own samples of it reuse the fit."""
        new = list({e.key: e for e in expressions
                    if e.key not in self.cache or e.key not in self.fitted_on_all_rows}.values())
        for cand in self.refit(new) if new else ():
            self.cache[cand.expression.key] = cand
            self.fitted_on_all_rows.add(cand.expression.key)
        return [self.cache[e.key] for e in expressions]

    def _table_rows(self, fitter: ConstantFitter) -> np.ndarray:
        """The rows of the training table ``fitter`` (this scorer's or its screen) fits on."""
        return self._screen_rows if fitter is self.screen else self._fitter_rows

    def refit(self, expressions: list[Expression], fresh_starts: bool = True) -> list[Candidate]:
        """Candidates fitted afresh, each first from the constants it holds; no cache.

        For edits of τ* (pruning, snapping): the constants the edit left alone
        are already right, where a fresh start can land in another minimum.
        With ``fresh_starts`` false, the held constants are the only start.
        """
        return self._fit_and_score(expressions, self.fitter, from_held=True,
                                   fresh_starts=fresh_starts).candidates

    def _fit_and_score(self, expressions: list[Expression], fitter: ConstantFitter,
                       from_held: bool, fresh_starts: bool = True) -> "_Scored":
        if self.units is None:
            return self._fit_and_score_all(expressions, fitter, from_held, fresh_starts)
        consistent = [j for j, e in enumerate(expressions) if self.units.consistent(e)]
        candidates = [Candidate(e, -math.inf, math.inf, screened=fitter is self.screen,
                                rejected_for_units=True, fitted_rows=self._table_rows(fitter))
                      for e in expressions]
        fit_held = np.zeros(len(expressions), dtype=bool)  # nothing fitted for the rejected
        scored = self._fit_and_score_all([expressions[j] for j in consistent], fitter,
                                         from_held, fresh_starts)
        for j, cand, held in zip(consistent, scored.candidates, scored.fit_held):
            candidates[j], fit_held[j] = cand, held
        return _Scored(candidates, fit_held)

    def _fit_and_score_all(self, expressions: list[Expression], fitter: ConstantFitter,
                           from_held: bool, fresh_starts: bool) -> "_Scored":
        reuse = self.reuse_outputs and fitter is self.fitter
        screened, rows = fitter is self.screen, self._table_rows(fitter)
        fits = fitter.fit(expressions, keep_outputs=reuse, from_held=from_held,
                          fresh_starts=fresh_starts)
        fitted, outputs = fits.expressions, fits.outputs
        candidates = [Candidate(expr, -math.inf, math.inf, screened=screened, fitted_rows=rows)
                      for expr in fitted]
        to_evaluate = []
        for j, (expr, ok) in enumerate(zip(fitted, fits.success)):
            if not ok:  # a failed fit leaves NaN constants: nothing to evaluate
                continue
            out = outputs.get(fit_key(expr)) if expr.n_fitted else None
            if out is None:
                to_evaluate.append(j)
            else:
                candidates[j] = self._candidate(expr, out, screened, rows)
        chunk = max(1, _EVALUATION_FLOATS // max(1, len(self.X)))  # predictions held at once
        for lo in range(0, len(to_evaluate), chunk):
            part = to_evaluate[lo:lo + chunk]
            Y = evaluate_many([fitted[j] for j in part], self.X, fitter.n_jobs,
                              stop_at_nonfinite=True)
            for j, y_pred in zip(part, Y):
                candidates[j] = self._candidate(fitted[j], y_pred, screened, rows)
        return _Scored(candidates, fits.success)

    def _candidate(self, expr: Expression, y_pred: np.ndarray, screened: bool,
                   fitted_rows: np.ndarray) -> Candidate:
        # One pass over the rows serves the reward, the loss and the criterion alike.
        valid = self.reward.residuals(y_pred)
        if valid is None:  # not finite, or its squared error overflows
            return Candidate(expr, -math.inf, math.inf, screened=screened,
                             fitted_rows=fitted_rows)
        criterion = None if self.criterion is None else self.criterion.of_residuals(valid, expr)
        return Candidate(expr, self.reward.of_residuals(valid, expr), valid.mean_square,
                         criterion, screened, fitted_rows=fitted_rows)


@dataclass(frozen=True)
class _Scored:
    """Candidates of one fit-and-score pass, and whether each one's constant fit held (False
    for a failed fit and for a formula the units check rejected, which is not fitted)."""

    candidates: list[Candidate]
    fit_held: np.ndarray  # (n,) bool, parallel to candidates
