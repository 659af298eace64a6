"""The displayed formula's own constants (cadsr_sklearn.front.shown_constants): ``constants_``,
their intervals and ``predict(return_std=True)`` describe the numbers a user reads."""

import pickle

import numpy as np
import pytest
from budgets import TINY
from scipy import stats

from cadsr_sklearn import CADSRRegressor, Expression, Library
from cadsr_sklearn.cli import pendulum_data
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.expressions.notation import round_floats
from cadsr_sklearn.front.rows import CONSTANT_COLUMNS, constant_rows, report_front
from cadsr_sklearn.scoring.scorer import Candidate
from cadsr_sklearn.front.shown_constants import shown_constants
from cadsr_sklearn.front.uncertainty import constant_uncertainty

pd = pytest.importorskip("pandas")

ONE_FEATURE = Library(1, ("add", "mul", "div"), ("sqrt",), use_constants=True, use_one=False)


def _fitted(names, library, X, y, literal=None):
    """The tree ``names`` (BFS) with constants fitted to (X, y); with ``literal=(k, v)``,
    constant k first fixed to v (as snapping leaves it)."""
    tree = Expression.from_names(names, library)
    if literal is not None:
        tree = tree.with_constants(np.ones(tree.n_constants)).with_literal(*literal)
    (fitted,) = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1).fit([tree])
    return fitted


def _row(expression, X, y, names, snapped_from=None):
    """The front's row of ``expression``, reported as the estimator reports it."""
    with np.errstate(all="ignore"):
        loss = float(np.mean((y - expression.evaluate(X)) ** 2))
    candidate = Candidate(expression, 0.0, loss)
    report = report_front([candidate], candidate, X, y, None, names, simplify=True,
                          y_variance=float(np.var(y)), model_selection="criterion",
                          const_fit_samples=1000, snapped_from=snapped_from)
    return report.rows[0]


def _noisy_root(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.5, 3.0, size=(n, 1))
    return X, 2.0 * np.sqrt(1.5 * X[:, 0]) + 0.3 + rng.normal(0, 0.05, n)


def _interval(value, error, dof, level=0.95):
    half = stats.t.ppf(0.5 + level / 2, dof) * error
    return value - half, value + half


def test_a_reparametrised_constant_has_the_delta_method_standard_error():
    # sqrt(c0·x) + c1 reads k·sqrt(x) + c1 with k = √c0: as many constants, so the
    # shown ones' covariance is the delta-method transform of the tree's
    X, y = _noisy_root()
    tree = _fitted(["add", "sqrt", "c", "mul", "c", "x0"], ONE_FEATURE, X, y)
    row = _row(tree, X, y, ["x0"])
    c0, c1 = tree.constants  # BFS: c0 the added constant, c1 the one under the root
    se = constant_uncertainty(tree, X, y).standard_errors
    shown = constant_rows(row)
    assert [r["name"] for r in shown] == ["c0", "c1"] and not any(r["fixed"] for r in shown)
    assert str(row.constants.form) == "c0*sqrt(x0) + c1"
    k, b = shown
    assert k["shown"] in row.formula and b["shown"] in row.formula
    np.testing.assert_allclose([k["value"], b["value"]], [np.sqrt(c1), c0], rtol=1e-12)
    np.testing.assert_allclose(k["std_error"], se[1] / (2 * np.sqrt(c1)), rtol=1e-8)
    np.testing.assert_allclose(b["std_error"], se[0], rtol=1e-8)
    np.testing.assert_allclose([k["ci_low"], k["ci_high"]],
                               _interval(k["value"], k["std_error"], len(y) - 2), rtol=1e-12)
    assert row.constant_errors == (k["std_error"], b["std_error"])
    # predictions: the displayed form's delta method is the tree's, on the training rows
    g = np.vstack([np.sqrt(X[:, 0]), np.ones(len(y))])  # ∂(k·√x + b)/∂(k, b)
    cov = row.constants.uncertainty.covariance
    np.testing.assert_allclose(row.prediction_std(X), np.sqrt(np.einsum("in,ij,jn->n", g, cov, g)),
                               rtol=1e-6)


def test_constants_that_simplification_merged_are_one_with_the_dof_it_leaves():
    # c0·sqrt(c1·x) reads k·sqrt(x), k = c0·√c1: the tree's constants are not determined
    # one by one, their combination is, and the shown form has one constant, one more dof
    X, y = _noisy_root()
    y = y - 0.3
    tree = _fitted(["mul", "c", "sqrt", "mul", "c", "x0"], ONE_FEATURE, X, y)
    row = _row(tree, X, y, ["x0"])
    c0, c1 = tree.constants
    tree_u = constant_uncertainty(tree, X, y)
    assert np.all(np.isinf(tree_u.standard_errors))  # each alone: undetermined
    (k,) = constant_rows(row)
    np.testing.assert_allclose(k["value"], c0 * np.sqrt(c1), rtol=1e-10)
    g = np.array([np.sqrt(c1), c0 / (2 * np.sqrt(c1))])  # ∂k/∂(c0, c1)
    delta = np.sqrt(g @ tree_u.covariance @ g)
    n = len(y)
    np.testing.assert_allclose(k["std_error"], delta * np.sqrt((n - 2) / (n - 1)), rtol=1e-6)
    assert row.constants.uncertainty.dof == n - 1
    assert len(row.constant_errors) == 1 and len(row.uncertainty.standard_errors) == 2


