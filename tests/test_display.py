"""What the user sees: faithful rounding, the Pareto front table, choosing a row of it."""

import numpy as np
import pytest
from budgets import TINY_MODEL
import sympy

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.notation import (DISPLAY_RTOL, faithful_digits, round_floats,
                                   sympy_values)

rho = sympy.Symbol("rho")
FAST = dict(TINY_MODEL, batch_size=100)


def _agrees(text_or_expr, symbols, X, reference, rtol=DISPLAY_RTOL):
    shown = sympy.sympify(text_or_expr, locals={s.name: s for s in symbols})
    values = sympy_values(shown, symbols, X)
    return np.max(np.abs(values - reference)) <= rtol * np.max(np.abs(reference))


def test_a_formula_is_evaluated_whatever_its_symbols_are_called():
    # features named as what lambdify's code refers to, or as the arguments it is given
    pi, sin, arg0, arg1 = sympy.symbols("pi sin _arg0 _arg1")
    X = np.random.default_rng(0).uniform(1, 2, (20, 4))
    form = pi * sympy.sin(sin) + arg0 / arg1
    values = sympy_values(form, [arg1, pi, sin, arg0], X)
    np.testing.assert_allclose(values, X[:, 1] * np.sin(X[:, 2]) + X[:, 3] / X[:, 0])
    # a symbol that is no argument takes no argument's value
    with pytest.raises((NameError, ValueError)):
        sympy_values(pi + sympy.Symbol("_arg0", positive=True), [pi], X[:, :1])


# ------------------------------------------------------------------ faithful rounding
def test_a_form_that_rounding_would_zero_gets_the_digits_it_needs():
    X = np.linspace(0.5, 3.0, 40)[:, None]
    found = sympy.Float(1.0000061) ** rho - sympy.Float(0.9999896)
    reference = sympy_values(found, [rho], X)
    assert not _agrees(round_floats(found, 4), [rho], X, reference)  # 1.0**rho - 1.0 = 0
    digits = faithful_digits(found, [rho], X, reference)
    assert digits > 4
    assert _agrees(round_floats(found, digits), [rho], X, reference)
    assert not _agrees(round_floats(found, digits - 1), [rho], X, reference)


def test_an_exponent_that_rounds_to_an_integer_is_that_integer():
    from cadsr_sklearn.expressions.notation import round_floats

    x = sympy.Symbol("x")
    found = sympy.sin(sympy.Float(0.94081) * x ** sympy.Float(1.00002)) ** sympy.Float(0.99999)
    assert str(round_floats(found, 4)) == "sin(0.9408*x)"
    assert str(round_floats(x ** sympy.Float(1.5004), 4)) == "x**1.5"  # not an integer: stays
    assert str(round_floats(x ** sympy.Float(-12.00004), 4)) == "x**(-12)"


def test_a_large_exponent_that_rounds_to_an_integer_stays_a_float():
    # A fit found on Feynman II.35.21 with units (seed 0, γ = 0.1): 18633.1 to four digits
    # is 18630, and as that integer the outer tanh's assumptions expanded x0**18630: the
    # fit's report never returned.
    from cadsr_sklearn.expressions.notation import round_floats

    x0 = sympy.Symbol("x0")
    inner = sympy.exp(x0 ** sympy.Float(18633.101448565885))
    found = sympy.tanh(x0 - sympy.Float(0.00693203865) * sympy.tanh(
        (sympy.Float(1.4923237) * x0 ** sympy.Float(1.17720304)) - inner))
    assert round_floats(x0 ** sympy.Float(13.00001), 4).exp.is_Float
    assert str(round_floats(found, 4)) == (
        "tanh(x0 - 0.006932*tanh(1.492*x0**1.177 - exp(x0**1.863e+4)))")


def test_four_digits_when_they_are_enough_and_none_without_floats():
    X = np.linspace(0.5, 3.0, 40)[:, None]
    assert faithful_digits(sympy.Float(2.123456789) * rho, [rho], X) == 4
    assert faithful_digits(2 * rho + sympy.pi, [rho], X) == 4


@pytest.mark.parametrize("seed", range(6))
def test_every_displayed_form_predicts_what_the_tree_predicts(seed):
    # property: on the training rows, formula, latex and sympy(precision=...) all mean the tree
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.5, 2.0, (120, 2))
    y = rng.uniform(0.5, 2.0) ** X[:, 0] * X[:, 1] + rng.normal(0, 0.01, 120)
    model = CADSRRegressor(n_epochs=3, **{**FAST, "random_state": seed}).fit(X, y)
    symbols = sympy.symbols("x0 x1")
    rows = model.equations_.to_dict("records")
    for i, row in enumerate(rows):
        reference = model.predict(X, index=i)
        assert _agrees(row["formula"], symbols, X, reference)
        assert _agrees(model.sympy(index=i, precision=2), symbols, X, reference)
        # the LaTeX shows that same faithful form
        assert model.latex(precision=2, index=i) == sympy.latex(model.sympy(index=i, precision=2))


