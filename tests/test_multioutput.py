"""Several outputs (a 2-D y: one search per column) and polars input."""

import pickle

import numpy as np
import pytest
from budgets import SMALL, TINY
from torch.optim.optimizer import register_optimizer_step_pre_hook

from cadsr_sklearn import CADSRRegressor

SEARCH = dict(SMALL, n_epochs=6)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, size=(150, 2))
    Y = np.c_[X[:, 0] + X[:, 1], X[:, 0] * X[:, 1]]
    return X, Y


@pytest.fixture(scope="module")
def model(data):
    X, Y = data
    return CADSRRegressor(**SEARCH).fit(X, Y)


def test_each_output_gets_its_own_formula_and_predictions_are_a_matrix(model, data):
    X, Y = data
    assert model.n_outputs_ == 2 and len(model.estimators_) == 2
    assert [str(e) for e in model.expression_] == ["x0 + x1", "x0*x1"]
    assert model.predict(X).shape == (150, 2)
    assert model.score(X, Y) == pytest.approx(1.0)
    assert len(model.equations_) == 2 and len(model.history_) == 2
    y_pred, y_std = model.predict(X[:5], return_std=True)
    assert y_pred.shape == y_std.shape == (5, 2)
    assert model.predict(X[:5], index=[0, -1]).shape == (5, 2)
    with pytest.raises(ValueError, match="one row per output"):
        model.predict(X[:5], index=[0, 1, 2])
    assert len(model.sympy()) == len(model.latex()) == len(model.export("python")) == 2


def test_an_output_is_searched_as_a_single_output_fit_of_its_column(model, data):
    X, Y = data
    alone = CADSRRegressor(**SEARCH).fit(X, Y[:, 1])
    assert alone.best_expression_.key == model.best_expression_[1].key
    assert alone.n_outputs_ == 1 and not hasattr(alone, "estimators_")
    column = CADSRRegressor(**TINY).fit(X, Y[:, :1])  # a column vector is one output
    assert column.predict(X).shape == (150, 1)
    np.testing.assert_array_equal(column.predict(X)[:, 0],
                                  CADSRRegressor(**TINY).fit(X, Y[:, 0]).predict(X))


def test_several_outputs_do_not_depend_on_n_jobs_and_survive_pickling(model, data):
    X, Y = data
    serial = CADSRRegressor(**SEARCH, n_jobs=1).fit(X, Y)
    assert [e.key for e in serial.best_expression_] == [e.key for e in model.best_expression_]
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_warm_start_and_checkpoints_work_per_output(data, tmp_path):
    X, Y = data
    noisy = Y + np.random.default_rng(1).normal(0, 0.3, Y.shape)  # no early stop
    model = CADSRRegressor(**TINY, warm_start=True).fit(X, noisy)
    model.fit(X, noisy)
    assert model.n_epochs_ == [2 * TINY["n_epochs"]] * 2
    path = tmp_path / "run.ckpt"
    CADSRRegressor(**TINY, checkpoint=path).fit(X, noisy)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "run.ckpt.output0", "run.ckpt.output0.front.csv",
        "run.ckpt.output1", "run.ckpt.output1.front.csv"]


def test_after_a_ctrl_c_the_outputs_left_are_searched_for_one_epoch_only(data):
    # Ctrl-C in the first output's second epoch: the user asked the fit to stop, so the
    # outputs after it must not be searched for their whole budget; each still needs a
    # formula for predict, and gets the best of a single epoch
    X, Y = data
    noisy = np.c_[Y, Y[:, 0] - Y[:, 1]] + np.random.default_rng(1).normal(0, 0.3, (150, 3))
    steps = []

    def interrupted_in_epoch_two(optimizer, args, kwargs):  # its policy update's first step
        steps.append(True)
        if len(steps) == TINY["steps_per_epoch"] + 1:
            raise KeyboardInterrupt

    # torch's hook on every optimizer's step: the policy's, after the epoch's batch was scored
    hook = register_optimizer_step_pre_hook(interrupted_in_epoch_two)
    try:
        with pytest.warns(RuntimeWarning,
                          match=r"Ctrl-C stopped the search of y0.*y1, y2") as caught:
            model = CADSRRegressor(**{**TINY, "n_epochs": 5}).fit(X, noisy)
    finally:
        hook.remove()
    assert caught[0].filename == __file__  # reported where fit was called
    assert model.interrupted_ and model.n_epochs_ == [1, 1, 1]
    assert model.stop_reason_ == ["interrupted", "n_epochs", "n_epochs"]
    assert [o.n_epochs for o in model.estimators_] == [5, 5, 5]  # as the user set them
    assert np.all(np.isfinite(model.predict(X))) and model.predict(X).shape == (150, 3)


