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
import warnings

import numpy as np
from sklearn.base import clone

__all__ = ["PER_OUTPUT", "fit_outputs", "join_outputs", "per_output", "outputs_of"]

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

    Ctrl-C stops the search of the output it lands in, which keeps its best
    formula so far (as a one-output fit does), and the outputs after it are
    not searched for their budget: the user asked the fit to stop, but
    ``predict`` needs a formula for every output, so each gets a search of one
    epoch (``n_epochs=1``; its ``stop_reason_`` says "n_epochs"), and a
    RuntimeWarning names them. :attr:`interrupted_` is then True. Fitting again
    searches them fully (with a ``checkpoint``, their one-epoch searches go on
    to the budget). A Ctrl-C before an output's first epoch ends, that one's
    short search included, has nothing to keep and raises KeyboardInterrupt.
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
    stopped = None  # the output Ctrl-C stopped, if any
    for j, output in enumerate(outputs):
        checkpoint_path = (None if estimator.checkpoint is None
                           else f"{os.fspath(estimator.checkpoint)}.output{j}")
        output.set_params(**estimator.get_params()).set_params(checkpoint=checkpoint_path)
        fit_args = (X, Y[:, j], sample_weight, [names[j]], X_units, targets[j])
        if stopped is None:
            output._fit(*fit_args)
            stopped = j if output.interrupted_ else None
        else:
            _fit_for_one_epoch(output, fit_args)
    if stopped is not None and stopped < len(outputs) - 1:
        _warn_outputs_left(names[stopped], names[stopped + 1:])
    join_outputs(estimator, outputs, names)
    estimator.__dict__.pop("candidates_", None)  # a previous fit's
    if estimator.keep_candidates:
        estimator.candidates_ = [o.candidates_ for o in outputs]


def _fit_for_one_epoch(output, fit_args: tuple) -> None:
    """``output._fit(*fit_args)`` with a search of one epoch, its ``n_epochs`` then the
    user's again (its parameters stay those of the estimator)."""
    n_epochs = output.n_epochs
    output.set_params(n_epochs=1)
    try:
        output._fit(*fit_args)
    finally:
        output.set_params(n_epochs=n_epochs)


def _warn_outputs_left(interrupted: str, left: list[str]) -> None:
    warnings.warn(f"Ctrl-C stopped the search of {interrupted}; the outputs after it "
                  f"({', '.join(left)}) were searched for one epoch only, so that each has a "
                  f"formula. Fit again to search them fully.", RuntimeWarning,
                  stacklevel=6)  # the caller of fit: past fit_outputs, _fit, fit, sklearn's


def per_output(estimators: list, method: str, index, **kwargs) -> list:
    """``method`` of every output's estimator, ``index`` one row per output or the same."""
    indices = (list(index) if isinstance(index, (list, tuple, np.ndarray))
               else [index] * len(estimators))
    if len(indices) != len(estimators):
        raise ValueError(f"index must give one row per output ({len(estimators)}), "
                         f"got {len(indices)}.")
    return [getattr(e, method)(index=i, **kwargs) for e, i in zip(estimators, indices)]


def join_outputs(estimator, outputs: list, names: list[str]) -> None:
    """Make the fitted ``outputs`` (one estimator per output, output j named ``names[j]``)
    ``estimator``'s :attr:`estimators_`: the attributes of :data:`PER_OUTPUT` become lists
    over them, the others are the first's (a fit's copies, or a formula file's outputs)."""
    estimator.__dict__.pop("front_rows_", None)  # of a one-output fit before
    estimator.estimators_ = outputs
    estimator.n_outputs_, estimator.target_names_ = len(outputs), list(names)
    first = outputs[0]
    estimator.device_, estimator.version_ = first.device_, first.version_
    estimator.symbol_names_ = first.symbol_names_
    estimator.interrupted_ = any(o.interrupted_ for o in outputs)
    estimator.search_state_ = None  # each output keeps its own
    for name in PER_OUTPUT:
        setattr(estimator, name, [getattr(o, name) for o in outputs])


def outputs_of(model) -> list[tuple]:
    """(estimator, target name) of each output of the fitted ``model``: its copies after a
    2-D ``y``, else the model itself. What the views (summary, report, commands) walk, so
    that one output and several are one case."""
    estimators = model.__dict__.get("estimators_") or [model]
    return list(zip(estimators, (str(name) for name in model.target_names_)))