# ------------------------------------------------------------------ the front
@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, (200, 2))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 0.05, 200)
    return CADSRRegressor(n_epochs=5, **FAST).fit(X, y), X


def test_the_front_is_strict_and_has_the_columns_people_read(model):
    model, X = model
    table = model.equations_
    assert list(table.columns) == ["complexity", "loss", "r2", "reward", "criterion", "equation",
                                   "formula", "constant_errors", "selected", "expression"]
    assert np.all(np.diff(table["complexity"]) > 0)
    assert np.all(np.diff(table["loss"]) < 0)  # each larger formula buys a lower loss
    assert len(set(map(str, table["equation"]))) == len(table)  # each formula once
    np.testing.assert_allclose(table["r2"], 1 - table["loss"] / model.y_variance_)
    assert table["selected"].sum() == 1
    # the typed records behind the table: the same rows, in the same order
    records = table.to_dict("records")
    assert [(r.complexity, r.loss, r.formula, r.selected, r.expression.key)
            for r in model.pareto_front_] == [
        (r["complexity"], r["loss"], r["formula"], r["selected"], r["expression"].key)
        for r in records]
    assert all(isinstance(r.formula, str) and r.digits >= 1 for r in model.pareto_front_)


def test_index_picks_a_row_of_the_front(model):
    model, X = model
    rows = model.equations_.to_dict("records")
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(model.predict(X, index=i), row["expression"].evaluate(X))
        assert model.sympy(index=i) == row["equation"]
    assert model.sympy(index=-1) == rows[-1]["equation"]
    chosen = next(r for r in rows if r["selected"])
    assert model.sympy() == chosen["equation"] == model.expression_
    with pytest.raises(IndexError, match="out of range"):
        model.predict(X, index=len(rows))
    with pytest.raises(TypeError, match="integer"):
        model.latex(index="best")
    with pytest.raises(ValueError, match="precision"):
        model.latex(precision=0)


@pytest.mark.parametrize("rule", ["criterion", "accuracy", "score"])
def test_model_selection_picks_the_row_its_rule_names(rule):
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, (200, 2))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 0.05, 200)
    model = CADSRRegressor(n_epochs=5, model_selection=rule, **FAST).fit(X, y)
    table = model.equations_
    chosen = int(np.flatnonzero(table["selected"])[0])
    if rule == "criterion":  # τ*: the highest criterion (the description length by default)
        assert chosen == int(np.argmax(table["criterion"]))
    elif rule == "accuracy":
        assert chosen == int(np.argmin(table["loss"]))
    else:
        loss, k = np.asarray(table["loss"]), np.asarray(table["complexity"])
        score = np.r_[0.0, -np.diff(np.log(loss)) / np.diff(k)]
        eligible = loss <= 1.5 * loss.min()
        assert chosen == int(np.flatnonzero(eligible)[np.argmax(score[eligible])])
    assert model.best_expression_ is table["expression"][chosen]
    np.testing.assert_array_equal(model.predict(X), table["expression"][chosen].evaluate(X))


def test_column_names_sympy_reads_as_something_else_get_symbols():
    from cadsr_sklearn.expressions.notation import symbol_names

    assert symbol_names(["E", "pi", "beta", "lambda", "force [N]", "mass"]) == [
        "E_", "pi_", "beta_", "lambda_", "force_N", "mass"]
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"E": rng.uniform(1, 2, 60), "mass": rng.uniform(1, 2, 60)})
    model = CADSRRegressor(n_epochs=2, **FAST).fit(X, np.e * X["E"] + X["mass"])
    text = str(model.expression_)
    read = sympy.sympify(text, locals={"E_": sympy.Symbol("E_")})
    # the same symbols; the numbers as str shows them (SymPy's 15 digits)
    assert read.free_symbols == model.expression_.free_symbols
    assert sympy.Symbol("E_") in read.free_symbols
    at = {sympy.Symbol("E_"): 1.3, sympy.Symbol("mass"): 1.7}
    assert float(read.subs(at)) == pytest.approx(float(model.expression_.subs(at)), rel=1e-13)


# ------------------------------------------------- choosing again after the fit
def _fit(**params):
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, (120, 2))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 0.05, 120)
    return CADSRRegressor(n_epochs=5, **FAST, **params).fit(X, y), X


def _chosen_view(model, X):
    """Everything that follows model_selection, in comparable form."""
    table = model.equations_
    return (model.expression_, model.best_expression_.key, list(table["selected"]),
            str(model.constants_), model.predict(X).tolist(), model.sympy(), model.latex(),
            [r.selected for r in model.pareto_front_])


