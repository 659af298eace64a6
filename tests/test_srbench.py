"""The SRBench submission in ``srbench/cadsr``, exercised the way SRBench's harness does."""

from __future__ import annotations

import importlib.util
import inspect
import itertools
from pathlib import Path

import numpy as np
import pytest
import sympy
from budgets import TINY
from sklearn.base import RegressorMixin

pd = pytest.importorskip("pandas")

FOLDER = Path(__file__).resolve().parents[1] / "srbench" / "cadsr"
ALLOWED_EVAL_KWARGS = {
    "test_params": dict,
    "max_train_samples": int,
    "scale_x": bool,
    "scale_y": bool,
    "pre_train": type(lambda: None),
    "use_dataframe": bool,
}
BUDGET = dict(TINY, max_time=5)  # the harness passes a time limit


def load_submission():
    """Import ``regressor.py`` from its path, as the harness does (not as a package)."""
    spec = importlib.util.spec_from_file_location(
        "srbench_cadsr_regressor", FOLDER / "regressor.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sub():
    return load_submission()


def frame(columns, n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0.5, 2.0, (n, len(columns))), columns=columns)
    y = X.iloc[:, 0].to_numpy() * X.iloc[:, 1].to_numpy() + np.sin(X.iloc[:, -1].to_numpy())
    return X, y


def fit(sub, columns, seed=0):
    from sklearn.base import clone

    est = clone(sub.est).set_params(**{**BUDGET, "random_state": seed})
    X, y = frame(columns, seed=seed)
    return est.fit(X, y), X


def predict_from_string(text, symbols, X):
    expr = sympy.parse_expr(text, local_dict={str(s): s for s in symbols})
    assert expr.free_symbols <= set(symbols), (text, expr.free_symbols)
    f = sympy.lambdify(symbols, expr, "numpy")
    with np.errstate(all="ignore"):
        return np.broadcast_to(np.asarray(f(*X.to_numpy().T), dtype=np.float64), (len(X),))


def test_submission_files_and_contract(sub):
    for name in ("regressor.py", "metadata.yml", "requirements.txt", "install.sh", "__init__.py"):
        assert (FOLDER / name).is_file(), name
    meta = (FOLDER / "metadata.yml").read_text()
    for key in ("authors:", "email:", "name:", "description:", "url:"):
        assert key in meta
    assert isinstance(sub.est, RegressorMixin)
    params = sub.est.get_params()
    assert params["random_state"] is not None and params["max_time"] > 0
    assert "X" in inspect.signature(sub.model).parameters
    assert set(sub.eval_kwargs) <= set(ALLOWED_EVAL_KWARGS)
    for key, value in sub.eval_kwargs.items():
        assert isinstance(value, ALLOWED_EVAL_KWARGS[key]), key
    sub.est.set_params(**sub.eval_kwargs["test_params"])  # the harness's quick test applies them
    assert isinstance(sub.hyper_params, (list, dict))


@pytest.mark.parametrize("columns", [["E", "beta", "x"], ["x 1", "lambda", "sin"]])
def test_model_string_predicts_like_the_estimator(sub, columns):
    est, X = fit(sub, columns)
    text = sub.model(est, X)
    names = sub.formula_names(columns)
    if columns[0] == "E":
        assert names == columns  # SymPy-named columns are written verbatim
    symbols = [sympy.Symbol(n) for n in names]
    # on the training rows, to round-off (the same bound simplification keeps to)
    y = est.predict(X)
    np.testing.assert_allclose(
        predict_from_string(text, symbols, X), y, rtol=0, atol=1e-10 * np.abs(y).max()
    )
    assert sub.model(est) == text  # without X, the fitted feature names are used
    assert isinstance(sub.complexity(est), int) and sub.complexity(est) >= 1


def test_formula_names_are_identifiers_and_distinct(sub):
    names = sub.formula_names(["x 1", "x_1", "lambda", "2nd", "sin", "a-b", "E"], reserved={"sin"})
    assert names == ["x_1_2", "x_1", "lambda_", "x_2nd", "sin_", "a_b", "E"]
    assert len(set(names)) == len(names) and all(n.isidentifier() for n in names)


def test_population_members_predict_and_print(sub):
    est, X = fit(sub, ["a", "b", "c"], seed=1)
    chosen = est.predict(X)
    population = sub.get_population(est)
    # one member per row of the front (this fit's has several: the test needs them)
    assert 2 <= len(population) == len(est.pareto_front_) <= 100
    symbols = sympy.symbols("a b c")
    predictions = []
    for member in population:
        assert isinstance(member, RegressorMixin)
        y = member.predict(X)
        assert y.shape == (len(X),)
        atol = 1e-10 * np.abs(y).max()
        np.testing.assert_allclose(
            predict_from_string(sub.model(member, X), symbols, X), y, rtol=0, atol=atol
        )
        predictions.append(y)
    # the members are the front's different formulas, each predicting its own values
    # (every row has a lower loss than those above it)
    assert len({sub.model(member, X) for member in population}) == len(population)
    assert not any(np.array_equal(p, q, equal_nan=True)
                   for p, q in itertools.combinations(predictions, 2))
    # and making them did not change est
    np.testing.assert_array_equal(est.predict(X), chosen)
    assert est.expression_ == est.pareto_front_[est.selections_["criterion"]].equation
    best = sub.get_best_solution(est)
    np.testing.assert_array_equal(best.predict(X), est.predict(X))
    assert any(np.array_equal(p, est.predict(X), equal_nan=True) for p in predictions)


def test_population_is_capped_at_100(sub, monkeypatch):
    est, X = fit(sub, ["a", "b", "c"], seed=2)
    row = est.pareto_front_[0]
    # a front of 300 rows, the 151st chosen
    monkeypatch.setattr(est, "front_rows_", [row] * 300)
    monkeypatch.setattr(est, "selections_", dict.fromkeys(est.selections_, 150))
    assert len(sub.get_population(est)) == 100


def test_islands_are_set_from_the_environment(sub, monkeypatch):
    assert sub.est.n_islands == 1 and sub.est.scheduler is None  # SRBench's one core a job
    monkeypatch.setenv("CADSR_ISLANDS", "4")
    monkeypatch.setenv("CADSR_SCHEDULER", "tcp://10.0.0.1:8786")
    est = load_submission().est
    assert (est.n_islands, est.scheduler) == (4, "tcp://10.0.0.1:8786")
    for bad in ("0", "two", "-1"):
        with pytest.raises(ValueError, match="CADSR_ISLANDS"):
            sub.islands_from_environment({"CADSR_ISLANDS": bad})
