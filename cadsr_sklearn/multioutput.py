"""Several outputs: one independent search per column of a 2-D ``y``.

``fit`` on ``y`` of shape ``(n, m)`` fits ``m`` copies of the estimator, one
per column (:func:`fit_outputs`), so that output j's formula is the one
``fit(X, y[:, j])`` finds. The copies are joined (:class:`JoinedOutputs`)
into the estimator's fitted attributes: :attr:`estimators_`, and the
attributes of :data:`PER_OUTPUT` as lists over them.

Every view of a fitted model walks its outputs the same way, one output or
several: :func:`outputs_of` gives each output's :class:`Output` (its
one-output estimator, and its front as a
:class:`~cadsr_sklearn.front.fitted.FittedFront` read by the model's
``model_selection``), and :func:`each_output` maps a view over them, giving a
value for a model of one output and a list for a model of several (which is
how the estimator's ``expression_``, ``predict``, ``sympy``… become lists).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from .front.fitted import FittedFront
from .user_warning import warn_user

__all__ = ["PER_OUTPUT", "fit_outputs", "JoinedOutputs", "Output", "outputs_of",
           "each_output", "target_columns"]

#: The fitted attributes that are lists, one entry per output, when ``y`` is 2-D.
PER_OUTPUT = ("unsnapped_expression_", "selections_", "history_", "n_epochs_",
              "n_evaluations_", "stop_reason_", "found_by_", "y_variance_", "guesses_",
              "data_units_", "reduction_")


# ------------------------------------------------------------------- fitting
def fit_outputs(estimator, X, Y: np.ndarray, sample_weight, names: list[str], X_units=None,
                y_units=None, *, fit_one: Callable) -> "JoinedOutputs":
    """Fit ``estimator``'s copies on ``Y`` (n, m), one per column, and join them.

    ``fit_one(copy, X, y, sample_weight, [name], X_units, y_units)`` fits one
    copy on the 1-D column ``y``, its target named ``name``: the estimator's
    own one-output fit, which it hands in, so that nothing here calls into it
    by name. Each copy has the estimator's parameters; output j is named
    ``names[j]`` (its copy's ``target_names_``). With ``warm_start``, the
    copies of the last fit go on with their own searches; a ``checkpoint``
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
    targets = _units_per_output(y_units, Y.shape[1])
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
            fit_one(output, *fit_args)
            stopped = j if output.interrupted_ else None
        else:
            _fit_for_one_epoch(fit_one, output, fit_args)
    if stopped is not None and stopped < len(outputs) - 1:
        _warn_outputs_left(names[stopped], names[stopped + 1:])
    return JoinedOutputs(outputs, list(names), candidates=estimator.keep_candidates)


def _units_per_output(y_units, n_outputs: int) -> list:
    """Each output's ``y_units``: a list or tuple of one entry per output (each a unit
    string, an exponent vector or None) is theirs in turn; anything else (one unit string,
    one exponent vector of numbers, None) is every output's. ValueError for a list of
    entries of another length."""
    def entry(u) -> bool:  # one output's units, not a number of an exponent vector
        return u is None or isinstance(u, str) or hasattr(u, "__len__")

    if not isinstance(y_units, (list, tuple)):
        return [y_units] * n_outputs
    vector = all(isinstance(u, (int, float)) for u in y_units)
    if len(y_units) == n_outputs and all(entry(u) for u in y_units) and not vector:
        return list(y_units)
    if any(isinstance(u, str) or hasattr(u, "__len__") for u in y_units):
        raise ValueError(f"y_units has {len(y_units)} entries but y has {n_outputs} "
                         f"outputs: give one entry per output, or one for all.")
    return [y_units] * n_outputs


def _fit_for_one_epoch(fit_one: Callable, output, fit_args: tuple) -> None:
    """``fit_one(output, *fit_args)`` with a search of one epoch, its ``n_epochs`` then the
    user's again (its parameters stay those of the estimator)."""
    n_epochs = output.n_epochs
    output.set_params(n_epochs=1)
    try:
        fit_one(output, *fit_args)
    finally:
        output.set_params(n_epochs=n_epochs)


def _warn_outputs_left(interrupted: str, left: list[str]) -> None:
    warn_user(f"Ctrl-C stopped the search of {interrupted}; the outputs after it "
              f"({', '.join(left)}) were searched for one epoch only, so that each has a "
              f"formula. Fit again to search them fully.", RuntimeWarning)


@dataclass(frozen=True)
class JoinedOutputs:
    """The fitted estimators of the outputs (output j named ``target_names[j]``), joined
    into the fitted attributes of one model of several outputs: a fit's copies, or a
    formula file's outputs."""

    estimators: list  # one fitted one-output estimator per output
    target_names: list[str]
    candidates: bool = False  # whether each kept its ``candidates_`` (keep_candidates)

    def attributes(self) -> dict[str, Any]:
        """The model's fitted attributes, by name: :attr:`estimators_`, the attributes of
        :data:`PER_OUTPUT` as lists over them, the others the first's."""
        first = self.estimators[0]
        attributes = {
            "estimators_": self.estimators, "n_outputs_": len(self.estimators),
            "target_names_": list(self.target_names), "device_": first.device_,
            "version_": first.version_, "symbol_names_": first.symbol_names_,
            "interrupted_": any(o.interrupted_ for o in self.estimators),
            "search_state_": None}  # each output keeps its own
        attributes.update({name: [getattr(o, name) for o in self.estimators]
                           for name in PER_OUTPUT})
        if self.candidates:
            attributes["candidates_"] = [o.candidates_ for o in self.estimators]
        return attributes


# ------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Output:
    """One output of a fitted model: its one-output estimator (the model itself, or its
    copy for that column of a 2-D ``y``) and its front, read by the model's
    ``model_selection`` and named after its target."""

    estimator: Any  # a fitted one-output CADSRRegressor: its search's record, predict
    front: FittedFront

    @property
    def target(self) -> str:
        """The output's target name (``target_names_[j]``)."""
        return self.front.target


def _several(model) -> bool:
    """Fitted on a 2-D ``y``: one estimator per output in ``estimators_`` (one for a
    column vector too, whose attributes are lists of one)."""
    return "estimators_" in vars(model)


def outputs_of(model) -> list[Output]:
    """Each output of the fitted ``model``, one or several: what the views (the
    estimator's properties, summary, plots, report, commands, formula files) walk,
    so that one output and several are one case. The model's ``model_selection``
    decides for every output (its copies may hold another, set directly)."""
    estimators = vars(model)["estimators_"] if _several(model) else [model]
    return [Output(e, FittedFront.of(e, model.model_selection, str(name)))
            for e, name in zip(estimators, model.target_names_)]


def each_output(model, view: Callable[[Output, Any], Any], each=None, *,
                join: Callable[[list], Any] | None = None):
    """``view(output, each)`` of the fitted ``model``'s output; for a model of several
    outputs, the list of ``view`` over them, passed to ``join`` where given.

    ``each`` (an ``index=``, the targets) is, for several outputs, one value per
    output (a list, tuple or array) or one for all.
    """
    outputs = outputs_of(model)
    if not _several(model):
        return view(outputs[0], each)
    values = [view(output, value) for output, value in zip(outputs, _one_each(each, outputs))]
    return values if join is None else join(values)


def _one_each(each, outputs: Sequence[Output]) -> list:
    values = (list(each) if isinstance(each, (list, tuple, np.ndarray))
              else [each] * len(outputs))
    if len(values) != len(outputs):
        raise ValueError(f"index must give one row per output ({len(outputs)}), "
                         f"got {len(values)}.")
    return values


def target_columns(model, y):
    """``y`` as :func:`each_output` takes it: for a model of several outputs, its columns,
    one per output (ValueError for another shape); for one output, ``y`` itself."""
    if not _several(model):
        return y
    Y, n_outputs = np.asarray(y), len(vars(model)["estimators_"])
    if Y.ndim != 2 or Y.shape[1] != n_outputs:
        raise ValueError(f"y must have one column per output ({n_outputs}), "
                         f"got shape {Y.shape}.")
    return [Y[:, j] for j in range(n_outputs)]
