"""The estimator's parameters: what each value may be, the checks across them, the paper's values.

Each parameter's meaning and default are written once, in
:class:`~cadsr_sklearn.CADSRRegressor` (its docstring and ``__init__``); here
is what scikit-learn validates before every ``fit``
(:data:`PARAMETER_CONSTRAINTS`), what no single constraint can express
(:func:`check_settings`), and the paper's values where the defaults differ
(:data:`PAPER_SETTINGS`).
"""

from __future__ import annotations

import os
from numbers import Integral, Real
from types import MappingProxyType
from typing import Any, Mapping

import torch
from sklearn.utils._param_validation import Interval, StrOptions

from .library import check_operators
from .policy import Policy
from .selection import RULES

__all__ = ["PARAMETER_CONSTRAINTS", "PAPER_SETTINGS", "check_settings"]

#: scikit-learn's ``_parameter_constraints`` of the estimator: the values each
#: parameter may take, checked by ``fit`` before anything else.
PARAMETER_CONSTRAINTS: dict = {
    "binary_operators": ["array-like"],
    "unary_operators": ["array-like"],
    "use_constants": ["boolean"],
    "use_one": ["boolean"],
    "max_length": [Interval(Integral, 2, None, closed="left")],
    "max_constants": [Interval(Integral, 0, None, closed="left")],
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
    "attention": [StrOptions({"dct", "standard"})],
    "position_encoding": [StrOptions({"dpe", "1d"})],
    "embedding_std": [Interval(Real, 0, None, closed="neither")],
    "parent_sibling": ["boolean"],
    "arity_prior": ["boolean"],
    "length_prior": [Interval(Real, 1, None, closed="left"), None],
    "policy": [StrOptions({"grpo", "risk_seeking"})],
    "reward": [StrOptions({"mdl", "bic", "nrmse", "spl", "tpsr"})],
    "criterion": [StrOptions({"mdl", "reward"})],
    "bic_variance": [StrOptions({"target", "mle"})],
    "likelihood": [StrOptions({"gaussian", "student_t"})],
    "spl_eta": [Interval(Real, 0, 1, closed="right")],
    "tpsr_lambda": [Interval(Real, 0, None, closed="left")],
    "const_fit_samples": [Interval(Integral, 1, None, closed="left")],
    "const_screen_samples": [Interval(Integral, 1, None, closed="left"), None],
    "max_time": [Interval(Real, 0, None, closed="neither"), None],
    "max_evaluations": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "patience": [Interval(Integral, 1, None, closed="left"), None],
    "guesses": ["array-like", None],
    "prune": ["boolean"],
    "snap_constants": ["boolean"],
    "model_selection": [StrOptions(set(RULES))],
    "simplify": ["boolean"],
    "device": [str, torch.device],
    "n_jobs": [
        Interval(Integral, None, -1, closed="right"),
        Interval(Integral, 1, None, closed="left"),
        None,
    ],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    "warm_start": ["boolean"],
    "checkpoint": [str, os.PathLike, None],
    "checkpoint_every": [Interval(Real, 0, None, closed="left")],
    "keep_candidates": ["boolean"],
}


def check_settings(params: Mapping[str, Any]) -> None:
    """Raise ValueError for parameters (``get_params()``) that are valid one by one but
    not together: attention heads that do not divide its width, unknown or repeated
    operators."""
    Policy.check_widths(params["embedding_dim"], params["dct_dim"], params["n_heads"],
                        params["attention"])
    check_operators(params["binary_operators"], params["unary_operators"])


#: The paper's settings (SRBench column of its hyperparameter table, appendix)
#: where this package's defaults differ, and this package's additions switched
#: off: no pruning, snapping or screening, no early stop, all 600 epochs.
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
    tol=0.0,
    prune=False,
    snap_constants=False,
))
