"""Warnings point at the user's call to ``fit``, whatever the frames between (a 2-D ``y``,
a pipeline): :mod:`cadsr_sklearn.user_warning`."""

import inspect
import warnings

import numpy as np
import pytest
from budgets import TINY
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from cadsr_sklearn import CADSRRegressor, SmallDataWarning
from cadsr_sklearn.user_warning import user_stacklevel, warn_user

# NIST StRD DanWood's six rows: few enough for the small-table warning
X6 = np.array([[1.309], [1.471], [1.490], [1.565], [1.611], [1.680]])
Y6 = np.array([2.138, 3.421, 3.597, 4.340, 4.882, 5.660])
SIX_ROWS = {**TINY, "n_epochs": 2, "max_constants": 10}


def _fit(model, X, y, **fit_params):
    """``model.fit`` on one line of this file, returning the warnings it gave and that line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1  # the next line
        model.fit(X, y, **fit_params)
    return caught, line


def _theirs(caught, category, text):
    found = [w for w in caught if issubclass(w.category, category) and text in str(w.message)]
    assert found, [str(w.message) for w in caught]
    return found


@pytest.mark.parametrize("y", [Y6, np.c_[Y6, 2 * Y6]], ids=["1-D y", "2-D y"])
def test_the_small_table_warning_points_at_the_call_to_fit(y):
    caught, line = _fit(CADSRRegressor(**SIX_ROWS), X6, y)
    found = _theirs(caught, SmallDataWarning, "max_constants='auto'")
    assert len(found) == y.ndim  # one per output
    assert {(w.filename, w.lineno) for w in found} == {(__file__, line)}


def test_in_a_pipeline_it_points_at_the_pipelines_fit():
    pipeline = make_pipeline(FunctionTransformer(), CADSRRegressor(**SIX_ROWS))
    caught, line = _fit(pipeline, X6, Y6)
    found = _theirs(caught, SmallDataWarning, "max_constants='auto'")
    assert {(w.filename, w.lineno) for w in found} == {(__file__, line)}


@pytest.mark.parametrize("y", [np.ones(6), np.ones((6, 2))], ids=["1-D y", "2-D y"])
def test_the_units_warning_points_at_the_call_to_fit(y):
    # a constant target: fit reads the units, then has no search to run
    caught, line = _fit(CADSRRegressor(**TINY), X6, y, X_units={"x0": "AU"})
    found = _theirs(caught, UserWarning, "which is dimensionless")
    assert {(w.filename, w.lineno) for w in found} == {(__file__, line)}


def test_the_failed_fits_warning_points_at_the_call_to_fit_of_two_outputs(monkeypatch):
    # deeper than the others: raised after the search, in the session that ran it
    from cadsr_sklearn.scoring import constant_fitter, levenberg_marquardt

    def broken(*args, **kwargs):
        raise IndexError("a kernel bug")

    monkeypatch.setattr(levenberg_marquardt, "warm_up", lambda: None)  # it calls the kernel too
    monkeypatch.setattr(constant_fitter.levenberg_marquardt, "fit_batch", broken)
    X = np.linspace(0.5, 2.0, 30)[:, None]
    y = 2.5 * X[:, 0] + 1.0
    caught, line = _fit(CADSRRegressor(**TINY), X, np.c_[y, -y])
    found = _theirs(caught, RuntimeWarning, "a kernel bug")
    assert len(found) == 2 and {(w.filename, w.lineno) for w in found} == {(__file__, line)}


def test_the_level_counts_only_the_frames_of_the_library():
    def here():  # a frame of this file: the level stops at it
        return user_stacklevel()

    assert here() == 1
    with pytest.warns(UserWarning, match="from the test") as caught:
        warn_user("from the test")
    assert caught[0].filename == __file__
