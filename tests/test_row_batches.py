"""Row batches for large tables: the search scores a batch of rows, the answer all of them."""

import numpy as np
import pytest
import torch
from budgets import TINY

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.formula_parser import parse_formula
from cadsr_sklearn.search import build
from cadsr_sklearn.search.build import batch_weights, build_search, score_batch
from cadsr_sklearn.settings import SearchSettings


def test_a_batch_is_drawn_only_above_its_size_and_the_same_for_a_seed():
    y = np.random.default_rng(0).normal(size=1001)
    assert score_batch(y[:1000], 1000, 0) is None and score_batch(y, None, 0) is None
    batch = score_batch(y, 1000, 0)
    assert len(batch) == 1000 == len(np.unique(batch)) and np.all(np.diff(batch) > 0)
    np.testing.assert_array_equal(batch, score_batch(y, 1000, 0))
    assert not np.array_equal(score_batch(y, 10, 0), score_batch(y, 10, 1))


def test_a_batch_spans_the_target_as_the_table_does():
    y = np.random.default_rng(1).lognormal(size=100_000)  # a long upper tail
    batch = score_batch(y, 100, 0)
    # one row from each hundredth of the rows in the order of y: the largest hundredth too
    assert np.sum(y[batch] >= np.quantile(y, 0.99)) == 1
    ranks = np.argsort(np.argsort(y))[batch] // 1000
    np.testing.assert_array_equal(np.sort(ranks), np.arange(100))


def test_the_batch_counts_as_every_observation():
    batch = np.array([0, 2, 5])
    np.testing.assert_allclose(batch_weights(None, batch, 10), [10 / 3] * 3)
    w = np.arange(1.0, 11.0)
    np.testing.assert_allclose(batch_weights(w, batch, 10).sum(), w.sum())
    np.testing.assert_allclose(batch_weights(w, batch, 10), w[batch] * w.sum() / w[batch].sum())


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, size=(3000, 3))
    return X, 2.5 * X[:, 0] * X[:, 1] ** 2 + rng.normal(0, 0.05, 3000)


def test_the_answer_is_fitted_and_scored_on_every_row(data):
    X, y = data
    model = CADSRRegressor(**{**TINY, "n_epochs": 6}, row_batch=300).fit(X, y)
    for row in model.pareto_front_:
        residuals = row.expression.evaluate(X) - y
        assert row.loss == pytest.approx(np.mean(residuals ** 2), rel=1e-9)
        # constants fitted on every row of the table, not on const_fit_samples=1000 of them
        assert row.uncertainty.dof == len(y) - row.expression.n_fitted
    # each row's criterion is what a search without a batch gives it on the whole table,
    # its constants polished there from the row's own (already the fit on every row)
    settings = SearchSettings.from_params({**model.get_params(), "row_batch": None})
    whole = build_search(settings, X, y, None, torch.device("cpu"), 0, 0).final_scorer
    rows = model.pareto_front_
    again = whole.refit([row.expression for row in rows], fresh_starts=False)
    for row, scored in zip(rows, again):
        assert row.criterion == pytest.approx(scored.criterion, rel=1e-7)
        assert row.reward == pytest.approx(scored.reward, rel=1e-7)


def test_no_batch_below_its_size(data):
    X, y = data
    params = {**TINY, "n_epochs": 4}
    a = CADSRRegressor(**params, row_batch=None).fit(X, y)
    b = CADSRRegressor(**params, row_batch=len(y)).fit(X, y)
    assert [h["best_reward"] for h in a.history_] == [h["best_reward"] for h in b.history_]
    assert a.expression_ == b.expression_


def _gradient_on(expression, X, y, rows):
    """d(mean squared residual)/d(constants) on ``rows``, by central differences."""
    free = np.flatnonzero(~expression.fixed)
    gradient = []
    for k in free:
        step = 1e-6 * max(1.0, abs(expression.constants[k]))
        losses = []
        for sign in (1, -1):
            constants = expression.constants.copy()
            constants[k] += sign * step
            moved = expression.with_constants(constants)
            losses.append(np.mean((moved.evaluate(X[rows]) - y[rows]) ** 2))
        gradient.append((losses[0] - losses[1]) / (2 * step))
    return np.array(gradient)


def test_the_answer_is_the_least_squares_fit_on_every_row(data):
    # 3000 rows, constants fitted on 1000 in the loop: the answer's constants are those of
    # all 3000, so the criterion compares formulas at their best fit where it charges them
    X, y = data
    model = CADSRRegressor(**{**TINY, "n_epochs": 6}).fit(X, y)
    fitted = [row for row in model.pareto_front_ if row.expression.n_fitted]
    assert fitted
    for row in fitted:
        every = _gradient_on(row.expression, X, y, np.arange(len(y)))
        scale = np.mean(y ** 2)
        assert np.all(np.abs(every) < 1e-6 * scale), (row.equation, every)


def test_a_table_above_the_answer_rows_is_judged_on_a_stratified_sample(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(build, "ANSWER_ROWS", 2000)
    settings = SearchSettings.from_params(CADSRRegressor(**TINY).get_params())
    search = build_search(settings, X, y, None, torch.device("cpu"), 0, 0)
    final = search.final_scorer
    sample = score_batch(y, 2000, 0)
    # the rows of the training set a formula's constants are fitted on: every one of the
    # sample (the fitter's own rows index the sample); S is the sample's
    [line] = final.refit([parse_formula("2.0*x0 + 0.5", ["x0", "x1", "x2"], search.library)])
    np.testing.assert_array_equal(line.fitted_rows, sample)
    np.testing.assert_array_equal(final.fitter.rows_, np.arange(2000))
    assert final.reward.n_samples == 2000 and final.screen is None
    assert len(search.scorer.fitter.rows_) == 1000  # the loop's fitter is as before
