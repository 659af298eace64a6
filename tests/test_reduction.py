"""Dimensional reduction: known laws reduce to their groups, formulas written back in the
features predict what the reduced formula does, and fits with it keep every promise."""

import pickle
from fractions import Fraction

import numpy as np
import pytest
import sympy

from budgets import TINY, TINY_MODEL
from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.reporting.html_report import report_html
from cadsr_sklearn.search import training
from cadsr_sklearn.units.groups import dimensional_reduction
from cadsr_sklearn.units.quantities import parse_units

OPERATORS = dict(binary_operators=("add", "sub", "mul", "div"),
                 unary_operators=("sqrt", "sin", "exp"))


def _reduction(X_units, y_units, names, X=None):
    return dimensional_reduction(parse_units(X_units, y_units, names), names, X)


def _text(exprs) -> list[str]:
    return [str(e) for e in exprs]


# ----------------------------------------------------------------- the groups

def test_relativistic_mass_is_the_rest_mass_times_a_function_of_v_over_c():
    names = ["m_0", "v", "c"]
    X = np.array([[1.0, 1.0, 3.0], [2.0, 2.0, 10.0], [3.0, 1.5, 5.0]])
    reduction = _reduction(["kg", "m/s", "m/s"], "kg", names, X)
    assert reduction.n_groups == 1
    assert _text(reduction.group_formulas()) == ["v/c"]  # the ratio below 1 on these rows
    assert str(reduction.prefactor_formula()) == "m_0"
    assert reduction.description == "m_0 * f(v/c)"
    # without rows the enumeration's orientation: the same group, either way up
    flipped = _reduction(["kg", "m/s", "m/s"], "kg", names)
    assert _text(flipped.group_formulas())[0] in ("v/c", "c/v")


def test_coulombs_law_keeps_one_ratio_of_charges():
    names = ["q1", "q2", "epsilon", "r"]
    reduction = _reduction(["C", "C", "F/m", "m"], "N", names)
    assert reduction.n_groups == 1
    group = reduction.group_formulas()[0]
    assert group.free_symbols == {sympy.Symbol("q1"), sympy.Symbol("q2")}
    prefactor = reduction.prefactor_formula()
    # a force: a squared charge over ε r²
    assert sympy.Symbol("epsilon") in prefactor.free_symbols
    assert sympy.Symbol("r") in prefactor.free_symbols


def test_the_ideal_gas_law_and_a_pendulum_have_no_group_left():
    gas = _reduction(["mol", "K", "m^3", "J/(mol*K)"], "Pa", ["n", "T", "V", "R"])
    assert gas.n_groups == 0
    assert sympy.simplify(gas.prefactor_formula() - sympy.sympify("n*T*R/V")) == 0
    pendulum = _reduction(["m", "m/s^2", "kg"], "s", ["L", "g", "m"])
    assert pendulum.n_groups == 0  # the mass cannot enter: no other kilogram
    assert pendulum.prefactor == (Fraction(1, 2), Fraction(-1, 2), Fraction(0))  # sqrt(L/g)


def test_dimensionless_data_and_a_dimensional_constant_are_left_alone():
    assert _reduction(["1", "1"], "1", ["a", "b"]) is None
    assert _reduction(["m", "s"], None, ["L", "T"]) is None  # no target units
    assert _reduction(["au"], "day", ["a"]) is None  # Kepler: the constant carries units


def test_like_quantities_are_taken_relative_to_one_reference():
    # a dipole's field: lengths x, y, z over the distance r the prefactor holds
    names = ["epsilon", "p_d", "r", "x", "y", "z"]
    X = np.random.default_rng(0).uniform(1, 3, (50, 6))
    dipole = _reduction(["F/m", "C*m", "m", "m", "m", "m"], "V/m", names, X)
    assert dipole.description == "p_d/(epsilon*r**3) * f(x/r, y/r, z/r)"
    # a moment in a field of three components: each relative to the prefactor's Bx
    names = ["mom", "Bx", "By", "Bz"]
    X = np.random.default_rng(1).uniform(1, 5, (50, 4))
    energy = _reduction(["J/T", "T", "T", "T"], "J", names, X)
    assert energy.description == "Bx*mom * f(By/Bx, Bz/Bx)"
    # none in the prefactor: relative to the largest on the rows, so the ratios are below 1
    X = np.column_stack([np.full(20, 2.0), np.full(20, 9.0), np.full(20, 4.0)])
    plain = _reduction(["m", "m", "m"], "1", ["a", "b", "c"], X)
    assert plain.description == "f(a/b, c/b)"
    # two like quantities keep the rule of a single ratio: turned to be below 1
    mass = _reduction(["kg", "m/s", "m/s"], "kg", ["m_0", "c", "v"],
                      np.array([[1.0, 3.0, 1.0], [2.0, 10.0, 2.0]]))
    assert mass.description == "m_0 * f(v/c)"


