"""The estimator's parameters: what each value may be, and the paper's values.

Each parameter's meaning and default are written once, in
:class:`~cadsr_sklearn.CADSRRegressor` (its docstring and ``__init__``); here
is what scikit-learn validates before every ``fit``
(:data:`PARAMETER_CONSTRAINTS`, each set of allowed values the component's
own), the required features as column indices (:func:`required_columns`), and
the paper's values where the defaults differ (:data:`PAPER_SETTINGS`). The
checks no single constraint can express are
:meth:`~cadsr_sklearn.settings.SearchSettings.check`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from numbers import Integral, Real
from types import MappingProxyType

import numpy as np
import torch
from sklearn.utils._param_validation import (InvalidParameterError, Interval, StrOptions,
                                            validate_parameter_constraints)

from .sampling.policy import ATTENTIONS, POSITION_ENCODINGS
from .scoring.rewards import BIC_VARIANCES, CRITERIA, LIKELIHOODS, REWARDS
from .front.selection import ALIASES, RULES
from .search.training import POLICY_UPDATES

__all__ = ["PARAMETER_CONSTRAINTS", "PAPER_SETTINGS", "ISLAND_PARAMETERS", "island_overrides",
           "required_columns"]

#: scikit-learn's ``_parameter_constraints`` of the estimator: the values each
#: parameter may take, checked by ``fit`` before anything else.
PARAMETER_CONSTRAINTS: dict = {
    "binary_operators": ["array-like"],
    "unary_operators": ["array-like"],
    "use_constants": ["boolean"],
    "use_one": ["boolean"],
    "max_length": [Interval(Integral, 2, None, closed="left")],
    "max_constants": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
    "required_features": ["array-like", None],
    "nested_constraints": [dict, None],
    "operator_complexity": [dict, None],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "oversampling": [Interval(Real, 1, None, closed="left")],
    "n_epochs": [Interval(Integral, 1, None, closed="left")],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "alpha": [Interval(Real, 0, 100, closed="right")],
    "beta": [Interval(Real, 0, None, closed="left")],
    "epsilon": [Interval(Real, 0, 1, closed="neither")],
    "lam": [Interval(Real, 0, None, closed="neither")],
    "entropy_coef": [Interval(Real, 0, None, closed="left")],
    "steps_per_epoch": [Interval(Integral, 1, None, closed="left")],
    "ref_update_every": [Interval(Integral, 1, None, closed="left")],
    "embedding_dim": [Interval(Integral, 2, None, closed="left")],
    "dct_dim": [Interval(Integral, 1, None, closed="left")],
    "n_layers": [Interval(Integral, 1, None, closed="left")],
    "n_heads": [Interval(Integral, 1, None, closed="left")],
    "ff_dim": [Interval(Integral, 1, None, closed="left")],
    "attention": [StrOptions(set(ATTENTIONS))],
    "position_encoding": [StrOptions(set(POSITION_ENCODINGS))],
    "embedding_std": [Interval(Real, 0, None, closed="neither")],
    "parent_sibling": ["boolean"],
    "arity_prior": ["boolean"],
    "length_prior": [Interval(Real, 1, None, closed="left"), None],
    "policy": [StrOptions(set(POLICY_UPDATES))],
    "reward": [StrOptions(set(REWARDS))],
    "criterion": [StrOptions(set(CRITERIA))],
    "bic_variance": [StrOptions(set(BIC_VARIANCES))],
    "likelihood": [StrOptions(set(LIKELIHOODS))],
    "spl_eta": [Interval(Real, 0, 1, closed="right")],
    "tpsr_lambda": [Interval(Real, 0, None, closed="left")],
    "const_fit_samples": [Interval(Integral, 1, None, closed="left")],
    "const_screen_samples": [Interval(Integral, 1, None, closed="left"), None],
    "row_batch": [Interval(Integral, 1, None, closed="left"), None],
    "max_time": [Interval(Real, 0, None, closed="neither"), None],
    "max_evaluations": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "patience": [Interval(Integral, 1, None, closed="left"), None],
    "guesses": ["array-like", None],
    "dimensional_reduction": ["boolean"],
    "prune": ["boolean"],
    "snap_constants": ["boolean"],
    "genetic_generations": [Interval(Integral, 0, None, closed="left")],
    "genetic_population": [Interval(Integral, 2, None, closed="left")],
    "genetic_elites": [Interval(Integral, 0, None, closed="left")],
    "crossover_rate": [Interval(Real, 0, 1, closed="both")],
    "mutation_rate": [Interval(Real, 0, 1, closed="both")],
    "tournament_size": [Interval(Integral, 1, None, closed="left")],
    "linear_terms": [Interval(Integral, 0, None, closed="left")],
    "unary_edits": [Interval(Integral, 0, None, closed="left")],
    # an alias is a value in its own right, not deprecated: it behaves as its rule
    "model_selection": [StrOptions(set(RULES) | set(ALIASES))],
    "simplify": ["boolean"],
    "device": [str, torch.device],
    "n_jobs": [
        Interval(Integral, None, -1, closed="right"),
        Interval(Integral, 1, None, closed="left"),
        None,
    ],
    "n_islands": [Interval(Integral, 1, None, closed="left")],
    "migration_every": [Interval(Integral, 1, None, closed="left")],
    "migrant_share": [Interval(Real, 0, 1, closed="both")],
    "island_params": [list, tuple, None],
    "scheduler": [str, None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    "warm_start": ["boolean"],
    "checkpoint": [str, os.PathLike, None],
    "checkpoint_every": [Interval(Real, 0, None, closed="left")],
    "keep_candidates": ["boolean"],
}


def required_columns(required_features, names: list[str]) -> tuple[int, ...]:
    """The columns of ``required_features``, each a column name (``names``: as ``fit``
    sees them, pandas column names or ``x0, x1, …``) or an integer column index.

    ValueError for an unknown name, an index out of range or a feature given twice.
    Whether the trees can hold them all is :class:`~cadsr_sklearn.sampling.constraints.Constraints`'
    check, which knows ``max_length`` and the operators.
    """
    if required_features is None:
        return ()
    if isinstance(required_features, str):
        raise ValueError(f"required_features must be a list of column names or indices, such "
                         f"as [{required_features!r}], not {required_features!r}.")
    columns = []
    for feature in required_features:
        if isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
            if not 0 <= feature < len(names):
                raise ValueError(f"required_features: column {feature} is out of range; X has "
                                 f"{len(names)} columns (0..{len(names) - 1}).")
            columns.append(int(feature))
        elif isinstance(feature, str) and feature in names:
            columns.append(names.index(feature))
        else:
            raise ValueError(f"required_features: {feature!r} is not a column of X; the "
                             f"columns are {names} (or their indices 0..{len(names) - 1}).")
    repeated = sorted({names[c] for c in columns if columns.count(c) > 1})
    if repeated:
        raise ValueError(f"required_features lists {repeated[0]!r} more than once.")
    return tuple(columns)


#: The parameters an island may set for itself (``island_params``): the loop's rules
#: (:class:`~cadsr_sklearn.settings.TrainingSettings`), less the budgets, which the islands
#: share, and the refinement, which the head runs on what all of them found.
ISLAND_PARAMETERS = frozenset({
    "batch_size", "oversampling", "learning_rate", "alpha", "beta", "epsilon", "lam",
    "entropy_coef", "steps_per_epoch", "ref_update_every", "policy", "genetic_generations",
    "genetic_population", "genetic_elites", "crossover_rate", "mutation_rate",
    "tournament_size", "linear_terms", "unary_edits"})


def island_overrides(island_params) -> tuple[dict, ...]:
    """``island_params`` as checked records of overrides, one per entry (island i takes
    entry ``i % len``): each a mapping of :data:`ISLAND_PARAMETERS` to values their
    constraints allow. () for None: every island runs with the estimator's values.

    InvalidParameterError (a ValueError, as scikit-learn raises for its parameters) for
    an empty list, an entry that is not a mapping, another parameter or a bad value.
    """
    if island_params is None:
        return ()
    if len(island_params) == 0:
        raise InvalidParameterError(
            "island_params must hold at least one mapping of parameters (island i takes entry "
            "i % len(island_params)), or be None; got an empty list.")
    overrides = []
    for i, entry in enumerate(island_params):
        if not isinstance(entry, Mapping):
            raise InvalidParameterError(
                f"island_params[{i}] must be a dict of parameters, such as "
                f"{{'genetic_generations': 5}}; got {entry!r}.")
        other = sorted(set(entry) - ISLAND_PARAMETERS)
        if other:
            raise InvalidParameterError(
                f"island_params[{i}] sets {other[0]!r}, which an island cannot set for itself; "
                f"it may set {', '.join(sorted(ISLAND_PARAMETERS))}.")
        validate_parameter_constraints({name: PARAMETER_CONSTRAINTS[name] for name in entry},
                                       dict(entry), caller_name=f"island_params[{i}]")
        overrides.append(dict(entry))
    return tuple(overrides)


#: The paper's settings (SRBench column of its hyperparameter table, appendix)
#: where this package's defaults differ, and this package's additions switched
#: off: no pruning, snapping or screening, no genetic stage or linear leaves, no early stop,
#: all 600 epochs.
#: ``bic_variance="mle"`` is what the authors' code does (the text's σ² is the
#: targets' variance; see the tuning guide). ``CADSRRegressor(**PAPER_SETTINGS)``
#: or :meth:`CADSRRegressor.paper`; also importable from :mod:`cadsr_sklearn.estimator`.
PAPER_SETTINGS = MappingProxyType(dict(
    criterion="reward",
    batch_size=1000,
    n_epochs=600,
    learning_rate=1e-4,
    entropy_coef=0.005,
    embedding_std=0.02,
    parent_sibling=False,
    arity_prior=False,
    length_prior=None,
    bic_variance="mle",
    const_screen_samples=None,
    row_batch=None,
    tol=0.0,
    prune=False,
    snap_constants=False,
    genetic_generations=0,
    linear_terms=0,
    unary_edits=0,
    dimensional_reduction=False,
))
