"""One search's pieces, built from the estimator's parameters.

:func:`build_search` is the seam between the estimator (which validates input
and reports the result) and the search (which knows nothing of scikit-learn):
it turns a parameter mapping — an estimator's ``get_params()`` — and the
training data into the token library, the policy and its sampler (with the
constraints and priors), the constant fitter and reward behind the scorer, and
the loop's settings. Data then flows one way: sampler → expressions → constants
→ rewards → policy update (:func:`~cadsr_sklearn.training.run_search`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import torch

from .constants import ConstantFitter
from .constraints import Constraints
from .library import Library, canonical_operators
from .policy import Policy
from .priors import Priors
from .rewards import make_reward, sample_size
from .sampler import Sampler
from .scoring import HallOfFame, Scorer, fittable_constants
from .units import Units
from .refinement import refine
from .training import (EpochRecord, LoopState, SearchParts, SearchResult, TrainingConfig,
                       run_search)

__all__ = ["Search", "Scoring", "build_search", "build_library", "build_scoring", "score_batch",
           "batch_weights", "STRUCTURE"]

#: The parameters that shape a search's pieces (token library, policy, constraints,
#: priors, constant fitter, reward): a search can only be continued with the same
#: values. The loop's settings (:class:`~cadsr_sklearn.training.TrainingConfig`),
#: ``tol``, ``n_jobs`` and the device may change between calls.
STRUCTURE = (
    "binary_operators", "unary_operators", "use_constants", "use_one", "max_length",
    "embedding_dim", "dct_dim", "n_layers", "n_heads", "ff_dim", "attention",
    "position_encoding", "embedding_std", "parent_sibling", "max_constants", "arity_prior",
    "length_prior", "const_fit_samples", "const_screen_samples", "row_batch", "reward",
    "criterion",
    "bic_variance", "likelihood", "spl_eta", "tpsr_lambda",
    "required_features", "nested_constraints", "operator_complexity",
    "guesses",  # they seed the search's start: a continued search was seeded with its own
)


@dataclass
class Search(SearchParts):
    """Everything one run of appendix Algorithm 4 needs (:class:`SearchParts`), the loop's
    state between epochs, and what the estimator keeps beside them.

    Its pieces and state together are a whole search: pickled (see
    :mod:`cadsr_sklearn.checkpoint`) and loaded again, it goes on as if never
    stopped.
    """

    y_variance: float  # (weighted) variance of the training targets
    structure: dict[str, Any]  # the STRUCTURE parameters it was built with
    units: Units | None = None  # the physical units of the data it was built for

    def run(self, on_epoch: Callable[[EpochRecord, "Search"], None] | None = None,
            on_stop: Callable[["Search"], None] | None = None) -> SearchResult:
        """Run (or go on with) the loop until a stopping rule fires; the finished result.

        ``on_epoch(record, search)`` after every epoch, ``on_stop(search)`` when a
        stopping rule fires, before pruning and snapping (see
        :func:`~cadsr_sklearn.training.run_search`): where the search can be saved.
        """
        return refine(self, run_search(self, on_epoch=on_epoch, on_stop=on_stop))

    def changed_structure(self, params: Mapping[str, Any]) -> list[str]:
        """The :data:`STRUCTURE` parameters whose values in ``params`` differ from this search's."""
        return [name for name in STRUCTURE if _comparable(params[name])
                != _comparable(self.structure[name])]

    def new_call(self, params: Mapping[str, Any]) -> None:
        """Go on with this search for another call: ``params``' loop settings, a fresh budget.

        ``params`` must agree with the search on :data:`STRUCTURE` (see
        :meth:`changed_structure`).
        """
        self.resume(params)
        self.state.new_call(self.config)

    def resume(self, params: Mapping[str, Any]) -> None:
        """Take ``params``' loop settings, ``n_jobs`` and ``tol``; keep the call's progress.

        With the parameters the search was started with, a resumed search ends
        where the uninterrupted one would have.
        """
        self.config = TrainingConfig.from_params(params)
        for fitter in self.fitters:
            fitter.n_jobs = params["n_jobs"]
        self.exact_loss = _exact_loss(params["tol"], self.y_variance,
                                      self.final_scorer.reward.floor)

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


