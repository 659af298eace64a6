"""Checks of the training data that ``fit`` makes before a search.

scikit-learn's ``validate_data`` checks shapes, finiteness and dtypes; these
add what a symbolic search needs, each with a message that says what to fix:
numbers, not text (:func:`check_numeric_target`, :func:`with_numeric_hint`);
sample weights as the frequencies scikit-learn means (:func:`frequency_weighted`);
targets whose squared errors float64 can hold (:func:`check_target_scale`);
and enough observations for the constants a formula may fit
(:func:`warn_if_small`, :class:`SmallDataWarning`).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.utils.validation import _check_sample_weight

from .user_warning import warn_user
from .scoring.scorer import MIN_RESIDUAL_DOF, ROWS_PER_CONSTANT, constant_cap, fittable_constants

__all__ = ["SmallDataWarning", "check_numeric_target", "with_numeric_hint",
           "frequency_weighted", "check_target_scale", "warn_if_small"]

# Squared errors of targets beyond these scales overflow (or underflow to zero) in
# float64, so no formula could be scored: such y is rejected with a hint to rescale.
_Y_MAX = 1e150
_Y_MIN_SPREAD = 1e-150


class SmallDataWarning(UserWarning):
    """The training table is small for the search's settings (see :meth:`CADSRRegressor.fit`)."""


def check_numeric_target(y) -> None:
    """Reject text targets with a message that says what to fix.

    scikit-learn converts an object ``y`` to float but passes strings through,
    which would then fail deep inside the search with an unrelated error.
    """
    values = y if hasattr(y, "dtype") else np.asarray(y)
    kind = getattr(values.dtype, "kind", "O")
    if kind == "O":
        try:
            np.asarray(values, dtype=np.float64)
            return
        except (TypeError, ValueError):
            kind = "U"
    if kind in "US":
        example = np.asarray(values).ravel()[:1].tolist()
        raise ValueError(
            f"y must be numeric, but it holds text (dtype {values.dtype}"
            + (f", e.g. {example[0]!r}" if example else "")
            + "). CADSRRegressor is a regressor: convert y to numbers, e.g. with "
            "pandas.to_numeric(y) or y.astype(float)."
        )


def with_numeric_hint(err: ValueError, X) -> ValueError:
    """``err`` from input validation, naming the non-numeric columns of ``X`` if any."""
    if "could not convert" not in str(err):
        return err
    dtypes = getattr(X, "dtypes", None)  # pandas (or similar) DataFrames
    bad = []
    if hasattr(dtypes, "items"):
        bad = [str(c) for c, dt in dtypes.items() if dt.kind not in "biuf"]
    where = f"column(s) {bad} of X are" if bad else "X is"
    return ValueError(
        f"{where} not numeric ({err}). CADSR needs numbers: encode categorical columns "
        "(e.g. with sklearn.preprocessing.OneHotEncoder) or drop them."
    )


def frequency_weighted(X: np.ndarray, y: np.ndarray, sample_weight
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(X, y, sample_weight)`` with the weights checked as frequencies, rows of weight 0 gone.

    A weight is how many times its row was observed (scikit-learn's meaning:
    weight 2 is the row repeated), so a row of weight 0 was not observed and
    takes no part in the search, not even by being where a formula is
    undefined. The weights must be finite, non-negative and not all zero.
    """
    if sample_weight is None:
        return X, y, None
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                         ensure_non_negative=True)
    observed = sample_weight > 0
    if observed.all():
        return X, y, sample_weight
    return X[observed], y[observed], sample_weight[observed]


def check_target_scale(y: np.ndarray) -> None:
    """Reject targets whose squared errors float64 cannot hold (see ``_Y_MAX``)."""
    top = float(np.max(np.abs(y)))
    if top > _Y_MAX:
        raise ValueError(
            f"y has values as large as {top:.3g}: their squared errors overflow float64, so no "
            f"formula can be scored. Rescale y, e.g. divide it by 1e{math.floor(math.log10(top))}, "
            "and scale the predictions back."
        )
    spread = float(np.ptp(y))
    if spread < _Y_MIN_SPREAD:
        raise ValueError(
            f"y varies by only {spread:.3g}: squared errors that small underflow float64, so no "
            "formula can be scored. Rescale y, e.g. standardise it as (y - y.mean()) / y.std()."
        )


def warn_if_small(n_rows: float, max_constants: int | str, weighted: bool = False) -> None:
    """Warn, saying what to do, when formulas may hold more constants than the rows can pin.

    ``n_rows`` is S, the number of observations: with (frequency) sample
    weights, ``weighted``, their sum. ``max_constants="auto"`` keeps to a third of the
    rows from six rows up (:func:`~cadsr_sklearn.scoring.scorer.constant_cap`), so it warns only
    on fewer rows.
    """
    cap = constant_cap(max_constants, n_rows)
    if n_rows >= ROWS_PER_CONSTANT * cap:
        return
    held = fittable_constants(max_constants, n_rows)
    held_to = "" if held == cap else (
        f" (held to {held} here, so that {MIN_RESIDUAL_DOF} rows are left beyond them)")
    weights = "" if not weighted else (
        " (the sample weights' sum: weights are frequencies; if yours are relative, "
        "scale them to the number of rows, w * len(w) / w.sum())")
    auto = "" if max_constants == "auto" else (
        f"set max_constants='auto' (a third of the rows, {fittable_constants('auto', n_rows)} "
        "here) to search only what the data can determine; ")
    warn_user(
        f"Only {n_rows:g} rows{weights} for a search whose formulas may fit up to "
        f"{cap} constants{held_to}: few rows are left to judge a formula by. Read the "
        f"whole front (equations_), not one formula; {auto}judge the choice on rows the fit "
        "did not see; and bring more rows where you can.",
        SmallDataWarning)
