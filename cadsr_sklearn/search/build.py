"""One search's pieces, built from its settings.

:func:`build_search` is the seam between the estimator (which validates input
and reports the result) and the search (which knows nothing of scikit-learn):
it turns the search's settings (:class:`~cadsr_sklearn.settings.SearchSettings`,
the estimator's parameters as typed records) and the training data into the
token library, the policy and its sampler (with the constraints and priors), the
constant fitter and reward behind the scorer, and the loop's settings. Data then
flows one way: sampler → expressions → constants → rewards → policy update
(:func:`~cadsr_sklearn.search.training.run_loop`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

import numpy as np
import torch

from ..scoring.constant_fitter import ConstantFitter
from ..sampling.constraints import Constraints
from ..expressions.library import Library
from ..sampling.policy import Policy
from ..sampling.priors import Priors
from ..scoring.rewards import make_reward, sample_size
from ..sampling.sampler import Sampler
from ..scoring.scorer import HallOfFame, Scorer, fittable_constants
from ..units.rule import UnitsRule
from .genetic import GeneticStage
from .linear import LinearCombinations
from .proposers import GeneticProposer, PolicySampler
from .unary_edits import UnaryEdits
from .refinement.stage import refine
from ..settings import LibrarySettings, ScoringSettings, SearchSettings
from .training import EpochRecord, LoopState, SearchParts, SearchResult, run_loop

__all__ = ["Search", "Scoring", "FailedFits", "build_search", "build_library", "build_scoring",
           "score_batch", "batch_weights", "ANSWER_ROWS"]

#: The most rows the answer is fitted and judged on; a larger table's answer is judged on a
#: stratified sample of this many. Up to it, the work after the loop is a few seconds of
#: constant fitting (a held fit of four formulas on 10⁶ rows takes about 1.4 s on one core).
ANSWER_ROWS = 1_000_000

@dataclass
class Search(SearchParts):
    """Everything one run of appendix Algorithm 4 needs (:class:`SearchParts`), the loop's
    state between epochs, and what the estimator keeps beside them.

    Its pieces and state together are a whole search: pickled (see
    :mod:`cadsr_sklearn.search.checkpoint`) and loaded again, it goes on as if never
    stopped.
    """

    y_variance: float  # (weighted) variance of the training targets
    structure: dict[str, Any]  # the settings' structure() it was built with
    units: UnitsRule | None = None  # the data's physical units, the rule it keeps to
    # with n_islands > 1, the islands whose loops this search's stand for (search.islands);
    # its own state is then the head's: the hall of fame and τ* of all of them
    archipelago: Any = None

    def run(self, on_epoch: Callable[[EpochRecord, "Search"], None] | None = None,
            on_stop: Callable[["Search"], None] | None = None,
            after_loop: Callable[["Search", SearchResult], SearchResult] | None = None,
            loop: Callable[..., SearchResult] = run_loop) -> SearchResult:
        """Run (or go on with) the loop until a stopping rule fires; the finished result.

        ``on_epoch(record, search)`` after every epoch, ``on_stop(search)`` when a
        stopping rule fires, before pruning and snapping (see
        :func:`~cadsr_sklearn.search.training.run_loop`): where the search can be saved.
        ``after_loop(search, result)``, between the loop and the refinement, may add
        formulas to the loop's result (the search on dimensionless groups,
        :mod:`cadsr_sklearn.search.reduction`). ``loop`` runs the epochs: this search's
        own, or its islands' (:func:`~cadsr_sklearn.search.islands.run_islands`).
        """
        result = loop(self, on_epoch=on_epoch, on_stop=on_stop)
        if after_loop is not None:
            result = after_loop(self, result)
        return refine(self, result)

    def changed_structure(self, settings: SearchSettings) -> list[str]:
        """The parameters that shape a search (:meth:`SearchSettings.structure`) whose
        values in ``settings`` differ from this search's."""
        return [name for name, value in settings.structure().items()
                if value != self.structure[name]]

    def new_call(self, settings: SearchSettings) -> None:
        """Go on with this search for another call: ``settings``' loop, a fresh budget.

        ``settings`` must agree with the search on its structure (see
        :meth:`changed_structure`).
        """
        self.resume(settings)
        self.state.new_call(self.config)
        if self.archipelago is not None:
            self.archipelago.new_call()

    def resume(self, settings: SearchSettings) -> None:
        """Take ``settings``' loop, ``n_jobs`` and ``tol``; keep the call's progress.

        With the settings the search was started with, a resumed search ends
        where the uninterrupted one would have.
        """
        self.config = settings.training
        if self.archipelago is not None:
            self.archipelago.resume(settings)
        for fitter in self.fitters:
            fitter.n_jobs = settings.n_jobs
        self.exact_loss = _exact_loss(settings.tol, self.y_variance,
                                      self.final_scorer.reward.floor)

    def failed_fits(self) -> "FailedFits":
        """The constant fits of this search that raised an error (a bug in the kernels:
        numerical faults raise nothing there), over every fitter."""
        fitters = self.fitters
        return FailedFits(sum(f.n_failed_ for f in fitters),
                          next((f.first_error_ for f in fitters if f.first_error_), None))

    @property
    def fitters(self) -> list:
        """Every constant fitter of the search: its scorers' and their screening ones."""
        scorers = [self.scorer] + ([self.final_scorer] if self.final_scorer is not self.scorer
                                   else [])
        return [f for s in scorers for f in (s.fitter, s.screen) if f is not None]

    def adopt_data(self, scoring: "Scoring") -> None:
        """Go on with this policy on new data: its ``scoring``, and the candidates rescored.

        The replay buffer, τ* and the hall of fame hold rewards of the old data;
        their constants are refitted and their rewards computed on the new.
        """
        self.scorer, self.final_scorer = scoring.scorer, scoring.final_scorer
        self.exact_loss, self.y_variance = scoring.exact_loss, scoring.y_variance
        state = self.state
        members = list(state.hall_of_fame.by_complexity.values()) + state.replay
        if state.best is not None:
            members.append(state.best)
        rescored = {c.expression.key: c for c in self.scorer.refit([c.expression for c in members])}
        state.replay = [rescored[c.expression.key] for c in state.replay
                        if math.isfinite(rescored[c.expression.key].reward)]
        state.hall_of_fame = HallOfFame()
        state.hall_of_fame.update(list(rescored.values()))
        finite = [c for c in rescored.values() if math.isfinite(c.criterion)]
        state.best = max(finite, key=lambda c: c.criterion, default=None)