def build_search(params: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, device: torch.device, torch_seed: int,
                 numpy_seed: int, units: Units | None = None) -> Search:
    """The pieces of a search on validated ``X`` (S, n) and ``y`` (S,), seeded.

    ``params`` holds the estimator's parameters by name, ``required_features`` as
    column indices (:func:`~cadsr_sklearn.parameters.required_columns`); ``torch_seed`` seeds the
    policy's initial weights and the sampler, ``numpy_seed`` the constant
    fitter's row subsample and starting points; with ``units``, the data's
    physical units, every formula is dimensionally consistent (masks, the units
    prior, and the scorer's final check). A table of more than ``row_batch`` rows
    gets two scorers: the loop's, on a batch of rows (:func:`score_batch`,
    :func:`batch_weights`), and the final one on every row.
    """
    library = build_library(params, X.shape[1])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed)  # weight initialisation without touching global RNG state
        policy = Policy(
            len(library),
            max_length=params["max_length"],
            embedding_dim=params["embedding_dim"],
            dct_dim=params["dct_dim"],
            n_layers=params["n_layers"],
            n_heads=params["n_heads"],
            ff_dim=params["ff_dim"],
            attention=params["attention"],
            position_encoding=params["position_encoding"],
            embedding_std=params["embedding_std"],
            parent_sibling=params["parent_sibling"],
        ).to(device)
    generator = torch.Generator(device=device).manual_seed(torch_seed)
    constraints = Constraints(library, max_length=params["max_length"],
                              max_constants=fittable_constants(params["max_constants"],
                                                               sample_size(len(y), sample_weight)),
                              nested_constraints=params["nested_constraints"],
                              required_features=params["required_features"] or (),
                              units=units)
    priors = Priors(library, uniform_arity=params["arity_prior"], length=params["length_prior"],
                    units=units is not None)
    sampler = Sampler(policy, library, constraints, priors)
    scoring = build_scoring(params, X, y, sample_weight, numpy_seed, units)
    structure = {name: params[name] for name in STRUCTURE}
    return Search(library=library, policy=policy, sampler=sampler, scorer=scoring.scorer,
                  final_scorer=scoring.final_scorer, config=TrainingConfig.from_params(params),
                  generator=generator, exact_loss=scoring.exact_loss,
                  state=LoopState.start(policy), y_variance=scoring.y_variance,
                  structure=structure, units=units)


def build_library(params: Mapping[str, Any], n_features: int) -> Library:
    """The token library of a search with ``params`` on ``n_features`` features."""
    return Library(n_features, params["binary_operators"], params["unary_operators"],
                   use_constants=params["use_constants"], use_one=params["use_one"],
                   operator_complexity=params["operator_complexity"])


@dataclass(frozen=True)
class Scoring:
    """How a search with given parameters scores formulas on given data: the loop's scorer
    (on a batch of a large table's rows), the final one (every row; the same object
    without a batch), the exact fit's loss (the "tol" stop) and the targets' variance."""

    scorer: Scorer
    final_scorer: Scorer
    exact_loss: float
    y_variance: float


def build_scoring(params: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                  sample_weight: np.ndarray | None, numpy_seed: int,
                  units: Units | None = None) -> Scoring:
    """The scorers of a search with ``params`` on ``(X, y)``, seeded as :func:`build_search`
    seeds them: a policy's search, a warm start on new data and a formula scored alone
    all fit constants alike."""
    config = TrainingConfig.from_params(params)
    final_scorer = _scorer(params, X, y, sample_weight, np.random.default_rng(numpy_seed),
                           units, config)
    batch = score_batch(y, params["row_batch"], numpy_seed)
    scorer = final_scorer if batch is None else _scorer(
        params, X[batch], y[batch], batch_weights(sample_weight, batch, len(y)),
        np.random.default_rng([numpy_seed, 1]), units, config)
    y_mean = np.average(y, weights=sample_weight)
    y_variance = float(np.average((y - y_mean) ** 2, weights=sample_weight))
    return Scoring(scorer, final_scorer, _exact_loss(params["tol"], y_variance,
                                                     final_scorer.reward.floor), y_variance)


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


def _scorer(params: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
            sample_weight: np.ndarray | None, rng: np.random.Generator, units: Units | None,
            config: TrainingConfig) -> Scorer:
    """The constant fitter (with its screening fitter), the reward and the criterion on
    ``(X, y)``, as a :class:`Scorer`; ``rng`` draws the fitter's rows and starts."""
    fitter = ConstantFitter(X, y, sample_weight=sample_weight,
                            const_fit_samples=params["const_fit_samples"], random_state=rng,
                            n_jobs=params["n_jobs"])
    screen = (None if params["const_screen_samples"] is None
              else fitter.screening_fitter(params["const_screen_samples"]))
    information_rows = (screen or fitter).rows_  # where the description length's Fisher is taken
    reward = make_reward(params["reward"], y, X=X, information_rows=information_rows,
                         sample_weight=sample_weight, bic_variance=params["bic_variance"],
                         likelihood=params["likelihood"], spl_eta=params["spl_eta"],
                         tpsr_lambda=params["tpsr_lambda"], max_length=params["max_length"])
    criterion = (None if params["criterion"] == "reward" or params["criterion"] == params["reward"]
                 else make_reward(params["criterion"], y, X=X, information_rows=information_rows,
                                  sample_weight=sample_weight, likelihood=params["likelihood"]))
    return Scorer(fitter, reward, reward.loss, X, screen=screen, n_full_refits=2 * config.n_top,
                  criterion=criterion, units=units)


def _exact_loss(tol: float, y_variance: float, floor: float) -> float:
    """The "tol" stop's training MSE: tol·Var(y), but never below what float64 can
    resolve at y's magnitude (the reward's floor), or a y far from 0 never stops."""
    return max(tol * y_variance, floor) if tol > 0 else 0.0


def _comparable(value: Any) -> Any:
    """Operator lists compare by their names (PySR's aliases resolved), whatever the
    sequence type."""
    return tuple(canonical_operators(value)) if isinstance(value, (list, tuple)) else value