def test_the_pendulum_shows_its_own_constant_and_says_the_exponent_was_snapped():
    # the demo's tree (L/(g·c1))**c0 with the exponent snapped to 1/2 reads 6.28·sqrt(L/g)
    X, _, T = pendulum_data(seed=0)
    X, T = X[:225], T[:225]  # the demo's training rows
    library = Library(2, ("mul", "div", "pow"), (), use_constants=True, use_one=False)
    names = ["pow", "div", "c", "x0", "mul", "x1", "c"]
    unsnapped = _fitted(names, library, X, T)
    snapped = _fitted(names, library, X, T, literal=(0, 0.5))
    before = Candidate(unsnapped, 0.0, float(np.mean((T - unsnapped.evaluate(X)) ** 2)))
    row = _row(snapped, X, T, ["L", "g"], snapped_from={snapped.key: before})
    assert row.formula.endswith("*sqrt(L/g)")
    k, s0 = constant_rows(row)
    c1 = snapped.constants[1]
    se_c1 = constant_uncertainty(snapped, X, T).standard_errors[1]
    assert k["name"] == "c0" and row.formula.startswith(k["shown"]) and not k["fixed"]
    np.testing.assert_allclose(k["value"], c1 ** -0.5, rtol=1e-12)
    np.testing.assert_allclose(k["std_error"], 0.5 * c1 ** -1.5 * se_c1, rtol=1e-8)
    assert k["ci_low"] < 2 * np.pi < k["ci_high"]
    assert np.isnan(k["fitted_value"])
    # the snapped exponent: listed, fixed, with the interval the fit gave it before
    fitted_before = constant_uncertainty(unsnapped, X, T)
    assert s0["name"] == "s0" and s0["shown"] == "1/2" and s0["value"] == 0.5 and s0["fixed"]
    assert np.isnan(s0["std_error"]) and np.isnan(s0["ci_low"])
    assert s0["fitted_value"] == unsnapped.constants[0] != 0.5
    np.testing.assert_allclose([s0["fitted_ci_low"], s0["fitted_ci_high"]],
                               fitted_before.intervals()[0], rtol=1e-12)
    assert row.unsnapped is unsnapped
    # predictions: the tree's delta method, which is the shown form's, k·sqrt(L/g)
    np.testing.assert_allclose(row.prediction_std(X),
                               np.sqrt(X[:, 0] / X[:, 1]) * k["std_error"], rtol=1e-6)


def test_constants_are_named_in_the_order_the_formula_reads_with_their_signs():
    library = Library(1, ("add", "mul", "div"), (), use_constants=True, use_one=False)
    rng = np.random.default_rng(3)
    X = rng.uniform(0.5, 3.0, size=(80, 1))
    y = 1.5 * X[:, 0] / (X[:, 0] + 2.7) - 0.3 + rng.normal(0, 0.01, 80)
    # BFS: c0 = −0.3 (the added one), c1 = 1.5, c2 = 2.7; the text reads 1.5, 2.7, −0.3
    tree = _fitted(["add", "mul", "c", "c", "div", "x0", "add", "x0", "c"], library, X, y)
    row = _row(tree, X, y, ["x0"])
    shown = constant_rows(row)
    assert [r["name"] for r in shown] == ["c0", "c1", "c2"]
    np.testing.assert_allclose([r["value"] for r in shown], tree.constants[[1, 2, 0]],
                               rtol=1e-10)
    assert shown[2]["shown"].startswith("-") and f"- {shown[2]['shown'][1:]}" in row.formula
    positions = [row.formula.index(r["shown"].lstrip("-")) for r in shown]
    assert positions == sorted(positions)


def test_a_number_simplification_wrote_as_a_simple_one_is_listed_as_fixed():
    # 2.5 to round-off: the formula reads 5*x0/2, and constants_ says where 5/2 came from
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 3.0, size=(40, 1))
    y = 2.5 * X[:, 0] * (1 + rng.normal(0, 1e-13, 40))
    tree = _fitted(["mul", "c", "x0"], ONE_FEATURE, X, y)
    row = _row(tree, X, y, ["x0"])
    assert "2.5" not in row.formula
    (s0,) = constant_rows(row)
    assert s0["fixed"] and s0["shown"] == "5/2" and s0["value"] == 2.5
    assert s0["fitted_value"] == tree.constants[0]
    assert s0["fitted_ci_low"] <= s0["fitted_value"] <= s0["fitted_ci_high"]
    assert s0["fitted_ci_high"] - s0["fitted_ci_low"] < 1e-9