def build_search(settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, device: torch.device, torch_seed: int,
                 numpy_seed: int, units: UnitsRule | None = None,
                 scoring_seed: int | None = None) -> Search:
    """The pieces of a search on validated ``X`` (S, n) and ``y`` (S,), seeded.

    ``settings`` holds ``required_features`` as column indices
    (:meth:`~cadsr_sklearn.settings.SearchSettings.with_required`); ``torch_seed`` seeds the
    policy's initial weights and the sampler, ``numpy_seed`` the constant
    fitter's row subsample and starting points; with ``units``, the rule of the
    data's physical units, every formula is dimensionally consistent (masks, the
    units prior, and the scorer's final check). A table of more than ``row_batch`` rows
    gets two scorers: the loop's, on a batch of rows (:func:`score_batch`,
    :func:`batch_weights`), and the final one on every row. ``scoring_seed`` (by default
    ``numpy_seed``) seeds the scorers alone: islands take the head's, so that they score on
    the same rows and their rewards compare.
    """
    library = build_library(settings.library, X.shape[1])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed)  # weight initialisation without touching global RNG state
        policy = Policy(len(library), **asdict(settings.policy)).to(device)
    generator = torch.Generator(device=device).manual_seed(torch_seed)
    sampling = settings.sampling
    constraints = Constraints(library, max_length=sampling.max_length,
                              max_constants=fittable_constants(sampling.max_constants,
                                                               sample_size(len(y), sample_weight)),
                              nested_constraints=sampling.nested_constraints,
                              required_features=sampling.required_features or (),
                              units=units)
    priors = Priors(library, uniform_arity=sampling.arity_prior, length=sampling.length_prior,
                    units=units)
    sampler = Sampler(policy, library, constraints, priors)
    scoring = build_scoring(settings, X, y, sample_weight,
                            numpy_seed if scoring_seed is None else scoring_seed, units)
    genetic = GeneticStage(library, constraints, np.random.default_rng([numpy_seed, 4]))
    return Search(library=library, policy=policy, sampler=sampler, scorer=scoring.scorer,
                  final_scorer=scoring.final_scorer, config=settings.training,
                  generator=generator,
                  proposers=[PolicySampler(), GeneticProposer(genetic),
                             LinearCombinations(library, sampling.max_length),
                             UnaryEdits(library)],
                  exact_loss=scoring.exact_loss,
                  state=LoopState.start(policy), y_variance=scoring.y_variance,
                  structure=settings.structure(), units=units)


