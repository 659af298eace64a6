"""Standard errors of the fitted constants and of predictions (cadsr_sklearn.front.uncertainty)."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from budgets import TINY

from cadsr_sklearn import CADSRRegressor, Expression, Library
from cadsr_sklearn.search import checkpoint
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.front.rows import CONSTANT_COLUMNS
from cadsr_sklearn.front.shown_constants import shown_constants
from cadsr_sklearn.front.uncertainty import constant_uncertainty, form_uncertainty

LIBRARY = Library(1, ("add", "mul"), ("exp",), use_constants=True, use_one=False)
A, B = 2.0, -0.7  # y = A·exp(B·x)


def _law(names=("mul", "c", "exp", "mul", "c", "x0")):
    return Expression.from_names(list(names), LIBRARY)


def _noisy_fit(seed, n=40, noise=0.1, weights=None):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 3, size=(n, 1))
    sigma = noise if weights is None else noise / np.sqrt(weights)
    y = A * np.exp(B * X[:, 0]) + rng.normal(0, 1, n) * sigma
    fitter = ConstantFitter(X, y, sample_weight=weights, const_fit_samples=1000,
                            random_state=seed, n_jobs=1)
    (fitted,) = fitter.fit([_law()])
    return fitted, X, y


@pytest.mark.parametrize("weighted", [False, True])
def test_95_percent_intervals_cover_the_true_constants_about_95_percent_of_the_time(weighted):
    n, covered = 40, []
    # precision weights 1/σ², scaled to sum to the rows as the estimator asks of them
    weights = np.linspace(0.2, 5.0, n) if weighted else None
    weights = None if weights is None else weights * n / weights.sum()
    for seed in range(200):
        fitted, X, y = _noisy_fit(seed, n=n, weights=weights)
        intervals = constant_uncertainty(fitted, X, y, weights).intervals(0.95)
        # BFS order: the outer c is A, the inner B
        covered.append([lo <= truth <= hi for (lo, hi), truth in zip(intervals, (A, B))])
    rate = np.mean(covered, axis=0)
    assert np.all((0.90 <= rate) & (rate <= 0.99)), rate


def test_a_weight_of_two_is_the_row_twice():
    # frequency weights, as scikit-learn means them: the same standard errors as the
    # table with every row repeated (twice the observations: √2 smaller than unweighted)
    fitted, X, y = _noisy_fit(0, n=30)
    once = constant_uncertainty(fitted, X, y)
    weighted = constant_uncertainty(fitted, X, y, np.full(30, 2.0))
    repeated = constant_uncertainty(fitted, np.vstack([X, X]), np.concatenate([y, y]))
    np.testing.assert_allclose(weighted.standard_errors, repeated.standard_errors, rtol=1e-10)
    np.testing.assert_allclose(weighted.intervals(0.95), repeated.intervals(0.95), rtol=1e-10)
    ratio = once.standard_errors / weighted.standard_errors
    np.testing.assert_allclose(ratio, np.sqrt(2 * (60 - 2) / (30 - 2) / 2), rtol=1e-10)


def test_prediction_standard_errors_cover_the_true_mean_and_grow_off_the_data():
    covered = []
    grid = np.array([[0.5], [1.5], [2.5]])
    for seed in range(200):
        fitted, X, y = _noisy_fit(seed)
        u = constant_uncertainty(fitted, X, y)
        std = u.prediction_std(fitted, grid)
        truth = A * np.exp(B * grid[:, 0])
        covered.append(np.abs(fitted.evaluate(grid) - truth) <= 1.96 * std)
    assert np.all((0.90 <= np.mean(covered, axis=0)) & (np.mean(covered, axis=0) <= 0.99))
    fitted, X, y = _noisy_fit(0)
    u = constant_uncertainty(fitted, X, y)
    inside, outside = u.prediction_std(fitted, np.array([[1.5], [-2.0]]))
    assert outside > 3 * inside  # extrapolation is less certain


def test_edge_cases_give_clear_values_and_no_warnings():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, size=(30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # exact data: zero standard errors
        exact = _law().with_constants([A, B])
        u = constant_uncertainty(exact, X, A * np.exp(B * X[:, 0]))
        np.testing.assert_allclose(u.standard_errors, 0.0, atol=1e-12)
        # c0·c1·x0: only the product is determined
        redundant = Expression.from_names(["mul", "mul", "x0", "c", "c"], LIBRARY, [2.0, 1.5])
        y = 3.0 * X[:, 0] + rng.normal(0, 0.1, 30)
        u = constant_uncertainty(redundant, X, y)
        assert np.all(np.isinf(u.standard_errors))
        assert np.all(np.isfinite(u.prediction_std(redundant, X)))
        # a fixed (snapped) constant has no standard error; the fitted one has
        snapped = Expression(_law().tokens, LIBRARY, [A, B], fixed=[True, False])
        u = constant_uncertainty(snapped, X, A * np.exp(B * X[:, 0]) + rng.normal(0, .1, 30))
        assert np.isnan(u.standard_errors[0]) and np.isfinite(u.standard_errors[1])
        # as many constants as rows: nothing to estimate from
        u = constant_uncertainty(exact, X[:2], A * np.exp(B * X[:2, 0]))
        assert np.all(np.isnan(u.standard_errors))
        assert np.all(np.isnan(u.prediction_std(exact, X)))


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 2.5, size=(200, 2))
    y = 1.7 * X[:, 0] * X[:, 1] + rng.normal(0, 0.05, 200)
    return CADSRRegressor(**{**TINY, "n_epochs": 6}).fit(X, y), X, y


def test_the_estimator_reports_its_constants_and_prediction_errors(model):
    model, X, y = model
    table = model.constants_
    assert list(table.columns) == CONSTANT_COLUMNS == [
        "name", "shown", "value", "std_error", "ci_low", "ci_high", "fixed", "fitted_value",
        "fitted_ci_low", "fitted_ci_high", "fitted_std_error", "gap"]
    chosen = next(row for row in model.pareto_front_ if row.selected)
    assert len(table) == len(chosen.constants.names) + len(chosen.constants.fixed)
    fitted = ~table["fixed"].to_numpy()
    assert np.all(table["ci_low"][fitted] < table["value"][fitted])
    assert np.all(table["value"][fitted] < table["ci_high"][fitted])
    assert all(len(errors) == len(row.constants.names) for errors, row in
               zip(model.equations_["constant_errors"], model.pareto_front_))
    # the tree's own covariance stays available to programs
    assert len(chosen.uncertainty.values) == model.best_expression_.n_constants
    y_pred, y_std = model.predict(X[:10], return_std=True)
    np.testing.assert_array_equal(y_pred, model.predict(X[:10]))
    assert y_std.shape == (10,) and np.all(y_std >= 0)
    _, last = model.predict(X[:10], index=-1, return_std=True)
    assert last.shape == (10,)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X[:10], return_std=True)[1], y_std)


def test_the_estimator_weights_the_standard_errors_as_its_fit(model):
    model, X, y = model
    w = np.where(X[:, 0] > 1.5, 1.0, 0.0)  # half the rows do not count
    params = {**TINY, "n_epochs": 6, "snap_constants": False}  # constants kept fitted
    weighted = CADSRRegressor(**params).fit(X, y, sample_weight=w)
    best = weighted.best_expression_
    assert best.n_fitted > 0
    expected = constant_uncertainty(best, X, y, w).standard_errors
    chosen = next(row for row in weighted.pareto_front_ if row.selected)
    np.testing.assert_allclose(chosen.uncertainty.standard_errors, expected)
    assert not np.allclose(expected, constant_uncertainty(best, X, y).standard_errors)
    # and the displayed formula's constants are judged on the same weights
    def shown(weights):
        return shown_constants(chosen.equation, chosen.digits, best, weighted.symbol_names_, X,
                               y, weights).standard_errors

    np.testing.assert_allclose(weighted.constants_["std_error"], shown(w))
    assert not np.allclose(shown(w), shown(None))


def test_the_standard_errors_are_those_of_the_rows_the_constants_were_fitted_on():
    # 600 rows, constants fitted on 100 of them during the search: the answer is fitted
    # again on all 600, and its errors are those of 600 rows (√6 times smaller than the
    # 100 rows of the search would give)
    rng = np.random.default_rng(2)
    X = rng.uniform(0.5, 2.5, size=(600, 2))
    y = 1.7 * X[:, 0] * X[:, 1] + rng.normal(0, 0.05, 600)
    model = CADSRRegressor(**{**TINY, "n_epochs": 6}, const_fit_samples=100,
                           snap_constants=False, warm_start=True).fit(X, y)
    search = checkpoint.loads(model.search_state_, torch.device("cpu")).search
    assert len(search.scorer.fitter.rows_) == 100 and search.scorer.screen is None
    rows = search.final_scorer.fitter.rows_
    np.testing.assert_array_equal(rows, np.arange(600))
    best = model.best_expression_
    assert best.n_fitted > 0
    expected = constant_uncertainty(best, X, y, rows=rows).standard_errors
    chosen = next(row for row in model.pareto_front_ if row.selected)
    np.testing.assert_array_equal(chosen.uncertainty.standard_errors, expected)
    search_rows = search.scorer.fitter.rows_
    np.testing.assert_allclose(
        constant_uncertainty(best, X, y, rows=search_rows).standard_errors / expected,
        np.sqrt(6), rtol=0.2)
    # the displayed formula's constants: on the same 600 rows
    shown = chosen.constants
    assert shown.uncertainty.dof == 600 - len(shown.names)
    np.testing.assert_array_equal(
        model.constants_["std_error"],
        shown_constants(chosen.equation, chosen.digits, best, model.symbol_names_, X, y,
                        rows=rows).standard_errors)


def test_sample_weights_enter_the_standard_errors():
    fitted, X, y = _noisy_fit(3)
    plain = constant_uncertainty(fitted, X, y).standard_errors
    w = np.where(X[:, 0] > 1.5, 1.0, 0.0)  # the first rows do not count
    weighted = constant_uncertainty(fitted, X, y, w)
    assert weighted.dof == np.count_nonzero(w) - 2
    assert not np.allclose(weighted.standard_errors, plain)


def test_a_constant_target_has_a_zero_error():
    X = np.arange(10.0).reshape(-1, 1)
    model = CADSRRegressor(**TINY).fit(X, np.full(10, 4.2))
    # y = 4.2 reads 21/5, a number written as the simple one it is: fitted exactly
    (row,) = model.constants_.to_dict("records")
    assert row["fixed"] and row["shown"] == "21/5"
    assert row["fitted_ci_low"] == row["fitted_value"] == row["fitted_ci_high"] == 4.2
    assert model.pareto_front_[0].uncertainty.standard_errors.tolist() == [0.0]
    np.testing.assert_array_equal(model.predict(X, return_std=True)[1], np.zeros(10))


def test_memory_of_the_standard_errors_grows_with_the_rows_not_their_square():
    # A full SVD of the (rows × constants) Jacobian builds a rows × rows factor: 128 MiB at
    # 4000 rows, 75 GiB at 100k (the crash at the end of a large fit). The thin one needs
    # a few copies of the Jacobian.
    import tracemalloc

    n = 4000
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 3, size=(n, 1))
    y = A * np.exp(B * X[:, 0]) + rng.normal(0, 0.1, n)
    fitted = _law().with_constants(np.array([A, B]))
    tracemalloc.start()
    try:
        uncertainty = constant_uncertainty(fitted, X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20 + 20 * n * 8  # n·8 bytes is one column: a few dozen at most
    assert np.all(np.isfinite(uncertainty.standard_errors))


def test_standard_errors_with_fewer_finite_rows_than_constants():
    # two rows, two constants, one row undefined: one direction determined, one free
    fitted = _law().with_constants(np.array([A, B]))
    X = np.array([[1.0], [np.nan]])
    uncertainty = constant_uncertainty(fitted, X, np.array([1.0, 2.0]))
    assert uncertainty.covariance.shape == (2, 2)


def test_a_sympy_form_has_the_standard_errors_of_the_same_tree():
    # c0·exp(c1·x) written in SymPy: the same model, the same covariance
    import sympy
    from sympy.utilities.lambdify import implemented_function

    fitted, X, y = _noisy_fit(4)
    tree = constant_uncertainty(fitted, X, y)
    x, a, b = sympy.symbols("x a b")
    form = form_uncertainty(a * sympy.exp(b * x), [a, b], fitted.constants, [x], X, y)
    np.testing.assert_allclose(form.covariance, tree.covariance, rtol=1e-8)
    assert form.dof == tree.dof
    # a function SymPy cannot differentiate: central differences, nearly the same
    opaque = implemented_function("opaque_exp", np.exp)
    numeric = form_uncertainty(a * opaque(b * x), [a, b], fitted.constants, [x], X, y)
    np.testing.assert_allclose(numeric.standard_errors, tree.standard_errors, rtol=1e-6)
