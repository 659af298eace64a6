"""Where an epoch's candidates come from: the proposers.

An epoch (:func:`~cadsr_sklearn.search.training.run_loop`) asks each proposer of the
search in turn for scored candidates, a :class:`Proposal`; every proposal then takes
one path: the selection of the top α % over all of them, the hall of fame, τ*, the
replay buffer and the policy update. A proposer sees the proposals made before it in
the epoch (the genetic stage grows its population from the policy's batch).

- :class:`PolicySampler`, the paper's: B unique trees drawn from the policy
  (appendix Algorithm 1), fitted and scored. Its candidates carry the sampler's
  record of them (:class:`~cadsr_sklearn.sampling.sampler.Batch`), which the update
  trains on as sampled.
- :class:`GeneticProposer`: a few generations of genetic programming seeded by the
  batch and the replay buffer (:mod:`cadsr_sklearn.search.genetic`). Its candidates
  are trained on teacher-forced, as the replay buffer is: plain off-policy
  additions to the top set, with no importance weight (DSO's GP meld).
- :class:`~cadsr_sklearn.search.linear.LinearCombinations`: sparse least-squares sums
  of the features, their products and ratios, and sub-trees of the epoch's best
  formulas (uDSR's ``poly`` token, PySR's backsolve); teacher-forced like the genetic
  stage's.
- :class:`~cadsr_sklearn.search.unary_edits.UnaryEdits`: every one-node change of a unary
  operator of the best formulas (``asin`` above ``n*sin(theta2)``); teacher-forced too.

The user's guesses enter once, before the first epoch
(:func:`~cadsr_sklearn.search.guesses.seed_search`), as ``"guess"``. A new proposer
(a decomposition, a pretrained model) is one class with an ``origin``, ``active`` and
``propose``, added to the search's list in :func:`~cadsr_sklearn.search.build.build_search`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..sampling.sampler import Batch
from ..scoring.scorer import Candidate
from ..settings import TrainingSettings
from .genetic import GeneticStage

if TYPE_CHECKING:  # the loop's record of a search; it imports this module
    from .training import SearchParts

__all__ = ["Proposal", "Proposer", "PolicySampler", "GeneticProposer", "POLICY", "GENETIC",
           "LINEAR", "UNARY_EDIT", "GUESS", "REDUCTION"]

#: The origins a candidate can have (``history_``'s columns, the fitted ``found_by_``).
POLICY, GENETIC, LINEAR, UNARY_EDIT, GUESS = "policy", "genetic", "linear", "unary_edit", "guess"
#: Formulas the search on dimensionless groups wrote, before the first epoch
#: (:mod:`cadsr_sklearn.search.reduction`).
REDUCTION = "reduction"


@dataclass
class Proposal:
    """What one proposer gave an epoch."""

    origin: str
    candidates: list[Candidate]  # scored; they enter the selection of the top α %
    # the sampler's record of the candidates, row for row; None: teacher-forced if selected
    batch: Batch | None = None
    # scored too, but kept out of the selection: they can become τ* or join the hall of fame
    also_scored: list[Candidate] = field(default_factory=list)
    evaluations: int = 0  # formulas scored to make it (n_evaluations, max_evaluations)
    sampling_seconds: float = 0.0  # of ``seconds``, the drawing of trees (the policy's)
    seconds: float = 0.0

    @property
    def scored(self) -> list[Candidate]:
        """Every candidate it scored: those for the selection, then the others."""
        return self.candidates + self.also_scored


class Proposer(Protocol):
    """A source of an epoch's candidates."""

    origin: str

    def active(self, config: TrainingSettings) -> bool:
        """Whether it proposes anything with these settings."""

    def propose(self, search: "SearchParts", earlier: list[Proposal]) -> Proposal:
        """This epoch's scored candidates, given the proposals made before it."""


class PolicySampler:
    """B unique trees drawn from the policy, fitted and scored (appendix Algorithm 1)."""

    origin = POLICY

    def active(self, config: TrainingSettings) -> bool:
        return True

    def propose(self, search: "SearchParts", earlier: list[Proposal]) -> Proposal:
        config, start = search.config, time.perf_counter()
        batch = search.sampler.sample_unique(config.batch_size, config.oversampling,
                                             search.generator)
        sampled = time.perf_counter()
        candidates = search.scorer(batch.expressions(search.library))
        return Proposal(self.origin, candidates, batch=batch, evaluations=len(candidates),
                        sampling_seconds=sampled - start, seconds=time.perf_counter() - start)


class GeneticProposer:
    """Genetic programming on the epoch's batch and the replay buffer
    (:class:`~cadsr_sklearn.search.genetic.GeneticStage`)."""

    origin = GENETIC

    def __init__(self, stage: GeneticStage) -> None:
        self.stage = stage

    def active(self, config: TrainingSettings) -> bool:
        return config.genetic_generations > 0

    def propose(self, search: "SearchParts", earlier: list[Proposal]) -> Proposal:
        config, start = search.config, time.perf_counter()
        seeds = [c for p in earlier for c in p.candidates] + search.state.replay
        # the call's budgets: no generation starts past max_time or max_evaluations
        call = search.state.call
        deadline = None if config.max_time is None else start - call.seconds + config.max_time
        evaluations_left = (None if config.max_evaluations is None else
                            config.max_evaluations - call.evaluations
                            - sum(p.evaluations for p in earlier))
        result = self.stage.run(seeds, search.scorer, config, deadline, evaluations_left)
        elite_keys = {c.expression.key for c in result.elites}
        return Proposal(self.origin, result.elites, batch=None,
                        also_scored=[c for c in result.scored
                                     if c.expression.key not in elite_keys],
                        evaluations=result.evaluations, seconds=time.perf_counter() - start)
