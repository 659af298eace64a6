"""Several outputs: one independent search per column of a 2-D ``y``.

``fit`` on ``y`` of shape ``(n, m)`` fits ``m`` copies of the estimator, one
per column (:func:`fit_outputs`), so that output j's formula is the one
``fit(X, y[:, j])`` finds; the methods that describe a formula then ask each
copy in turn (:func:`per_output`), and the fitted attributes of
:data:`PER_OUTPUT` become lists over them (as do those that describe the
chosen formula, ``expression_``, ``equations_``…, which the estimator derives
from each copy's front).
"""

from __future__ import annotations

import os

import numpy as np
from sklearn.base import clone

__all__ = ["PER_OUTPUT", "fit_outputs", "per_output"]

#: The fitted attributes that are lists, one entry per output, when ``y`` is 2-D.
PER_OUTPUT = ("unsnapped_expression_", "selections_", "history_", "n_epochs_",
              "n_evaluations_", "stop_reason_", "y_variance_", "guesses_", "data_units_")


def fit_outputs(estimator, X, Y: np.ndarray, sample_weight, names: list[str], X_units=None,
                y_units=None) -> None:
    """Fit ``estimator`` on ``Y`` (n, m): one copy of it, with its parameters, per column.

    The copies become its :attr:`estimators_`; the attributes of
    :data:`PER_OUTPUT` lists over them, the others the first's. Output j is
    named ``names[j]`` (its copy's ``target_names_``). With ``warm_start``,
    the copies of the last fit go on with their own searches; a ``checkpoint``
    path gets the suffix ``.output{j}`` per output. ``y_units`` is one entry
    per output (a list) or one for all.
    """
    per_column = (isinstance(y_units, (list, tuple)) and len(y_units) == Y.shape[1]
                  and all(u is None or isinstance(u, str) or hasattr(u, "__len__")
                          for u in y_units) and not all(isinstance(u, (int, float))
                                                        for u in y_units))
    if (isinstance(y_units, (list, tuple)) and not per_column
            and any(isinstance(u, str) or hasattr(u, "__len__") for u in y_units)):
        raise ValueError(f"y_units has {len(y_units)} entries but y has {Y.shape[1]} "
                         f"outputs: give one entry per output, or one for all.")
    targets = list(y_units) if per_column else [y_units] * Y.shape[1]
    previous = getattr(estimator, "estimators_", None)
    if estimator.warm_start and previous is not None and len(previous) == Y.shape[1]:
        outputs = previous  # each continues its own search
    else:
        outputs = [clone(estimator) for _ in range(Y.shape[1])]
    for j, output in enumerate(outputs):
        checkpoint_path = (None if estimator.checkpoint is None
                           else f"{os.fspath(estimator.checkpoint)}.output{j}")
        output.set_params(**estimator.get_params()).set_params(checkpoint=checkpoint_path)
        output._fit(X, Y[:, j], sample_weight, [names[j]], X_units, targets[j])
    estimator.__dict__.pop("front_rows_", None)  # of a one-output fit before
    estimator.estimators_ = outputs
    estimator.n_outputs_, estimator.target_names_ = Y.shape[1], list(names)
    first = outputs[0]
    estimator.device_, estimator.version_ = first.device_, first.version_
    estimator.symbol_names_ = first.symbol_names_
    estimator.interrupted_ = any(o.interrupted_ for o in outputs)
    estimator.search_state_ = None  # each output keeps its own
    for name in PER_OUTPUT:
        setattr(estimator, name, [getattr(o, name) for o in outputs])
    estimator.__dict__.pop("candidates_", None)  # a previous fit's
    if estimator.keep_candidates:
        estimator.candidates_ = [o.candidates_ for o in outputs]


def per_output(estimators: list, method: str, index, **kwargs) -> list:
    """``method`` of every output's estimator, ``index`` one row per output or the same."""
    indices = (list(index) if isinstance(index, (list, tuple, np.ndarray))
               else [index] * len(estimators))
    if len(indices) != len(estimators):
        raise ValueError(f"index must give one row per output ({len(estimators)}), "
                         f"got {len(indices)}.")
    return [getattr(e, method)(index=i, **kwargs) for e, i in zip(estimators, indices)]
