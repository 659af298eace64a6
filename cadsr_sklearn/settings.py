"""A search's settings: the estimator's parameters as typed records, one per component.

:meth:`SearchSettings.from_params` is the one place an estimator's
``get_params()`` is read. It groups the parameters by the component that takes
them, each group a frozen record whose fields are named as the parameters
(their meaning, default and single-value check are the estimator's:
:class:`~cadsr_sklearn.CADSRRegressor`, :data:`~cadsr_sklearn.parameters.PARAMETER_CONSTRAINTS`):

- :class:`LibrarySettings`: the token library;
- :class:`PolicySettings`: the transformer policy;
- :class:`SamplingSettings`: the constraints and priors the sampler keeps to;
- :class:`ScoringSettings`: the constant fitter, the reward and the criterion;
- :class:`TrainingSettings`: the loop (appendix Algorithm 4) and its stopping rules;
- :class:`ReportSettings`: how the fitted front is reported;
- :class:`IslandSettings`: how many searches run side by side, and where.

The first four, the ``guesses`` and ``n_islands`` shape a search: a search can only be continued
with the same values (:meth:`SearchSettings.structure`). The rest (the loop's
settings, ``tol``, ``n_jobs``, the checkpoint, how the front is reported) and the
estimator's own running options (the device, ``verbose``, ``warm_start``,
``checkpoint_every``, ``keep_candidates``, which ``fit`` reads itself) may change
between calls. :meth:`SearchSettings.check`
holds the checks across parameters that no single constraint can express.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from .sampling.constraints import nesting_limits
from .expressions.library import (canonical_operators, check_operator_complexity, check_operators,
                                  operator_names)
from .sampling.policy import Policy

__all__ = ["SearchSettings", "LibrarySettings", "PolicySettings", "SamplingSettings",
           "ScoringSettings", "TrainingSettings", "ReportSettings", "IslandSettings"]


def _from_params(record: type, params: Mapping[str, Any]):
    """The record ``record`` with each field the parameter of its name (other keys ignored)."""
    return record(**{f.name: params[f.name] for f in fields(record)})


@dataclass(frozen=True)
class LibrarySettings:
    """The token library (:class:`~cadsr_sklearn.expressions.library.Library`)."""

    binary_operators: Sequence
    unary_operators: Sequence
    use_constants: bool
    use_one: bool
    operator_complexity: Mapping[str, int] | None


@dataclass(frozen=True)
class PolicySettings:
    """The policy's architecture (:class:`~cadsr_sklearn.sampling.policy.Policy`'s keywords)."""

    max_length: int  # ν, the most nodes of a tree
    embedding_dim: int  # E (the paper's r)
    dct_dim: int  # M
    n_layers: int
    n_heads: int
    ff_dim: int
    attention: str
    position_encoding: str
    embedding_std: float
    parent_sibling: bool


@dataclass(frozen=True)
class SamplingSettings:
    """What the sampler keeps to: the hard constraints
    (:class:`~cadsr_sklearn.sampling.constraints.Constraints`) and the priors on the logits
    (:class:`~cadsr_sklearn.sampling.priors.Priors`)."""

    max_length: int
    max_constants: int | str  # an integer or "auto" (scoring.scorer.constant_cap)
    nested_constraints: Mapping[str, Mapping[str, int]] | None
    required_features: Sequence  # column indices, once the data's columns are known
    arity_prior: bool
    length_prior: float | None


@dataclass(frozen=True)
class ScoringSettings:
    """How formulas are fitted and judged: the constant fitter
    (:class:`~cadsr_sklearn.scoring.constant_fitter.ConstantFitter`), the reward R(τ) and the
    criterion (:func:`~.rewards.make_reward`), on a row batch of a large table."""

    reward: str
    criterion: str
    bic_variance: str
    likelihood: str
    spl_eta: float  # η
    tpsr_lambda: float  # λ of TPSR
    max_length: int  # TPSR's L
    const_fit_samples: int
    const_screen_samples: int | None
    row_batch: int | None


@dataclass(frozen=True)
class TrainingSettings:
    """Settings of the search loop (:func:`~cadsr_sklearn.search.training.run_loop`) and of
    the refinement after it (:func:`~cadsr_sklearn.search.refinement.stage.refine`)."""

    batch_size: int  # B
    oversampling: float  # γ
    n_epochs: int  # T
    learning_rate: float  # l
    alpha: float  # α, percent
    beta: float  # β
    epsilon: float  # ε
    lam: float  # λ
    entropy_coef: float  # λ_H
    steps_per_epoch: int  # C
    ref_update_every: int  # G
    policy: str  # "grpo", or "risk_seeking" (eq. 12: rank weights, one step, no GRPO)
    max_time: float | None
    max_evaluations: int | None
    patience: int | None
    prune: bool  # greedy node-removing local search on τ* after the search
    snap_constants: bool  # constants of τ* and the front fixed to simple numbers
    # the genetic stage of every epoch (search.genetic); 0 generations is the paper's loop
    genetic_generations: int
    genetic_population: int
    genetic_elites: int  # its best new formulas that enter the epoch's selection
    crossover_rate: float
    mutation_rate: float
    tournament_size: int
    # the most terms of a linear leaf's sum (search.linear); 0: none
    linear_terms: int
    # the best formulas whose one-node unary edits are proposed each epoch
    # (search.unary_edits); 0: none
    unary_edits: int

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "TrainingSettings":
        """The loop's settings out of an estimator's ``get_params()`` (other keys ignored)."""
        return _from_params(cls, params)

    @property
    def n_top(self) -> int:
        """αB/100, the size of the top set and of the replay buffer."""
        return max(1, math.ceil(self.alpha * self.batch_size / 100))


@dataclass(frozen=True)
class ReportSettings:
    """How a fitted front is reported (:func:`~cadsr_sklearn.front.rows.record_search`)."""

    simplify: bool  # each formula in its shortest equal form
    model_selection: str  # the row marked selected; "cv" also computes the cv errors
    const_fit_samples: int  # the rows of each fold's constant refit, for "cv"


@dataclass(frozen=True)
class IslandSettings:
    """The islands of one search (:mod:`cadsr_sklearn.search.islands`): how many, how
    often they exchange their best formulas, and where they run."""

    n_islands: int  # k searches, each with its own policy, replay buffer and seeds
    migration_every: int  # M, epochs between two exchanges of elites
    migrant_share: float  # of each island's replay buffer the elites may take; 0: none travel
    scheduler: Any  # a Dask scheduler's address or Client, or None (a local cluster)
    # what each island sets for itself (island i: entry i % len), None: the estimator's values
    island_params: Sequence[Mapping[str, Any]] | None

    def overrides(self, index: int) -> dict[str, Any]:
        """The loop's settings island ``index`` runs with where they differ from the
        search's (``island_params``, checked by :meth:`SearchSettings.check`)."""
        if not self.island_params:
            return {}
        return dict(self.island_params[index % len(self.island_params)])


