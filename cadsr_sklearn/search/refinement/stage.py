"""The stage after the loop: from the loop's result to the answer.

A finished run of appendix Algorithm 4 (:func:`cadsr_sklearn.search.training.run_loop`) leaves a
hall of fame and τ* as the loop scored them. :func:`refine` makes the answer out
of them, in this order:

1. After a search that fitted constants on fewer rows than the table has (a row
   batch, or more rows than ``const_fit_samples``), the loop's Pareto front and τ*
   are fitted again on every row and scored there (the final scorer of
   :func:`~cadsr_sklearn.search.build.build_scoring`), and τ* is the best of them
   there; otherwise the front's formulas screened on a subsample are refitted on
   all the fitter's rows.
2. The baselines, the constant and the affine formula in each feature, are
   scored beside them (:mod:`.refinement.baselines`): τ* is never ranked below them.
3. τ* is pruned (:mod:`.refinement.pruning`): the node-removing edits that raise its
   criterion, applied greedily.
4. The constants of τ* and of the rest of the Pareto front are snapped
   (:mod:`.refinement.snapping`): each is fixed to a nearby simple number when that
   raises the criterion.

One rule holds for a Ctrl-C, whatever the stage (:func:`_run_stage`): each stage
edits a copy of the result, kept only if the stage ends, so a Ctrl-C drops the stage it
cuts short and never leaves it half done. Once the search is interrupted (in the loop
or here), the stages that only improve the answer (the refit of a screened front, the
pruning, the snapping) are skipped; those it needs to be consistent run still (the
front scored on every row, the baselines), and a second Ctrl-C drops them too: the
answer is then the loop's own fits, each knowing the rows it was fitted on
(:attr:`~cadsr_sklearn.scoring.scorer.Candidate.fitted_rows`). The pruning and the
snapping stop at the end of ``max_time``, and after an exact fit (the ``tol`` stop) keep
the answer exact. All of it works on the result: the loop's state stays as the last
epoch made it, so that a search can be continued or resumed as if never stopped.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

import numpy as np

from .baselines import add_baselines
from ...expressions.expression import Expression
from ...front.uncertainty import constant_uncertainty
from .pruning import prune
from ...scoring.scorer import Candidate, Scorer
from .snapping import snap
from ..training import SearchParts, SearchResult

__all__ = ["refine"]


@dataclass(frozen=True)
class _Stage:
    """A step from the loop's result to the answer: ``edit(search, result)`` edits the
    result it is given where ``applies(search, result)``."""

    edit: Callable[[SearchParts, SearchResult], None]
    applies: Callable[[SearchParts, SearchResult], bool]
    #: Whether it runs after a Ctrl-C too: the answer is not consistent without it.
    after_interrupt: bool


def refine(search: SearchParts, result: SearchResult) -> SearchResult:
    """The answer out of a finished loop's ``result`` (:func:`.training.run_loop`): its
    front refitted on all rows (fitted and scored on every row where the loop fitted on
    part of them), the baselines beside it, then τ* pruned and the front snapped unless
    the search was interrupted. The loop's state is left as it is."""
    for stage in _STAGES:
        try:
            if (stage.after_interrupt or not result.interrupted) and stage.applies(search,
                                                                                   result):
                result = _run_stage(stage, search, result)
        except KeyboardInterrupt:  # between two stages
            result = _interrupted(result)
    if result.unsnapped is None:  # not snapped
        result.unsnapped = result.best
    return result


def _run_stage(stage: _Stage, search: SearchParts, result: SearchResult) -> SearchResult:
    """``result`` after ``stage``, or ``result`` marked interrupted if a Ctrl-C cut it short:
    the stage edits a copy of it (its own hall of fame), so it is done whole or not at all."""
    trial = replace(result, hall_of_fame=result.hall_of_fame.copy(),
                    snapped_from=dict(result.snapped_from))
    try:
        stage.edit(search, trial)
    except KeyboardInterrupt:
        return _interrupted(result)
    return trial


def _interrupted(result: SearchResult) -> SearchResult:
    return replace(result, interrupted=True, stop_reason="interrupted")


