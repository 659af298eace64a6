"""Small tables: no interpolants, honest exact fits, a warning, and cross-validated selection."""

import warnings

import numpy as np
import pytest
from budgets import TINY

from cadsr_sklearn import CADSRRegressor, SmallDataWarning
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.scoring.scorer import MIN_RESIDUAL_DOF, Candidate, fittable_constants
from cadsr_sklearn.front.selection import cross_validated_errors, select

# NIST StRD DanWood: radiated energy against temperature, certified model y = b1·x**b2
X6 = np.array([[1.309], [1.471], [1.490], [1.565], [1.611], [1.680]])
Y6 = np.array([2.138, 3.421, 3.597, 4.340, 4.882, 5.660])


def test_formulas_keep_residual_degrees_of_freedom():
    assert fittable_constants(10, 6) == 4
    assert fittable_constants(10, 2) == 0
    assert fittable_constants(3, 1000) == 3
    with pytest.warns(SmallDataWarning, match="max_constants='auto'") as caught:
        model = CADSRRegressor(**{**TINY, "n_epochs": 4, "max_constants": 10}).fit(X6, Y6)
    assert "(a third of the rows, 2 here)" in str(caught[0].message)
    assert caught[0].filename == __file__  # reported where fit was called
    for tree in model.equations_["expression"]:
        assert tree.n_fitted <= len(Y6) - MIN_RESIDUAL_DOF


def test_auto_allows_two_constants_and_one_per_three_rows_up_to_ten():
    assert [fittable_constants("auto", s) for s in (2, 3, 4, 6, 8, 9, 14, 30, 200)] == [
        0, 1, 2, 2, 2, 3, 4, 10, 10]
    assert fittable_constants("auto", 5.999999999999) == 2  # weights summing to 6


@pytest.mark.parametrize("max_constants", ["auto", 2])
def test_no_warning_when_the_constants_fit_the_table(max_constants):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallDataWarning)
        model = CADSRRegressor(**{**TINY, "n_epochs": 4, "max_constants": max_constants}).fit(
            X6, Y6)
    for row in model.pareto_front_:
        assert row.expression.n_constants <= 2  # constant tokens, snapped ones too


def test_an_exact_fit_needs_rows_to_spare():
    library = Library(1, ("add", "mul"), (), use_constants=True, use_one=False)
    line = Expression.from_names("add c mul c x0".split(), library, [1.0, 2.0], order="prefix")
    exact = Candidate(line, reward=0.0, loss=0.0)
    assert exact.is_exact(exact_loss=1e-30, n_rows=4)
    assert not exact.is_exact(exact_loss=1e-30, n_rows=3)  # a line through three points?
    assert not Candidate(line, 0.0, loss=1e-3).is_exact(exact_loss=1e-30, n_rows=100)


def test_cross_validation_refits_the_constants_without_the_held_out_row():
    library = Library(1, ("mul", "pow"), (), use_constants=True, use_one=False)
    power = Expression.from_names("mul c pow x0 c".split(), library, [0.7689, 3.8604],
                                  order="prefix")
    errors = cross_validated_errors([power], X6, Y6, None, const_fit_samples=1000)
    assert errors.shape == (1, 6)
    # each held-out error is that of the constants refitted on the other five rows
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter

    kept = np.arange(6) != 2
    fitter = ConstantFitter(X6[kept], Y6[kept], const_fit_samples=1000, random_state=0, n_jobs=1)
    (refit,) = fitter.fit([power], from_held=True, fresh_starts=False)
    assert errors[0, 2] == pytest.approx((refit.evaluate(X6[2:3])[0] - Y6[2]) ** 2)
    # leaving a row out costs accuracy: the held-out error exceeds the training error
    assert errors.mean() > np.mean((power.evaluate(X6) - Y6) ** 2)


def test_the_one_standard_error_rule_takes_the_simplest_row_within_reach():
    errors = np.array([[9.0, 9.0, 9.0, 9.0],     # simple and poor
                       [1.0, 1.4, 0.6, 1.0],     # within one standard error of the best
                       [0.5, 1.3, 0.6, 1.2],     # the lowest mean, 0.9 ± 0.2
                       [np.inf, 1, 1, 1]])       # undefined on a held-out row
    assert select([3.0, 1.0, 0.5, 0.1], [2, 4, 6, 8], "cv", best=3, cv_errors=errors) == 1


def test_model_selection_cv_reports_the_held_out_loss():
    model = CADSRRegressor(**{**TINY, "max_constants": 2, "model_selection": "cv"}).fit(X6, Y6)
    table = model.equations_
    chosen = int(np.flatnonzero(table["selected"])[0])
    assert np.all(table["cv_loss"] >= 0)
    assert table["cv_loss"][chosen] <= table["cv_loss"].min() * 10  # within reach of the best
    np.testing.assert_array_equal(model.predict(X6), table["expression"][chosen].evaluate(X6))


def test_weights_count_observations_and_a_small_sum_is_pointed_out():
    # frequency weights: 60 rows of weight 1/60 are one observation, not 60
    X = np.linspace(0.5, 2.0, 60)[:, None]
    with pytest.warns(SmallDataWarning, match=r"Only 1 rows \(the sample weights' sum.*"
                                              r"w \* len\(w\) / w\.sum\(\)"):
        model = CADSRRegressor(**TINY).fit(X, 2.0 * X[:, 0] + 1.0,
                                          sample_weight=np.full(60, 1 / 60))
    assert all(tree.n_fitted == 0 for tree in model.equations_["expression"])