def test_a_group_needing_large_exponents_completes_the_basis():
    # x [m³], y [m²]: the group x²/y³ is beyond the enumeration's exponents
    reduction = _reduction(["m^3", "m^2"], "m", ["x", "y"])
    assert reduction.n_groups == 1
    group = reduction.group_formulas()[0]
    assert sympy.simplify(group - sympy.sympify("x**2/y**3")) == 0 or \
        sympy.simplify(group - sympy.sympify("y**3/x**2")) == 0


def test_a_rewritten_formula_predicts_prefactor_times_f_of_the_groups():
    names = ["m_0", "v", "c"]
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(1, 5, 50), rng.uniform(1, 2, 50), rng.uniform(3, 10, 50)])
    reduction = _reduction(["kg", "m/s", "m/s"], "kg", names, X)
    inner = Library(1, ("add", "sub", "mul", "div"), ("sqrt", "exp"))
    # f(π) = 1.3 / sqrt(1 - π·π), with a constant
    f = Expression.from_names(["div", "c", "sqrt", "sub", "x0", "mul", "x0", "x0"], inner,
                              order="prefix")
    f = f.with_constants([1.3])
    outer = Library(3, ("add", "sub", "mul", "div"), ("sqrt", "exp"))
    law = reduction.rewrite(f, outer)
    expected = reduction.prefactor_values(X) * f.evaluate(reduction.group_values(X))
    np.testing.assert_allclose(law.evaluate(X), expected, rtol=1e-12)
    assert law.n_constants == 1
    # a half-integer exponent needs sqrt; without it, a clear ValueError
    pendulum = _reduction(["m", "m/s^2"], "s", ["L", "g"])
    with pytest.raises(ValueError, match="sqrt"):
        pendulum.constant_law(Library(2, ("add", "mul", "div"), ("sin",)))


def test_the_groups_must_be_defined_on_every_row():
    reduction = _reduction(["m", "m/s^2"], "s", ["L", "g"])
    assert reduction.applies_to(np.array([[1.0, 9.8], [2.0, 9.8]]))
    assert not reduction.applies_to(np.array([[-1.0, 9.8], [2.0, 9.8]]))  # sqrt of a negative


# ------------------------------------------------------------------- fits

def _relativistic(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(1, 5, n), rng.uniform(1, 2, n), rng.uniform(3, 10, n)])
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / X[:, 2] ** 2)
    return X, y


RELATIVISTIC = dict(X_units=["kg", "m/s", "m/s"], y_units="kg")


def test_a_law_without_groups_is_found_before_any_epoch():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (100, 2))
    y = 0.5 * X[:, 0] * X[:, 1] ** 2  # U = k x² / 2
    model = CADSRRegressor(**{**TINY, **OPERATORS}).fit(X, y, X_units=["kg/s^2", "m"],
                                                        y_units="J")
    assert model.reduction_.description == "x0*x1**2 * f()"
    assert model.found_by_ == "reduction" and model.stop_reason_ == "tol"
    assert model.n_epochs_ == 0 and model.n_evaluations_ >= 1
    assert sympy.simplify(model.sympy() - sympy.sympify("x0*x1**2/2")) == 0


def test_a_reduced_fit_writes_the_law_in_the_users_features_and_round_trips(tmp_path):
    X, y = _relativistic()
    y = y + np.random.default_rng(2).normal(0, 0.01, len(y))  # no exact stop: both searches run
    model = CADSRRegressor(n_epochs=30, **{**TINY_MODEL, **OPERATORS}).fit(X, y, **RELATIVISTIC)
    assert model.reduction_ is not None and model.reduction_.formulas
    assert model.reduction_.n_epochs == 15 and model.n_epochs_ == 15  # half the budget each
    # whatever wrote it, the formula is in the features and predicts what predict does
    assert model.sympy().free_symbols <= set(sympy.symbols("x0 x1 x2"))
    np.testing.assert_allclose(model.predict(X), model.best_expression_.evaluate(X))
    assert "dimensionless groups" in str(model) and "x0 * f(x1/x2)" in str(model)
    assert "Dimensional reduction" in report_html(model)
    path = tmp_path / "model.json"
    model.save_formula(path)
    loaded = CADSRRegressor.load_formula(path)
    np.testing.assert_allclose(loaded.predict(X), model.predict(X))
    assert loaded.reduction_.description == model.reduction_.description
    assert str(loaded) == str(model)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))