#: The groups whose values shape a search's pieces, in the order a message names them.
_STRUCTURAL = ("library", "policy", "sampling", "scoring")


@dataclass(frozen=True)
class SearchSettings:
    """Everything a search is built and run with, out of the estimator's parameters."""

    library: LibrarySettings
    policy: PolicySettings
    sampling: SamplingSettings
    scoring: ScoringSettings
    training: TrainingSettings
    guesses: Sequence | None  # they seed the search's start
    dimensional_reduction: bool  # with units: search over dimensionless groups first
    tol: float  # the exact-fit stop, relative to Var(y)
    n_jobs: int | None  # threads of the constant fitter
    checkpoint: Any  # a path, or None
    report: ReportSettings  # how the front is reported
    islands: IslandSettings  # k searches side by side (1: the paper's one search)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "SearchSettings":
        """The settings of an estimator's ``get_params()``, checked across parameters
        (:meth:`check`); ``required_features`` as given until :meth:`with_required`. One
        search (``n_islands=1``) is island 0: it runs with ``island_params``' first entry."""
        settings = cls(library=_from_params(LibrarySettings, params),
                       policy=_from_params(PolicySettings, params),
                       sampling=_from_params(SamplingSettings, params),
                       scoring=_from_params(ScoringSettings, params),
                       training=TrainingSettings.from_params(params),
                       report=_from_params(ReportSettings, params),
                       islands=_from_params(IslandSettings, params),
                       **{name: params[name]
                          for name in ("guesses", "dimensional_reduction", "tol", "n_jobs",
                                       "checkpoint")})
        settings.check()
        if settings.islands.n_islands == 1:  # the one search is island 0
            settings = replace(settings, training=replace(settings.training,
                                                          **settings.islands.overrides(0)))
        return settings

    def with_required(self, columns: tuple[int, ...]) -> "SearchSettings":
        """These settings with ``required_features`` as the data's column indices."""
        return replace(self, sampling=replace(self.sampling, required_features=columns))

    def check(self) -> None:
        """Raise ValueError for values that are valid one by one but not together:
        attention heads that do not divide its width, unknown or repeated operators,
        nesting limits or operator complexities of operators not searched with, and
        ``island_params`` that set what an island cannot (InvalidParameterError)."""
        # imported here: the parameters' constraints import the loop, which imports this module
        from .parameters import island_overrides

        policy, library = self.policy, self.library
        Policy.check_widths(policy.embedding_dim, policy.dct_dim, policy.n_heads,
                            policy.attention)
        check_operators(library.binary_operators, library.unary_operators)
        operators = operator_names(library.binary_operators, library.unary_operators)
        nesting_limits(self.sampling.nested_constraints, operators)
        check_operator_complexity(library.operator_complexity, operators)
        island_overrides(self.islands.island_params)

    def structure(self) -> dict[str, Any]:
        """The values that shape the search's pieces (token library, policy, constraints,
        priors, constant fitter, reward) and its start (the guesses), by parameter name:
        what a continued search must share with the one it continues. Operator lists
        compare by their names (PySR's aliases resolved), whatever the sequence type."""
        values = {f.name: _comparable(getattr(getattr(self, group), f.name))
                  for group in _STRUCTURAL for f in fields(getattr(self, group))}
        return values | {"guesses": _comparable(self.guesses),
                         "n_islands": self.islands.n_islands}


def _comparable(value: Any) -> Any:
    """A setting as a continued search compares it: a sequence as a tuple (operator lists by
    their names, PySR's aliases resolved), whatever the sequence type it was given as."""
    return tuple(canonical_operators(value)) if isinstance(value, (list, tuple)) else value
