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

A Ctrl-C skips the pruning and the snapping. Both stop at the end of
``max_time``, and after an exact fit (the ``tol`` stop) keep the answer exact.
All of it works on the result: the loop's state stays as the last epoch made
it, so that a search can be continued or resumed as if never stopped.
"""

from __future__ import annotations

import math
import time
from functools import partial

from .baselines import add_baselines
from .pruning import prune
from ...scoring.scorer import Candidate, HallOfFame, Scorer
from .snapping import snap
from ..training import SearchParts, SearchResult

__all__ = ["refine"]


def refine(search: SearchParts, result: SearchResult) -> SearchResult:
    """The answer out of a finished loop's ``result`` (:func:`.training.run_loop`), in
    place: its front refitted on all rows (fitted and scored on every row where the loop
    fitted on part of them), the baselines beside it, then τ* pruned and the front
    snapped unless the search was interrupted. The loop's state is left as it is."""
    sampler, config = search.sampler, search.config
    scorer = search.final_scorer  # from here on, the whole table judges
    exact_loss, start = search.exact_loss, result.started
    found = result.best is not None  # (not after a Ctrl-C in the first epoch: nothing is kept)
    try:
        if found and search.scorer is not scorer:
            _score_on_all_rows(result, scorer)  # after a Ctrl-C too: the batch's fits are no answer
        elif not result.interrupted:
            _refit_front_on_all_rows(result, scorer)
    except KeyboardInterrupt:  # the front stays as the loop left it, τ* is kept
        result.interrupted, result.stop_reason = True, "interrupted"
    if found:
        try:
            result.best = add_baselines(result.best, result.hall_of_fame, scorer,
                                        sampler.constraints)
        except KeyboardInterrupt:
            result.interrupted, result.stop_reason = True, "interrupted"
    # Where the answer is fitted on more rows than the loop's fits, the loop's scorer
    # proposes the edits (pruning, the front's snaps but τ*'s) and every row judges them.
    proposer = search.scorer
    if config.prune and result.best is not None and not result.interrupted:
        _prune_best(result, scorer, proposer, sampler, config, start, exact_loss)
    result.unsnapped = result.best
    if config.snap_constants and result.best is not None and not result.interrupted:
        _snap_front(result, scorer, proposer, config, start, exact_loss,
                    grace=search.state.call.last_epoch_seconds)
    return result


def _score_on_all_rows(result: SearchResult, scorer: Scorer) -> None:
    """A search that fitted on part of the rows: its Pareto front and τ* fitted again on
    all rows, from the constants the loop gave them, and scored there; τ* is then the best
    of them by the criterion on the whole table (None if none is finite on it). The members
    of the hall of fame off the loop's front, which a simpler member beats there, are left
    out: each costs a fit on every row."""
    members = result.hall_of_fame.pareto_front(keep=result.best)
    rescored = scorer.refit([c.expression for c in members], fresh_starts=False)
    result.hall_of_fame = HallOfFame()
    result.hall_of_fame.update(rescored)
    finite = [c for c in rescored if math.isfinite(c.criterion)]
    result.best = max(finite, key=lambda c: c.criterion, default=None)


def _refit_front_on_all_rows(result: SearchResult, scorer: Scorer) -> None:
    """Refit every formula users choose from on all the fitter's rows; one that now
    outscores τ* takes its place."""
    screened = [c for c in result.hall_of_fame.by_complexity.values()
                if c.expression.key not in scorer.fitted_on_all_rows]
    refined = scorer.refit_on_all_rows(screened)
    result.hall_of_fame.update(refined)
    leader = max(refined, key=lambda c: c.criterion, default=None)
    if leader is not None and result.best is not None and leader.criterion > result.best.criterion:
        result.best = leader


def _prune_best(result, scorer, proposer, sampler, config, start, exact_loss) -> None:
    """Prune τ* in place (not counted in n_evaluations: nothing is sampled).

    Within the time budget; exact fits stay exact; Ctrl-C keeps τ* unpruned. Where
    ``scorer`` (every row) is not the loop's ``proposer``, pruning runs on the
    proposer's cheaper fits, and its result replaces τ* only if it scores higher
    fitted on every row: a round of pruning refits dozens of edits.
    """
    deadline, max_loss = _finishing_limits(result, config, start, exact_loss)
    admits = sampler.constraints.admits
    try:
        if proposer is scorer:
            result.best = prune(result.best, scorer.refit, admits, max_loss, deadline)
        else:
            result.best = _judged(result.best, scorer, prune(
                _rescored(result.best, proposer), proposer.refit, admits, max_loss, deadline),
                max_loss)
    except KeyboardInterrupt:
        result.interrupted = True
        result.stop_reason = "interrupted"
        return
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


def _finishing_limits(result, config, start, exact_loss) -> tuple[float | None, float]:
    """(deadline, loss ceiling) of the work after the search: the end of ``max_time``,
    and after an exact fit (the ``tol`` stop) the exact loss, so the answer stays exact."""
    deadline = None if config.max_time is None else start + config.max_time
    return deadline, exact_loss if result.stop_reason == "tol" else math.inf


def _snap_front(result, scorer, proposer, config, start, exact_loss, grace: float) -> None:
    """Snap the constants of τ*, then of the rest of the Pareto front while time is left.

    τ* is snapped even when pruning used up the budget: its first round always runs,
    and later ones may start until ``grace`` seconds (the last epoch's) after the end
    of ``max_time``, or after the snap's start if that is later (a round is a few fits
    per constant, on a large table each on every row of it). Its snapped form is the
    answer, unless a snapped member of the front dominates it (no more complex, strictly lower
    loss). A member that merely scores a higher criterion does not take τ*'s
    place: each snap picks one of several nearby numbers, a choice the BIC does
    not charge for, so a large formula with many snapped constants would gain
    more than it is worth. After an exact fit (the ``tol`` stop), snaps must
    keep the fit exact. τ* is snapped with fits on every row; the other members,
    where the loop's ``proposer`` fitted on fewer, by the proposer's fits, each
    result kept if it scores higher on every row.
    """
    deadline, max_loss = _finishing_limits(result, config, start, exact_loss)
    polish = partial(scorer.refit, fresh_starts=False)
    rows = scorer.reward.n_samples  # S: with frequency weights, their sum
    # τ*'s rounds: for one epoch's time after max_time, or after now if later
    answer_deadline = None if deadline is None else max(deadline, time.perf_counter()) + grace
    try:
        best = snap(result.best, polish, max_loss, answer_deadline, n_samples=rows)
        others, members = [], []
        for member in result.hall_of_fame.pareto_front():
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if member.expression.key != result.best.expression.key and member.expression.n_fitted:
                if proposer is scorer:
                    others.append(snap(member, polish, max_loss, deadline, n_samples=rows))
                else:
                    proposal = snap(_rescored(member, proposer),
                                    partial(proposer.refit, fresh_starts=False), max_loss,
                                    deadline, n_samples=rows)
                    others.append(_judged(member, scorer, proposal, max_loss))
                members.append(member)
    except KeyboardInterrupt:
        result.interrupted = True
        result.stop_reason = "interrupted"
        return
    result.snapped_from = {c.expression.key: member for c, member in
                           zip([best, *others], [result.best, *members])
                           if c.expression.key != member.expression.key}
    dominating = [c for c in others if c.complexity <= best.complexity and c.loss < best.loss
                  and c.loss <= max_loss]
    if dominating:
        best = max(dominating, key=lambda c: c.criterion)
    result.hall_of_fame.update(others + [best])
    result.best = best
