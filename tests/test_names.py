"""The user's names wherever a name is shown: the target's and the columns' own."""

from __future__ import annotations

import numpy as np
import pytest
from budgets import TINY

from cadsr_sklearn import CADSRRegressor, Expression, Library
from cadsr_sklearn.reporting import progress
from cadsr_sklearn.expressions.notation import target_names
from cadsr_sklearn.scoring.scorer import Candidate

pd = pytest.importorskip("pandas")


def _kepler_like(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a [AU]": rng.uniform(0.4, 10, n), "e": rng.uniform(0, 0.2, n)})
    return X, pd.Series(365.25 * X["a [AU]"] ** 1.5, name="P_days")


@pytest.fixture(scope="module")
def fitted():
    X, y = _kepler_like()
    return CADSRRegressor(**TINY).fit(X, y), X, y


# ----------------------------------------------------------------- target_names_
def test_target_names_come_from_what_y_carries():
    assert target_names(pd.Series([1.0, 2.0], name="T"), 1) == ["T"]
    assert target_names(pd.DataFrame({"T": [1.0, 2.0]}), 1) == ["T"]
    assert target_names(pd.DataFrame({"E": [1.0], "p": [2.0]}), 2) == ["E", "p"]
    # no name, or one that is no string (as scikit-learn takes feature names)
    assert target_names(np.ones(3), 1) == ["y"]
    assert target_names(pd.Series([1.0, 2.0]), 1) == ["y"]
    assert target_names(pd.DataFrame(np.ones((2, 2))), 2) == ["y0", "y1"]
    pl = pytest.importorskip("polars")
    assert target_names(pl.Series("T", [1.0, 2.0]), 1) == ["T"]
    assert target_names(pl.Series([1.0, 2.0]), 1) == ["y"]  # polars' default name is ""


def test_the_fit_keeps_the_targets_names(fitted):
    model, X, _ = fitted
    assert model.target_names_ == ["P_days"]
    plain = CADSRRegressor(**TINY).fit(X.to_numpy(), X["e"].to_numpy())
    assert plain.target_names_ == ["y"]


def test_several_outputs_keep_their_column_names():
    X, y = _kepler_like(30)
    Y = pd.DataFrame({"P_days": y, "half": X["e"] / 2})
    model = CADSRRegressor(**TINY).fit(X, Y)
    assert model.target_names_ == ["P_days", "half"]
    assert [e.target_names_ for e in model.estimators_] == [["P_days"], ["half"]]
    unnamed = CADSRRegressor(**TINY).fit(X, Y.to_numpy())
    assert unnamed.target_names_ == ["y0", "y1"]
    assert [e.target_names_ for e in unnamed.estimators_] == [["y0"], ["y1"]]


# ------------------------------------------------------------------- progress bar
def test_the_progress_bar_names_the_target():
    lib = Library(1)
    shown = progress.Progress(10, None, 1, 1.0, ["L"], np.linspace(1, 2, 20)[:, None],
                              target="T")
    shown.show(Candidate(Expression.from_names(["mul", "c", "x0"], lib, [2.5]), 0.0, 0.1))
    shown.close()
    assert "T = 2.5*L" in shown.bar.postfix


def test_a_fit_shows_its_target_on_the_bar(capsys):
    X, y = _kepler_like()
    CADSRRegressor(**{**TINY, "verbose": 1}).fit(X, y)
    assert "P_days = " in capsys.readouterr().err


# -------------------------------------------------------------------------- plots
def test_plots_use_the_target_and_the_columns_own_names(fitted):
    pytest.importorskip("matplotlib")
    from cadsr_sklearn.reporting import plotting

    model, X, y = fitted
    fig = plotting.plot_predicted_vs_true(model, X, y, data_name="the training data")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "true P_days" and ax.get_ylabel() == "predicted P_days"
    assert ax.get_title().startswith("P_days = ")
    assert "on the training data" in " ".join(t.get_text() for t in ax.texts)
    # the formulas in a_AU are shown with the column's name, as latex() sets it
    assert "a_AU" in model.pareto_front_[-1].formula
    assert r"\text{a [AU]}" in model.latex(index=-1)
    front = plotting.plot_pareto_front(model)
    texts = " ".join(t.get_text() for t in front.axes[0].texts + front.axes[1].texts)
    assert "a_AU" not in texts and "a [AU]" in texts
    assert "a_AU" not in ax.get_title() and "a [AU]" in ax.get_title()


def test_a_dollar_in_a_name_is_no_mathtext():
    pytest.importorskip("matplotlib")
    from cadsr_sklearn.reporting import plotting

    X, y = _kepler_like()
    model = CADSRRegressor(**TINY).fit(X, y.rename("cost in $"))
    fig = plotting.plot_predicted_vs_true(model, X, y)
    assert fig.axes[0].get_xlabel() == r"true cost in \$"
    fig.canvas.draw()  # mathtext would fail on an unbalanced $


# ------------------------------------------------------------------------- report
def test_the_report_names_the_target_as_the_model_does(fitted):
    from cadsr_sklearn.reporting.html_report import report_html

    model, X, y = fitted
    page = report_html(model, X, y.to_numpy())  # the data given carry no name
    assert "<title>CADSR report: P_days = " in page


# ---------------------------------------------------------------------------- CLI
def test_the_cli_plot_says_which_rows_it_is_drawn_on(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from cadsr_sklearn.reporting import plotting
    from cadsr_sklearn.cli import main

    X, y = _kepler_like(60)
    data = tmp_path / "planets.csv"
    pd.concat([X, y], axis=1).to_csv(data, index=False)
    drawn = []

    def save_all(model, X, y, folder, **kwargs):
        drawn.append((model.target_names_, len(y), kwargs.get("data_name")))
        return {}

    monkeypatch.setattr(plotting, "save_all", save_all)
    tiny = ["--epochs", "2", "--batch-size", "32", "--device", "cpu"]
    for extra in ([], ["--validation", "0.25"]):
        assert main(["fit", str(data), "--target", "P_days", "--out", str(tmp_path / "m.joblib"),
                     "--plots", str(tmp_path / "plots"), *extra, *tiny]) == 0
    assert drawn == [(["P_days"], 60, "the training data (60 rows)"),
                     (["P_days"], 15, "the 15 held-out rows (--validation 0.25)")]