def test_the_reduction_changes_nothing_without_units_or_when_switched_off():
    X, y = _relativistic(80)
    plain = CADSRRegressor(**TINY).fit(X, y)
    assert plain.reduction_ is None
    off = CADSRRegressor(**{**TINY, "dimensional_reduction": False}).fit(X, y, **RELATIVISTIC)
    assert off.reduction_ is None
    same = CADSRRegressor(**{**TINY, "dimensional_reduction": False}).fit(X, y, **RELATIVISTIC)
    assert str(off.sympy()) == str(same.sympy())


def test_the_budget_is_shared_and_the_same_seed_gives_the_same_formula():
    X, y = _relativistic(100)
    X = X + np.random.default_rng(1).normal(0, 0.05, X.shape)  # no exact law: both run out
    y = y + np.random.default_rng(2).normal(0, 0.05, len(y))
    params = dict(n_epochs=7, **{**TINY_MODEL, **OPERATORS})
    a = CADSRRegressor(**params).fit(X, y, **RELATIVISTIC)
    b = CADSRRegressor(**params).fit(X, y, **RELATIVISTIC)
    assert a.n_epochs_ == 4 and a.reduction_.n_epochs == 3  # the original table first
    assert str(a.sympy()) == str(b.sympy())


def test_an_exact_fit_of_the_original_search_skips_the_groups():
    X, y = _relativistic(100)
    # m_0 alone, in a table where v/c is a group: the first epoch finds it exactly
    model = CADSRRegressor(**{**TINY, **OPERATORS, "n_epochs": 6}).fit(X, 2 * X[:, 0],
                                                                       **RELATIVISTIC)
    assert model.stop_reason_ == "tol" and model.found_by_ != "reduction"
    assert model.reduction_.n_epochs == 0 and "exact fit" in model.reduction_.note


def test_a_required_feature_missing_from_the_reduced_formulas_keeps_them_out():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (100, 3))
    y = 0.5 * X[:, 0] * X[:, 1] ** 2  # x2 [s] plays no part
    model = CADSRRegressor(**{**TINY, **OPERATORS, "required_features": ["x2"]}).fit(
        X, y, X_units=["kg/s^2", "m", "s"], y_units="J")
    assert model.reduction_.formulas  # c·k·x², handed over but kept out: it lacks x2
    x2 = int(model.best_expression_.library.variable_ids[2])
    assert all(x2 in row.expression.tokens for row in model.front_rows_)
    assert model.found_by_ != "reduction"


def test_a_warm_start_continues_without_reducing_again():
    X, y = _relativistic(80)
    model = CADSRRegressor(**{**TINY, **OPERATORS, "warm_start": True})
    model.fit(X, y, **RELATIVISTIC)
    model.fit(X, y, **RELATIVISTIC)
    assert model.reduction_ is None


@pytest.mark.parametrize("where", ["original", "groups"])
def test_a_ctrl_c_in_either_search_stops_the_fit_and_keeps_its_best(monkeypatch, where):
    X, y = _relativistic(100)
    y = y + np.random.default_rng(2).normal(0, 0.05, len(y))
    epoch, calls = training._epoch, []
    # 4 epochs: the original search's are calls 1-2, the groups' 3-4
    interrupt_at = 2 if where == "original" else 4

    def interrupted(search):
        calls.append(1)
        if len(calls) == interrupt_at:
            raise KeyboardInterrupt
        return epoch(search)

    monkeypatch.setattr(training, "_epoch", interrupted)
    model = CADSRRegressor(n_epochs=4, **{**TINY_MODEL, **OPERATORS}).fit(X, y, **RELATIVISTIC)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert len(calls) == interrupt_at  # no epoch after the Ctrl-C
    assert model.reduction_.interrupted == (where == "groups")
    assert np.all(np.isfinite(model.predict(X)))


def test_each_output_is_reduced_by_its_own_units():
    rng = np.random.default_rng(2)
    X = rng.uniform(1, 3, (60, 2))
    Y = np.column_stack([X[:, 0] * X[:, 1] ** 2, X[:, 1] ** 2])
    model = CADSRRegressor(**{**TINY, **OPERATORS}).fit(X, Y, X_units=["kg/s^2", "m"],
                                                        y_units=["J", "m^2"])
    assert [r.description for r in model.reduction_] == ["x0*x1**2 * f()", "x1**2 * f()"]
    assert model.found_by_ == ["reduction", "reduction"]
    assert str(model).count("dimensionless groups") == 2