def build_library(settings: LibrarySettings, n_features: int) -> Library:
    """The token library of a search with ``settings`` on ``n_features`` features."""
    return Library(n_features, settings.binary_operators, settings.unary_operators,
                   use_constants=settings.use_constants, use_one=settings.use_one,
                   operator_complexity=settings.operator_complexity)


@dataclass(frozen=True)
class FailedFits:
    """Constant fits that raised: how many, and the first error (``repr``; None if none)."""

    count: int
    first_error: str | None


@dataclass(frozen=True)
class Scoring:
    """How a search with given parameters scores formulas on given data: the loop's scorer
    (on a batch of a large table's rows), the final one (every row; the same object
    without a batch), the exact fit's loss (the "tol" stop) and the targets' variance."""

    scorer: Scorer
    final_scorer: Scorer
    exact_loss: float
    y_variance: float


def build_scoring(settings: SearchSettings, X: np.ndarray, y: np.ndarray,
                  sample_weight: np.ndarray | None, numpy_seed: int,
                  units: UnitsRule | None = None) -> Scoring:
    """The scorers of a search with ``settings`` on ``(X, y)``, seeded as :func:`build_search`
    seeds them: a policy's search, a warm start on new data and a formula scored alone
    all fit constants alike.

    The loop's scorer fits constants on ``const_fit_samples`` rows (of the row batch, on a
    large table) and scores them on the batch. The final scorer, which judges the answer,
    fits and scores on the same rows, every row up to :data:`ANSWER_ROWS`: a criterion that
    charges ½ ln S for a constant must see it fitted on those S rows, or the error of a
    fit on a subsample (about S/(2·n) nats a constant, fitted on n rows) outweighs the
    charge and decides between formulas at random. Where the loop already fits on every
    row, the two are the same scorer.
    """
    scoring, n_jobs = settings.scoring, settings.n_jobs
    n_full_refits = 2 * settings.training.n_top
    batch = score_batch(y, scoring.row_batch, numpy_seed)
    if batch is None:
        scorer = _scorer(scoring, X, y, sample_weight, np.random.default_rng(numpy_seed), units,
                         n_jobs, n_full_refits)
    else:
        scorer = _scorer(scoring, X[batch], y[batch], batch_weights(sample_weight, batch, len(y)),
                         np.random.default_rng([numpy_seed, 1]), units, n_jobs, n_full_refits,
                         table_rows=batch)
    final_scorer = scorer
    if len(scorer.fitter.rows_) < len(y):  # a row batch, or a subsample of the rows
        final_scorer = _answer_scorer(scoring, X, y, sample_weight, numpy_seed, units, n_jobs)
    y_mean = np.average(y, weights=sample_weight)
    y_variance = float(np.average((y - y_mean) ** 2, weights=sample_weight))
    return Scoring(scorer, final_scorer, _exact_loss(settings.tol, y_variance,
                                                     final_scorer.reward.floor), y_variance)