def test_model_selection_can_change_after_fitting():
    model, X = _fit()
    assert model.selections_["criterion"] == int(np.flatnonzero(model.equations_["selected"])[0])
    for rule in ("accuracy", "score", "criterion"):
        assert model.set_params(model_selection=rule) is model
        assert model.get_params()["model_selection"] == rule  # stored as given
        fresh, _ = _fit(model_selection=rule)  # the search does not depend on the rule
        assert _chosen_view(model, X) == _chosen_view(fresh, X)
        assert model.selections_[rule] == int(np.flatnonzero(model.equations_["selected"])[0])


def test_reward_is_another_name_of_the_criterion_rule(tmp_path):
    import json

    model, X = _fit()
    by_criterion = _chosen_view(model, X)
    model.set_params(model_selection="reward")  # accepted, kept as given, chooses the same
    assert model.get_params()["model_selection"] == "reward"
    assert _chosen_view(model, X) == by_criterion
    assert "model_selection='reward' chose row" in str(model)
    aliased, _ = _fit(model_selection="reward")  # also at fit (the parameter check)
    assert _chosen_view(aliased, X) == by_criterion
    # a formula file written before the rename, its rule recorded as "reward", loads
    path = tmp_path / "model.json"
    model.set_params(model_selection="criterion").save_formula(path)
    document = json.loads(path.read_text())
    document.pop("checksum", None)  # files of then had none (an edited file must drop it)
    document["settings"]["model_selection"] = "reward"
    for output in document["outputs"]:
        output["selections"]["reward"] = output["selections"].pop("criterion")
    path.write_text(json.dumps(document))
    old = CADSRRegressor.load_formula(path)
    assert old.get_params()["model_selection"] == "reward"
    assert _chosen_view(old, X) == by_criterion
    assert _chosen_view(old.set_params(model_selection="criterion"), X) == by_criterion


def test_switching_to_cv_needs_a_fit_with_it():
    from cadsr_sklearn.front.selection import SelectionError

    model, X = _fit()
    model.set_params(model_selection="cv")  # accepted, as scikit-learn's set_params does
    with pytest.raises(SelectionError, match=r"refit.*model_selection='cv'"):
        model.predict(X)
    with pytest.raises(ValueError, match="refit"):
        model.expression_
    assert not hasattr(model, "best_expression_")  # absent, for hasattr and HTML displays
    model.set_params(model_selection="nope")
    with pytest.raises(ValueError, match="must be one of"):
        model.sympy()
    with_cv, _ = _fit(model_selection="cv")
    cv_row = with_cv.selections_["cv"]
    with_cv.set_params(model_selection="accuracy")
    assert with_cv.selections_["accuracy"] == int(np.argmin(with_cv.equations_["loss"]))
    with_cv.set_params(model_selection="cv")
    assert with_cv.expression_ == with_cv.equations_["equation"][cv_row]


def test_several_outputs_follow_the_parents_model_selection():
    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 2.0, (80, 2))
    Y = np.c_[X[:, 0] * X[:, 1] + rng.normal(0, 0.05, 80), X[:, 0] + X[:, 1] ** 2]
    model = CADSRRegressor(n_epochs=3, **FAST).fit(X, Y)
    model.set_params(model_selection="accuracy")
    for j, estimator in enumerate(model.estimators_):
        last = int(np.argmin(estimator.equations_["loss"]))
        assert estimator.model_selection == "accuracy"
        assert model.expression_[j] == estimator.equations_["equation"][last]
        np.testing.assert_array_equal(model.predict(X)[:, j],
                                      estimator.equations_["expression"][last].evaluate(X))
    model.model_selection = "criterion"  # set directly: the parent's parameter still decides
    assert model.expression_ == [e.pareto_front_[e.selections_["criterion"]].equation
                                 for e in model.estimators_]


# ------------------------------------------------------------ one text, one row
def _twins():
    """Two trees that read the same at four digits, 2.000*x0, at k = 2 and 4."""
    from cadsr_sklearn import Expression, Library
    from cadsr_sklearn.scoring.scorer import Candidate

    lib = Library(1)
    simple = Expression.from_names(["mul", "c", "x0"], lib, [2.00001])
    longer = Expression.from_names(["mul", "mul", "1", "c", "x0"], lib, [2.00002])
    return [Candidate(simple, -2.0, 1e-3), Candidate(longer, -1.0, 9e-4)]


@pytest.mark.parametrize("best", [0, 1])
def test_two_rows_never_show_the_same_text(best):
    from cadsr_sklearn.front.rows import report_front

    front = _twins()
    X = np.linspace(0.5, 2.0, 30)[:, None]
    y = 2.00001 * X[:, 0]
    report = report_front(front, front[best], X, y, None, ["x0"], simplify=True, y_variance=1.0,
                          model_selection="accuracy", const_fit_samples=1000)
    assert [r.formula for r in report.rows] == ["2.0*x0"]
    # the simpler tree, unless the other is τ*, which every rule must still find
    assert report.rows[0].expression.key == front[best].expression.key
    assert report.choices == {"criterion": 0, "accuracy": 0, "score": 0, "cv": 0}
