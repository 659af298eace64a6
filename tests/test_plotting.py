"""Plots of a fitted estimator: Pareto front, learning curve, predicted vs true, save_all."""

from __future__ import annotations

import copy
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from budgets import TINY  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from cadsr_sklearn import CADSRRegressor, Expression  # noqa: E402
from cadsr_sklearn.reporting import plotting  # noqa: E402

PLOTTED = dict(TINY, n_epochs=4)  # a learning curve of a few points


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, size=(80, 2))
    y = X[:, 0] ** 2 + np.sin(X[:, 1])
    return CADSRRegressor(**PLOTTED).fit(X, y), X, y


def test_pareto_front_marks_the_chosen_model(fitted):
    model, _, _ = fitted
    fig = plotting.plot_pareto_front(model)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "complexity" in ax.get_xlabel() and "loss" in ax.get_ylabel()
    stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert len(stars) == 1
    chosen = [row for row in plotting.front_rows(model) if row.selected][0]
    assert stars[0].get_xdata()[0] == chosen.complexity
    assert stars[0].get_ydata()[0] == pytest.approx(chosen.loss)
    labels = {t.get_text() for t in ax.texts}
    assert any(chosen.formula[:12] in text for text in labels)


def test_front_rows_are_sorted_and_mark_the_chosen_formula(fitted):
    model, _, _ = fitted
    rows = plotting.front_rows(model)
    assert [r.complexity for r in rows] == sorted(r.complexity for r in rows)
    (chosen,) = [r for r in rows if r.selected]
    assert chosen.equation == model.expression_


def test_learning_curve_criterion_and_r2(fitted):
    model, _, y = fitted
    fig = plotting.plot_learning_curve(model, y)
    assert len(fig.axes) == 2
    best_line, r2_line = fig.axes[0].get_lines()[0], fig.axes[1].get_lines()[0]
    # τ* is the best by the criterion: its curve never falls
    criterion = [h["best_criterion"] for h in model.history_]
    np.testing.assert_allclose(best_line.get_ydata(), criterion)
    assert np.all(np.diff(criterion) >= 0)
    assert fig.axes[0].get_ylabel() == "τ* by mdl"
    expected = 1 - np.array([h["best_loss"] for h in model.history_]) / np.var(y)
    np.testing.assert_allclose(r2_line.get_ydata(), expected)
    np.testing.assert_allclose(plotting.training_r2(model, y), expected)
    assert fig.axes[1].get_xlabel() == "epoch"


def test_learning_curve_without_variance_has_reward_only(fitted):
    model, _, _ = fitted
    bare = copy.deepcopy(model)
    bare.y_variance_ = 0.0  # a constant target's: no R² to show
    fig = plotting.plot_learning_curve(bare)
    assert len(fig.axes) == 1
    assert plotting.training_r2(bare) is None


def test_predicted_vs_true_reports_r2_and_nan(fitted):
    model, X, y = fitted
    fig = plotting.plot_predicted_vs_true(model, X, y)
    text = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert f"{model.score(X, y):.6f}" in text and "NaN" not in text

    # a formula undefined on part of the data: log(x0) with some x0 < 0
    broken = copy.deepcopy(model)
    log_x0 = Expression.from_names(["log", "x0"], model.best_expression_.library, order="prefix")
    broken.predict = log_x0.evaluate  # the chosen formula's attributes are read-only
    X_neg = X.copy()
    X_neg[:5, 0] = -1.0
    fig = plotting.plot_predicted_vs_true(broken, X_neg, y)
    assert "5 NaN predictions" in " ".join(t.get_text() for t in fig.axes[0].texts)


def test_predicted_vs_true_draws_a_few_rows_bigger(fitted):
    model, X, y = fitted

    def dot_size(n):
        fig = plotting.plot_predicted_vs_true(model, X[:n], y[:n])
        return fig.axes[0].collections[0].get_sizes()[0]

    assert dot_size(6) > 2 * dot_size(80)


def test_plots_draw_into_given_axes(fitted):
    model, X, y = fitted
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert plotting.plot_pareto_front(model, ax=left) is fig
    assert plotting.plot_predicted_vs_true(model, X, y, ax=right) is fig
    assert len(fig.axes) == 2


def test_save_all_writes_pngs(fitted, tmp_path):
    model, X, y = fitted
    paths = plotting.save_all(model, X, y, tmp_path / "new" / "folder")
    assert set(paths) == {"pareto_front", "learning_curve", "predicted_vs_true"}
    for path in paths.values():
        assert path.suffix == ".png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_constant_target_model_still_plots(tmp_path):
    X = np.arange(10.0).reshape(-1, 1)
    model = CADSRRegressor(**PLOTTED).fit(X, np.full(10, 3.0))
    paths = plotting.save_all(model, X, np.full(10, 3.0), tmp_path)
    assert len(paths) == 3


def test_unfitted_model_is_rejected():
    with pytest.raises(NotFittedError):
        plotting.plot_pareto_front(CADSRRegressor())


def test_missing_matplotlib_gives_install_hint(fitted, monkeypatch):
    model, _, _ = fitted
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes "import matplotlib" fail
    with pytest.raises(ImportError, match=r"pip install 'cadsr-sklearn\[plot\]'"):
        plotting.plot_pareto_front(model)