def _answer_scorer(settings: ScoringSettings, X: np.ndarray, y: np.ndarray,
                   sample_weight: np.ndarray | None, numpy_seed: int, units: UnitsRule | None,
                   n_jobs: int | None) -> Scorer:
    """The scorer that judges the answer: constants fitted on every row it scores (no
    subsample, no screening), all rows up to :data:`ANSWER_ROWS`, else a stratified
    sample of that many (:func:`score_batch`) counted as the observations they are."""
    rows = score_batch(y, ANSWER_ROWS, numpy_seed)
    if rows is not None:
        X, y = X[rows], y[rows]
        sample_weight = None if sample_weight is None else sample_weight[rows]
    every_row = replace(settings, const_fit_samples=len(y), const_screen_samples=None)
    return _scorer(every_row, X, y, sample_weight, np.random.default_rng([numpy_seed, 3]),
                   units, n_jobs, n_full_refits=0, table_rows=rows)


def score_batch(y: np.ndarray, row_batch: int | None, numpy_seed: int) -> np.ndarray | None:
    """The rows (sorted) a search on targets ``y`` scores its formulas on: ``row_batch``
    of them, or None (every row) when there are no more.

    Stratified by the target: the rows in the order of ``y`` are cut into
    ``row_batch`` runs of (nearly) equal length and one row is drawn from each, so
    the batch spans the target's range as the table does, its extremes included, and
    its mean squared error varies less than a simple random sample's. Drawn from a
    generator of its own, so that the constant fitter's draws are those of a search
    without a batch."""
    n_rows = len(y)
    if row_batch is None or n_rows <= row_batch:
        return None
    rng = np.random.default_rng([numpy_seed, 2])
    edges = np.round(np.linspace(0, n_rows, row_batch + 1)).astype(np.int64)
    picks = edges[:-1] + (rng.random(row_batch) * np.diff(edges)).astype(np.int64)
    return np.sort(np.argsort(y, kind="stable")[picks])


def batch_weights(sample_weight: np.ndarray | None, batch: np.ndarray,
                  n_rows: int) -> np.ndarray:
    """The batch's frequency weights: its rows' own, scaled so that they sum to what all
    rows' do (S, the number of observations the reward and the criterion count)."""
    weights = np.ones(len(batch)) if sample_weight is None else sample_weight[batch]
    total = n_rows if sample_weight is None else float(np.sum(sample_weight))
    return weights * (total / float(np.sum(weights)))


def _scorer(settings: ScoringSettings, X: np.ndarray, y: np.ndarray,
            sample_weight: np.ndarray | None, rng: np.random.Generator, units: UnitsRule | None,
            n_jobs: int | None, n_full_refits: int,
            table_rows: np.ndarray | None = None) -> Scorer:
    """The constant fitter (with its screening fitter), the reward and the criterion on
    ``(X, y)``, as a :class:`Scorer`; ``rng`` draws the fitter's rows and starts;
    ``table_rows``: the training table's rows ``X`` holds (None: all of them)."""
    fitter = ConstantFitter(X, y, sample_weight=sample_weight,
                            const_fit_samples=settings.const_fit_samples, random_state=rng,
                            n_jobs=n_jobs)
    screen = (None if settings.const_screen_samples is None
              else fitter.screening_fitter(settings.const_screen_samples))
    information_rows = (screen or fitter).rows_  # where the description length's Fisher is taken
    reward = make_reward(settings.reward, y, X=X, information_rows=information_rows,
                         sample_weight=sample_weight, bic_variance=settings.bic_variance,
                         likelihood=settings.likelihood, spl_eta=settings.spl_eta,
                         tpsr_lambda=settings.tpsr_lambda, max_length=settings.max_length)
    criterion = (None if settings.criterion in ("reward", settings.reward)
                 else make_reward(settings.criterion, y, X=X, information_rows=information_rows,
                                  sample_weight=sample_weight, likelihood=settings.likelihood))
    return Scorer(fitter, reward, X, screen=screen, n_full_refits=n_full_refits,
                  criterion=criterion, units=units, table_rows=table_rows)


def _exact_loss(tol: float, y_variance: float, floor: float) -> float:
    """The "tol" stop's training MSE: tol·Var(y), but never below what float64 can
    resolve at y's magnitude (the reward's floor), or a y far from 0 never stops."""
    return max(tol * y_variance, floor) if tol > 0 else 0.0