def _score_on_all_rows(search: SearchParts, result: SearchResult) -> None:
    """A search that fitted on part of the rows: its Pareto front and τ* fitted again on
    all rows, from the constants the loop gave them, and scored there; τ* is then the best
    of them by the criterion on the whole table (None if none is finite on it). The members
    of the hall of fame off the loop's front, which a simpler member beats there, are left
    out: each costs a fit on every row. After a Ctrl-C too: the batch's fits are no answer."""
    members = result.hall_of_fame.pareto_front(keep=result.best)
    rescored = search.final_scorer.refit([c.expression for c in members], fresh_starts=False)
    result.hall_of_fame.by_complexity.clear()
    result.hall_of_fame.update(rescored)
    finite = [c for c in rescored if math.isfinite(c.criterion)]
    result.best = max(finite, key=lambda c: c.criterion, default=None)


def _refit_front_on_all_rows(search: SearchParts, result: SearchResult) -> None:
    """Refit every formula users choose from on all the fitter's rows; one that now
    outscores τ* takes its place."""
    scorer = search.final_scorer
    screened = [c for c in result.hall_of_fame.by_complexity.values()
                if c.expression.key not in scorer.fitted_on_all_rows]
    refined = scorer.refit_on_all_rows(screened)
    result.hall_of_fame.update(refined)
    leader = max(refined, key=lambda c: c.criterion, default=None)
    if leader is not None and result.best is not None and leader.criterion > result.best.criterion:
        result.best = leader


def _add_baselines(search: SearchParts, result: SearchResult) -> None:
    """The constant and the affine formulas beside the front: τ* is never ranked below them."""
    result.best = add_baselines(result.best, result.hall_of_fame, search.final_scorer,
                                search.sampler.constraints)


def _prune_best(search: SearchParts, result: SearchResult) -> None:
    """Prune τ* (not counted in n_evaluations: nothing is sampled).

    Within the time budget; exact fits stay exact. Where the answer's scorer (every
    row) is not the loop's, pruning runs on the loop's cheaper fits, and its result
    replaces τ* only if it scores higher fitted on every row: a round of pruning refits
    dozens of edits.
    """
    scorer, proposer = search.final_scorer, search.scorer
    deadline, max_loss = _finishing_limits(search, result)
    admits = search.sampler.constraints.admits
    if proposer is scorer:
        result.best = prune(result.best, scorer.refit, admits, max_loss, deadline)
    else:
        result.best = _judged(result.best, scorer, prune(
            _rescored(result.best, proposer), proposer.refit, admits, max_loss, deadline),
            max_loss)
    result.hall_of_fame.update([result.best])


def _rescored(candidate: Candidate, scorer: Scorer) -> Candidate:
    """``candidate`` fitted and scored by ``scorer``, from its constants."""
    [again] = scorer.refit([candidate.expression], fresh_starts=False)
    return again


def _judged(current: Candidate, scorer: Scorer, proposal: Candidate,
            max_loss: float) -> Candidate:
    """``proposal`` fitted and scored by ``scorer`` (every row) if it scores higher there
    than ``current`` (scored by it already), else ``current``."""
    if proposal.expression.key == current.expression.key:
        return current
    judged = _rescored(proposal, scorer)
    return judged if judged.loss <= max_loss and judged.criterion > current.criterion else current


def _finishing_limits(search: SearchParts, result: SearchResult) -> tuple[float | None, float]:
    """(deadline, loss ceiling) of the work after the search: the end of ``max_time``,
    and after an exact fit (the ``tol`` stop) the exact loss, so the answer stays exact."""
    max_time = search.config.max_time
    deadline = None if max_time is None else result.started + max_time
    return deadline, search.exact_loss if result.stop_reason == "tol" else math.inf