@pytest.fixture(scope="module")
def snapped_model():
    # only c·x0 can fit, and 1.997 ± 0.003 snaps to 2: no constant is fitted any more
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.5, size=(100, 1))
    y = 2 * X[:, 0] + rng.normal(0, 0.05, 100)
    model = CADSRRegressor(**{**TINY, "n_epochs": 4}, binary_operators=("mul",),
                           unary_operators=("neg",), use_one=False, max_constants=1).fit(X, y)
    return model, X, y


def test_when_every_constant_is_snapped_return_std_is_that_of_the_fit_before(snapped_model):
    model, X, y = snapped_model
    assert str(model.expression_) == "2*x0" and model.best_expression_.n_fitted == 0
    table = model.constants_
    assert list(table.columns) == CONSTANT_COLUMNS
    (s0,) = table.to_dict("records")
    unsnapped = model.unsnapped_expression_
    before = constant_uncertainty(unsnapped, X, y)
    assert s0["fixed"] and s0["shown"] == "2" and np.isnan(s0["std_error"])
    assert s0["fitted_value"] == unsnapped.constants[0]
    np.testing.assert_allclose([s0["fitted_ci_low"], s0["fitted_ci_high"]], before.intervals()[0])
    assert s0["fitted_ci_low"] < 2 < s0["fitted_ci_high"]
    _, std = model.predict(X, return_std=True)
    assert np.all(std > 0)  # noisy data: the value is no surer for the snap
    np.testing.assert_allclose(std, before.prediction_std(unsnapped, X))


def test_a_formula_without_constants_has_no_rows_and_no_prediction_error():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.5, size=(60, 2))
    y = X[:, 0] * X[:, 1] + rng.normal(0, 0.05, 60)
    model = CADSRRegressor(**TINY, use_constants=False).fit(X, y)
    assert len(model.constants_) == 0 and list(model.constants_.columns) == CONSTANT_COLUMNS
    assert all(errors == () for errors in model.equations_["constant_errors"])
    np.testing.assert_array_equal(model.predict(X, return_std=True)[1], np.zeros(60))


def test_several_outputs_have_a_table_each_and_pickle():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 2.5, size=(80, 2))
    Y = np.column_stack([1.7 * X[:, 0] * X[:, 1], X[:, 0] + 0.4]) + rng.normal(0, 0.05, (80, 2))
    model = CADSRRegressor(**TINY).fit(X, Y)
    assert len(model.constants_) == 2
    for table, estimator in zip(model.constants_, model.estimators_):
        assert list(table.columns) == CONSTANT_COLUMNS
        chosen = next(r for r in estimator.pareto_front_ if r.selected)
        pd.testing.assert_frame_equal(table, pd.DataFrame(constant_rows(chosen),
                                                          columns=CONSTANT_COLUMNS))
    _, std = model.predict(X[:5], return_std=True)
    assert std.shape == (5, 2) and np.all(std >= 0)
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X[:5], return_std=True)[1], std)
    assert str(loaded.pareto_front_[0][0].constants.form) == str(
        model.pareto_front_[0][0].constants.form)


def test_a_constant_and_its_negative_are_named_in_the_order_the_text_reads_them():
    # -2.457*x0 + 2.457*x1: the printer shows the first one's sign apart from its number,
    # so both print as 2.457; c0 must still be the first, the negative one
    library = Library(2, ("add", "mul"), (), use_constants=True, use_one=False)
    tree = Expression.from_names(["add", "mul", "mul", "c", "x0", "c", "x1"], library)
    tree = tree.with_constants(np.array([-2.4567, 2.4567]))
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 3.0, size=(40, 2))
    y = tree.evaluate(X) + rng.normal(0, 0.01, 40)
    equation = tree.to_sympy(["x0", "x1"])
    assert str(round_floats(equation, 4)) == "-2.457*x0 + 2.457*x1"
    shown = shown_constants(equation, 4, tree, ["x0", "x1"], X, y)
    assert shown.names == ("c0", "c1") and shown.shown == ("-2.457", "2.457")
    assert str(shown.form) == "c0*x0 + c1*x1"
    np.testing.assert_array_equal(shown.uncertainty.values, [-2.4567, 2.4567])


def test_a_power_of_a_snapped_base_is_shown_with_the_base_and_no_fitted_constant():
    # (7/2)**x0 with the base snapped: nothing is fitted, so the formula shows 7/2, and
    # not exp(1.253*x0) with 1.253 listed as a fitted constant beside a fixed 7/2
    library = Library(1, ("mul", "pow"), (), use_constants=True, use_one=False)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 3.0, size=(60, 1))
    y = 3.5 ** X[:, 0] * (1 + rng.normal(0, 0.01, 60))
    tree = _fitted(["pow", "c", "x0"], library, X, y, literal=(0, 3.5))
    row = _row(tree, X, y, ["x0"])
    assert row.formula == "(7/2)**x0"
    (s0,) = constant_rows(row)
    assert s0["fixed"] and s0["shown"] == "7/2" and np.isnan(s0["std_error"])
