"""What a fitted :class:`~cadsr_sklearn.CADSRRegressor` answers: a mixin of its reading API.

:class:`FittedModelMixin` holds every attribute and method that reads a fitted
model rather than fitting one: the chosen formula's attributes
(``expression_``, ``best_expression_``, ``equations_``, ``pareto_front_``,
``constants_``, ``units_``), :meth:`~FittedModelMixin.predict`,
:meth:`~FittedModelMixin.score`, the formula shown
(:meth:`~FittedModelMixin.sympy`, :meth:`~FittedModelMixin.latex`), exported
(:meth:`~FittedModelMixin.export`), reported and written to or read from a
formula file, or unpickled. Each reads the fitted front of each output
(:class:`~cadsr_sklearn.front.fitted.FittedFront`) through one helper that
maps over the outputs (:func:`~cadsr_sklearn.multioutput.each_output`): one
value for a model of one output, a list for a model of several, with no
branch of its own. The estimator itself (:mod:`cadsr_sklearn.estimator`)
holds the parameters and ``fit``; the class documents them all.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np
import sympy
from sklearn.utils.validation import check_is_fitted, validate_data

from ._version import __version__
from .expressions.notation import DISPLAY_DIGITS
from .expressions.expression import Expression
from .front.fitted import FittedFront
from .front.rows import FrontRow
from .multioutput import Output, each_output
from .validation import with_numeric_hint

__all__ = ["FittedModelMixin"]


class FittedModelMixin:
    """The reading API of a fitted :class:`~cadsr_sklearn.CADSRRegressor` (documented there).

    The attributes that describe the chosen formula are read from the fitted
    front and the row each rule chooses (``front_rows_``, ``selections_``) by
    the current ``model_selection`` at each access, so that
    ``set_params(model_selection=...)`` on a fitted model takes effect without
    a refit, and no attribute can disagree with the parameter (as
    scikit-learn's ``SelectFromModel`` derives ``threshold_`` from
    ``threshold``). With several outputs each is a list over
    ``estimators_``, chosen by the model's own ``model_selection``.
    """

    @property
    def pareto_front_(self) -> list[FrontRow]:
        return self._read(lambda front: front.marked)

    @property
    def equations_(self):
        return self._read(FittedFront.table)

    @property
    def units_(self) -> str | None:
        """The chosen formula's physical units (None for a fit without ``X_units``)."""
        return self._read(FittedFront.units)

    @property
    def expression_(self) -> sympy.Expr:
        return self._read(lambda front: front.chosen.equation)

    @property
    def best_expression_(self) -> Expression:
        return self._read(lambda front: front.chosen.expression)

    @property
    def constants_(self):
        return self._read(FittedFront.constants)

    def _each_output(self, view, each=None, *, join=None):
        """``view(output, each)`` of the fitted model's output, or the list of it over
        its outputs (:func:`~cadsr_sklearn.multioutput.each_output`)."""
        check_is_fitted(self, "selections_")
        return each_output(self, view, each, join=join)

    def _read(self, read):
        """``read(front)`` of the fitted front, a list over the outputs if several."""
        return self._each_output(lambda output, _: read(output.front))

    # -------------------------------------------------------------- prediction
    def predict(self, X, *, index: int | None = None, return_std: bool = False):
        """Evaluate the selected tree (:attr:`best_expression_`) on ``X``, as it was scored.

        :attr:`expression_` is the same function on the training rows (to
        round-off); off them, a rewrite made for reporting (a split log) may be
        undefined where the tree is not.

        Rows where the formula is undefined (e.g. a log of a negative number
        outside the training domain) get NaN; no exception and no warning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        index : int or list of int, optional
            Row of :attr:`equations_` whose tree to evaluate instead (PySR's
            convention; negative counts from the end); with several outputs,
            the same row of each or a list of one per output.
        return_std : bool, default=False
            Also return the standard error of each prediction, by the delta
            method (:ref:`constant-uncertainty`): the uncertainty of the
            formula's value at ``X`` given its form, not that of a new
            observation; the same for the tree and for the displayed form,
            reparametrised. When snapping fixed every constant, that of the
            fit before snapping (the data pin the value down no better for
            the snap). 0 for a formula that never had fitted constants; NaN
            where the prediction is.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        y_std : ndarray of the same shape
            Only with ``return_std``.
        """
        predict = partial(_predict, X=X, return_std=return_std)
        return self._each_output(predict, index, join=partial(_columns, pairs=return_std))

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of :meth:`predict` on ``(X, y)``.

        A formula that is undefined on some row of ``X`` (its prediction is
        NaN there) scores ``-inf``: no finite error describes it. With several
        outputs, the mean of the outputs' R² (scikit-learn's default).
        """
        from sklearn.metrics import r2_score

        y_pred = self.predict(X)
        if not np.all(np.isfinite(y_pred)):
            return -math.inf
        return float(r2_score(y, y_pred, sample_weight=sample_weight))

    # ------------------------------------------------------------ the formula
    def sympy(self, *, index: int | None = None, precision: int | None = None) -> sympy.Expr:
        """The selected formula (or row ``index`` of :attr:`equations_`) as a SymPy expression.

        With ``precision``, its floats are rounded for reading: to ``precision``
        significant digits, or as many more as it takes for the rounded form to
        predict what the formula predicts on the training rows (see
        :mod:`cadsr_sklearn.expressions.notation`). By default they are exact.
        """
        return self._each_output(lambda output, i: output.front.sympy(i, precision), index)

    def latex(self, precision: int = DISPLAY_DIGITS, *, index: int | None = None) -> str:
        """The selected formula (or row ``index`` of :attr:`equations_`) in LaTeX.

        Floats to ``precision`` significant digits, or as many more as it takes
        for the shown formula to predict what the formula predicts on the
        training rows (``1.0000061**rho - 0.9999896`` is never shown as
        ``1.0^rho - 1.0``).
        """
        return self._each_output(lambda output, i: output.front.latex(i, precision), index)

    def export(self, target: str = "numpy", *, index: int | None = None):
        """The selected formula (or row ``index`` of :attr:`equations_`) for use elsewhere.

        What is exported is the tree :meth:`predict` evaluates, with its
        constants at full precision and the same order of operations and NaN/inf
        semantics, so each export agrees with ``predict`` to round-off (see
        :mod:`cadsr_sklearn.reporting.export`), except that ``predict`` reports a
        non-finite value as NaN where an export keeps the arithmetic's inf.
        Features are in the column order of ``fit``. The functions of
        :mod:`cadsr_sklearn.reporting.export` export any :class:`~cadsr_sklearn.Expression`.

        Parameters
        ----------
        target : {"numpy", "torch", "jax", "python", "c"}, default="numpy"
            "numpy": a function ``f(X) -> y``. "torch": a
            :class:`torch.nn.Module` whose constants are a trainable parameter.
            "jax": a function ``f(X, constants=fitted)``, differentiable in the
            constants (needs JAX; enable its float64 mode to match ``predict``).
            "python": self-contained source of ``formula(X)`` using NumPy.
            "c": C99 source of ``double formula(const double *x)`` for one row.
            After a fit with units, each states them: the sources in comments
            and docstrings (each column's units and the formula's), the
            functions and the module in a ``units`` attribute
            (:class:`~cadsr_sklearn.reporting.export.FormulaUnits`).
        index : int, optional
            Row of :attr:`equations_` to export instead of the selected one.
        """
        from .reporting.export import TARGETS, export_row  # imports torch: only when exporting

        if target not in TARGETS:
            raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}.")
        return self._each_output(lambda output, i: export_row(output.front, target, i), index)

    def report(self, path, X=None, y=None, *, data_name: str | None = None):
        """Write one self-contained HTML page about the fit to ``path``: the chosen
        formula and the front (MathML), the constants, the plots (inline SVG, the
        predicted-vs-true one on ``X, y`` when given, described as ``data_name``), the
        data and the settings; see :mod:`cadsr_sklearn.reporting.html_report`. Returns the path."""
        from .reporting.html_report import write_report

        check_is_fitted(self, "selections_")
        return write_report(self, path, X, y, data_name=data_name)

    # ---------------------------------------------------------- formula files
    def save_formula(self, path):
        """Write the fitted model to ``path`` as a formula file: JSON that is data.

        The file holds the feature and target names and units, every row of
        the front (its text, SymPy form, tree, constants with their
        covariance, complexity, loss, criterion), the row each rule of
        ``model_selection`` chooses, the guesses, the search's history and the
        parameters (see :mod:`cadsr_sklearn.reporting.formula_file`). Unlike a pickle,
        reading it runs no code: it is the format to share a model in. A custom
        operator is written by name; whoever loads the file registers it under
        that name (:func:`~cadsr_sklearn.register_operator`). Returns the path.
        """
        from .reporting.formula_file import write_formula_file

        check_is_fitted(self, "selections_")
        write_formula_file(self, path)
        return path

    @classmethod
    def load_formula(cls, path):
        """The fitted model in the formula file at ``path`` (:meth:`save_formula`).

        It predicts (``return_std`` too), prints, exports and reports as the
        saved model did, and agrees with it to the last bit; it holds no search
        to continue (``warm_start``) and no ``candidates_``. Raises ValueError,
        naming the file and the reason, for a file that is not a formula file
        (a pickle or joblib file is refused unread), one from a later schema,
        one whose formulas use an operator that is not registered, one that is
        malformed, and one that was corrupted or edited: whose checksum no longer
        matches, or where a row's tree, SymPy form and text disagree at its probe
        points (the message names the row; see
        :mod:`cadsr_sklearn.reporting.formula_checks`).
        """
        from .reporting.formula_file import load_model

        return load_model(path, cls)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A pickle loads only into the version that wrote it, up to patch releases: the
        # fitted state is private and changes between minor versions (see the FAQ).
        saved = state.get("version_")
        if saved is not None and str(saved).split(".")[:2] != __version__.split(".")[:2]:
            raise ValueError(
                f"This model was saved with cadsr-sklearn {saved}, which is incompatible with the "
                f"installed {__version__}. Refit it, or install cadsr-sklearn=={saved} to load it."
            )
        super().__setstate__(state)


def _predict(output: Output, index: int | None, X, return_std: bool):
    """One output's prediction at ``X`` by its row ``index`` (the chosen one when None),
    and with ``return_std`` its standard error: :meth:`FittedModelMixin.predict`."""
    row = output.front.row(index)
    try:
        X = validate_data(output.estimator, X, dtype=np.float64, reset=False)
    except ValueError as err:
        raise with_numeric_hint(err, X) from err
    y = row.expression.evaluate(X)
    y = np.where(np.isfinite(y), y, np.nan)
    if not return_std:
        return y
    return y, np.where(np.isnan(y), np.nan, row.prediction_std(X))


def _columns(predictions: list, pairs: bool):
    """The outputs' predictions (each a ``(y, std)`` pair where ``pairs``) as columns."""
    if pairs:
        return tuple(np.column_stack(part) for part in zip(*predictions))
    return np.column_stack(predictions)