def _snap_front(search: SearchParts, result: SearchResult) -> None:
    """Snap the constants of τ*, then of the rest of the Pareto front while time is left.

    τ* is snapped even when pruning used up the budget: its first round always runs,
    and later ones may start until the last epoch's time after the end of
    ``max_time``, or after the snap's start if that is later (a round is a few fits
    per constant, on a large table each on every row of it). Its snapped form is the
    answer, unless a snapped member of the front dominates it (no more complex, strictly lower
    loss). A member that merely scores a higher criterion does not take τ*'s
    place: each snap picks one of several nearby numbers, a choice the BIC does
    not charge for, so a large formula with many snapped constants would gain
    more than it is worth. After an exact fit (the ``tol`` stop), snaps must
    keep the fit exact. τ* is snapped with fits on every row; the other members,
    where the loop's scorer fitted on fewer, by the loop's fits, each
    result kept if it scores higher on every row.
    """
    scorer, proposer = search.final_scorer, search.scorer
    deadline, max_loss = _finishing_limits(search, result)
    polish = partial(scorer.refit, fresh_starts=False)
    errors, proposer_errors = _standard_errors(scorer), _standard_errors(proposer)
    rows = scorer.reward.n_samples  # S: with frequency weights, their sum
    grace = search.state.call.last_epoch_seconds
    # τ*'s rounds: for one epoch's time after max_time, or after now if later
    answer_deadline = None if deadline is None else max(deadline, time.perf_counter()) + grace
    result.unsnapped = result.best
    best = snap(result.best, polish, errors, max_loss, answer_deadline, n_samples=rows)
    others, members = [], []
    for member in result.hall_of_fame.pareto_front():
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if member.expression.key != result.best.expression.key and member.expression.n_fitted:
            if proposer is scorer:
                others.append(snap(member, polish, errors, max_loss, deadline, n_samples=rows))
            else:
                proposal = snap(_rescored(member, proposer),
                                partial(proposer.refit, fresh_starts=False),
                                proposer_errors, max_loss, deadline, n_samples=rows)
                others.append(_judged(member, scorer, proposal, max_loss))
            members.append(member)
    result.snapped_from = {c.expression.key: member for c, member in
                           zip([best, *others], [result.best, *members])
                           if c.expression.key != member.expression.key}
    dominating = [c for c in others if c.complexity <= best.complexity and c.loss < best.loss
                  and c.loss <= max_loss]
    if dominating:
        best = max(dominating, key=lambda c: c.criterion)
    result.hall_of_fame.update(others + [best])
    result.best = best


def _standard_errors(scorer: Scorer) -> Callable[[Expression], np.ndarray]:
    """The standard errors of a formula's constants on the rows ``scorer`` fits them on."""
    rows, targets = scorer.fitter.rows_, scorer.reward.targets

    def standard_errors(expression: Expression) -> np.ndarray:
        return constant_uncertainty(expression, scorer.X, targets.y, targets.w,
                                    rows).standard_errors
    return standard_errors


def _found(search: SearchParts, result: SearchResult) -> bool:
    return result.best is not None


def _loop_found(search: SearchParts, result: SearchResult) -> bool:
    """The loop found a formula (not after a Ctrl-C in its first epoch): even where none
    of its front is finite on every row, the baselines give an answer."""
    return search.state.best is not None


def _batch_found(search: SearchParts, result: SearchResult) -> bool:
    """A formula fitted by a loop on part of the rows: the answer's scorer must judge it."""
    return result.best is not None and search.scorer is not search.final_scorer


def _screened_found(search: SearchParts, result: SearchResult) -> bool:
    """A front the loop fitted on every row of the answer's, some of it on a screen only."""
    return result.best is not None and search.scorer is search.final_scorer


#: The stages, in order (the module's docstring says why each runs where it does).
_STAGES = (
    _Stage(_score_on_all_rows, _batch_found, after_interrupt=True),
    _Stage(_refit_front_on_all_rows, _screened_found, after_interrupt=False),
    _Stage(_add_baselines, _loop_found, after_interrupt=True),
    _Stage(_prune_best, lambda search, result: search.config.prune and _found(search, result),
           after_interrupt=False),
    _Stage(_snap_front,
           lambda search, result: search.config.snap_constants and _found(search, result),
           after_interrupt=False),
)