def test_plots_ask_for_one_output(model):
    pytest.importorskip("matplotlib")
    from cadsr_sklearn.reporting.plotting import plot_pareto_front

    with pytest.raises(ValueError, match="several outputs"):
        plot_pareto_front(model)


def test_polars_frames_name_the_symbols(data):
    pl = pytest.importorskip("polars")
    X, Y = data
    frame = pl.DataFrame({"speed": X[:, 0], "mass [kg]": X[:, 1]})
    model = CADSRRegressor(**SEARCH).fit(frame, pl.Series("p", Y[:, 1]))
    assert list(model.feature_names_in_) == ["speed", "mass [kg]"]
    assert str(model.expression_) == "mass_kg*speed"
    assert model.score(frame, pl.Series("p", Y[:, 1])) == pytest.approx(1.0)
    both = CADSRRegressor(**SEARCH).fit(frame, pl.DataFrame({"s": Y[:, 0], "p": Y[:, 1]}))
    assert [str(e) for e in both.expression_] == ["mass_kg + speed", "mass_kg*speed"]
    with pytest.raises(ValueError, match="feature names"):
        model.predict(frame.select(["mass [kg]", "speed"]))


# ------------------------------------------------ one wrapper that the views ask
def test_every_view_reads_each_output_through_its_fitted_front(model, data):
    from cadsr_sklearn.front.fitted import FittedFront
    from cadsr_sklearn.multioutput import each_output, outputs_of

    X, _ = data
    outputs = outputs_of(model)
    assert [o.target for o in outputs] == ["y0", "y1"]
    assert [o.estimator for o in outputs] == model.estimators_
    assert model.expression_ == [o.front.chosen.equation for o in outputs]
    assert model.latex(index=0) == [o.front.latex(0) for o in outputs]
    # the parent's model_selection decides, whatever a copy holds
    model.estimators_[0].model_selection = "accuracy"
    try:
        assert outputs_of(model)[0].front.rule == "criterion"
        assert FittedFront.of(model.estimators_[0]).rule == "accuracy"
    finally:
        model.estimators_[0].model_selection = "criterion"
    rows = each_output(model, lambda output, i: output.front.row(i).formula, [0, -1])
    assert rows == [model.equations_[0]["formula"][0], model.equations_[1]["formula"].iloc[-1]]
    with pytest.raises(ValueError, match="one row per output"):
        each_output(model, lambda output, i: i, [0])
    alone = outputs_of(model.estimators_[1])  # a model of one output is one output
    assert len(alone) == 1 and alone[0].front.chosen.equation == model.expression_[1]


def test_a_column_vector_is_one_output_that_every_view_shows(data, capsys):
    from cadsr_sklearn.cli.printing import print_constants, print_formula
    from cadsr_sklearn.multioutput import outputs_of

    X, Y = data
    model = CADSRRegressor(**TINY).fit(X, Y[:, :1])
    assert model.n_outputs_ == 1 and len(model.estimators_) == 1
    output, = outputs_of(model)
    print_formula(output)
    print_constants(output)
    assert f"LaTeX:      {model.latex()[0]}" in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    from cadsr_sklearn.reporting.plotting import plot_predicted_vs_true

    plot_predicted_vs_true(model, X, Y[:, 0])  # its one output, plotted
