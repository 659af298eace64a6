"""Snapping noisy constants to simple numbers, judged by the BIC; fixed literals."""

import math
import pickle

import time

import numpy as np
import pytest
import sympy

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.search.refinement.pruning import prune
from cadsr_sklearn.scoring.rewards import make_reward
from cadsr_sklearn.scoring.scorer import Scorer
from cadsr_sklearn.expressions.simple_numbers import (
    candidates, resolves, rival_gap, snap_number)
from cadsr_sklearn.front.uncertainty import constant_uncertainty
from cadsr_sklearn.search.refinement.snapping import snap

LIB = Library(2)
x0, x1 = sympy.symbols("x0 x1")


def _scorer(X, y):
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    return Scorer(fitter, reward, X)


def _noisy(f, noise, n=2000, low=0.5, high=2.0, seed=0):
    """Rows of two features and f(X) with SRBench's noise γ (σ = γ·rms(y))."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(low, high, (n, 2))
    y = f(X)
    return X, y + noise * np.sqrt(np.mean(y ** 2)) * rng.standard_normal(n)


def _fitted(names, X, y):
    score = _scorer(X, y)
    (cand,) = score([Expression.from_names(names, LIB, order="prefix")])
    return cand, score


def _errors(score, y):
    """The standard errors of a formula's constants on the rows ``score`` fits them on."""
    return lambda e: constant_uncertainty(e, score.X, y, None, score.fitter.rows_).standard_errors


def _polished(score, y):
    return lambda es: score.refit(es, fresh_starts=False), _errors(score, y)


def _snapped(names, X, y, **kw):
    cand, score = _fitted(names, X, y)
    return cand, snap(cand, *_polished(score, y), **kw)


def _nearby(value, rtol):
    return candidates(value, rtol * abs(value))


# ------------------------------------------------------------------ simple numbers
def test_candidates_list_the_simplest_numbers_first():
    values = [n.value for n in _nearby(0.97, 0.05)]
    assert values[0] == 1.0  # before 23/24-like fractions, π/3 or e^0
    assert all(abs(v - 0.97) <= 0.05 * 0.97 for v in values)
    assert len(values) == len(set(values))
    costs = [n.cost for n in _nearby(0.97, 0.05)]
    assert costs == sorted(costs)


def _first_resolved(value, standard_error):
    found = candidates(value, 4 * standard_error, standard_error, limit=1)
    return found[0].symbol if found else None


@pytest.mark.parametrize("value, error, expected", [
    (0.4993, 0.002, sympy.Rational(1, 2)),  # 1/3, its nearest rival, lies 83 σ away
    (0.4545, 0.02, sympy.Rational(1, 2)),  # only 1/2 is resolved (and 2.3 σ off: too far)
    (3.14, 0.03, sympy.pi),  # 3 is cheaper but 4.7 σ away
    (7 * math.pi / 6, 1e-12, 7 * sympy.pi / 6),  # pinned down: 11/3 is 1.5e-3 away
    (9.87, 0.1, None),  # π² or 10? the data cannot tell
    (1.73, 0.01, None),  # √3 or its rival 7/4, 2 σ away?
    (1.7321, 0.003, sympy.sqrt(3)),  # 7/4 lies 6 σ away
    # h**2/(8*pi**2*E_n*d**2) on exact rows; at 10 % noise 1/79 is its rival
    (1 / (8 * math.pi**2), 1e-15, 1 / (8 * sympy.pi**2)),
    (0.0126972, 2.5e-5, None),
])
def test_a_number_is_resolved_only_when_the_data_reject_its_rivals(value, error, expected):
    assert _first_resolved(value, error) == expected


def test_elevenths_are_not_resolved_by_a_few_noisy_rows():
    five_elevenths = next(n for n in candidates(5 / 11, 1e-9))
    assert resolves(five_elevenths, 0.4545, 1e-4)
    assert resolves(five_elevenths, 0.4545, 0.002)  # 6/13 lies 3.5 σ away, 4/9 5 σ
    assert not resolves(five_elevenths, 0.4545, 0.003)  # 6/13 lies 2.3 σ away
    assert not resolves(five_elevenths, 0.4545, 0.02)
    assert not resolves(five_elevenths, 0.4545, math.inf)


def test_the_gap_is_the_distance_to_the_nearest_rival():
    assert rival_gap(0.5) == pytest.approx(1 / 6)  # 1/3: ln 3 ≤ ln 2 + ln 2
    assert rival_gap(1.0) == pytest.approx(0.5)  # 1/2
    assert rival_gap(2 * math.pi) == pytest.approx(2 * math.pi - 6)
    assert rival_gap(7 * math.pi / 6) == pytest.approx(11 / 3 - 7 * math.pi / 6)
    assert math.isnan(rival_gap(0.123456789))


def test_candidates_offer_pi_and_powers_of_e_and_the_rule_decides():
    assert any(n.symbol == sympy.pi / 2 for n in _nearby(1.5702, 0.01))
    assert any(n.symbol == sympy.E for n in _nearby(2.7183, 0.001))
    assert _first_resolved(2.7183, 3e-4) == sympy.E
    assert _first_resolved(2.75, 0.1) is None  # 3 is cheaper and 2.5 σ away


def test_one_over_multiples_of_pi_come_before_finer_fractions():
    assert _nearby(0.0797, 0.01)[0].symbol == 1 / (4 * sympy.pi)


def test_small_constants_without_a_resolved_neighbour_are_left_alone():
    # 1/39 = 0.02564 is near, but 1/40 is as short and 1.2 σ away
    assert candidates(0.0256, 0.002, 0.0005) == []


@pytest.mark.parametrize("value", [0.0, 1e-12, math.nan, math.inf, 1e7])
def test_there_is_nothing_near_zero_tiny_huge_or_undefined_values(value):
    assert _nearby(value, 0.05) == []


def test_every_offered_number_is_found_again_exactly():
    # a literal is stored as a float; its exact form is recovered for display
    for value in (0.97, 1.57, 2.31, 0.61, 7.4, -3.05):
        for number in _nearby(value, 0.05):
            assert snap_number(number.value, rtol=0.0) == number.symbol


# ------------------------------------------------------------------ fixed literals
def test_a_fixed_literal_is_a_node_but_not_a_parameter():
    e = Expression.from_names(["mul", "c", "x0"], LIB, constants=[2.01])
    fixed = e.with_literal(0, 2.0)
    assert (e.n_fitted, fixed.n_fitted) == (1, 0)
    assert fixed.complexity == e.complexity - 1 == 3
    assert fixed.key != e.key
    assert fixed.to_sympy() == 2 * x0
    assert fixed.to_sympy(symbolic_constants=True) == 2 * x0
    clone = pickle.loads(pickle.dumps(fixed))
    assert clone.key == fixed.key and list(clone.fixed) == [True]
    assert clone.with_constants([2.0]).key == fixed.key


def test_the_fit_leaves_a_literal_alone_and_fits_the_rest():
    X, y = _noisy(lambda X: 2 * X[:, 0] - X[:, 1], 0.0)
    e = Expression.from_names(["sub", "mul", "c", "x0", "mul", "c", "x1"], LIB, order="prefix")
    held = e.with_literal(0, 3.0)  # the wrong value on purpose: it must stay
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    (fitted,) = fitter.fit([held])
    assert fitted.constants[0] == 3.0 and fitted.fixed[0]
    rows, target = fitter.X, fitter.target  # the rows LM sees
    best = np.linalg.lstsq(rows[:, 1:], 3 * rows[:, 0] - target, rcond=None)[0][0]
    assert fitted.constants[1] == pytest.approx(best, rel=1e-8)
    # the same structure with another literal is another formula, not a cache hit
    (other,) = fitter.fit([e.with_literal(0, 2.0)])
    assert other.constants[1] == pytest.approx(1.0, rel=1e-8)


# ------------------------------------------------------------------ snapping
def test_a_noisy_factor_of_two_becomes_two():
    X, y = _noisy(lambda X: 2 * X[:, 0], 0.1)
    found, snapped = _snapped(["mul", "c", "x0"], X, y)
    assert found.expression.constants[0] != 2.0
    assert snapped.expression.to_sympy() == 2 * x0
    assert snapped.reward > found.reward
    assert snapped.expression.complexity == found.expression.complexity - 1


def test_a_deadline_already_past_still_lets_the_first_round_run():
    # the answer's snap starts after pruning, which may have used the budget: its first
    # round runs whatever the clock says, the later ones only before the deadline
    X, y = _noisy(lambda X: X[:, 0] * (3 - X[:, 0] - 2 * X[:, 1]), 0.1, low=0.0, high=1.0)
    names = ["mul", "x0", "sub", "sub", "c", "x0", "mul", "c", "x1"]
    found, snapped = _snapped(names, X, y, deadline=time.perf_counter() - 1)
    assert found.expression.n_fitted == 2 and snapped.expression.n_fitted == 1


def test_a_noisy_offset_of_one_becomes_one():
    X, y = _noisy(lambda X: X[:, 1] / (X[:, 0] + 1.0), 0.1)
    found, snapped = _snapped(["div", "x1", "add", "x0", "c"], X, y)
    assert abs(found.expression.constants[0] - 1.0) > 1e-4
    assert snapped.expression.to_sympy() == x1 / (x0 + 1)


def test_a_noisy_exponent_becomes_an_integer():
    X, y = _noisy(lambda X: X[:, 0] ** 2 * X[:, 1], 0.1)
    found, snapped = _snapped(["mul", "pow", "x0", "c", "x1"], X, y)
    assert snapped.expression.to_sympy() == x0 ** 2 * x1


def test_several_constants_are_snapped_one_at_a_time():
    X, y = _noisy(lambda X: X[:, 0] * (3 - X[:, 0] - 2 * X[:, 1]), 0.1, low=0.0, high=1.0)
    names = ["mul", "x0", "sub", "sub", "c", "x0", "mul", "c", "x1"]
    found, snapped = _snapped(names, X, y)
    assert found.expression.n_fitted == 2
    assert sympy.expand(snapped.expression.to_sympy() - x0 * (3 - x0 - 2 * x1)) == 0
    assert snapped.expression.n_fitted == 0


def test_a_constant_the_data_need_stays():
    # 3/7 = 0.4286 and 5/12 = 0.4167 lie within the window; the data rule them out
    X, y = _noisy(lambda X: 0.426 * X[:, 0] + X[:, 1], 0.01)
    found, snapped = _snapped(["add", "mul", "c", "x0", "x1"], X, y)
    assert _nearby(found.expression.constants[0], 0.05)
    assert snapped is found


def test_no_snap_takes_the_loss_past_the_ceiling():
    # after an exact fit (the tol stop) the search passes the exact loss as the ceiling
    X, y = _noisy(lambda X: 2 * X[:, 0], 0.1, n=800)  # LM sees every row: no snap fits better
    found, snapped = _snapped(["mul", "c", "x0"], X, y)
    assert snapped is not found  # the BIC takes 2 ...
    _, kept = _snapped(["mul", "c", "x0"], X, y, max_loss=found.loss)
    assert kept.expression.key == found.expression.key  # ... but not past the ceiling


def test_snapping_is_deterministic():
    X, y = _noisy(lambda X: X[:, 0] * (3 - X[:, 0] - 2 * X[:, 1]), 0.1, low=0.0, high=1.0)
    names = ["mul", "x0", "sub", "sub", "c", "x0", "mul", "c", "x1"]
    first = _snapped(names, X, y)[1].expression
    second = _snapped(names, X, y)[1].expression
    assert first.key == second.key
    np.testing.assert_array_equal(first.constants, second.constants)


# ------------------------------------------------------------------ dead weight
@pytest.mark.parametrize("names", [
    ["add", "mul", "c", "x0", "mul", "c", "x1"],  # 2·x0 + 0.0012·x1
    ["mul", "mul", "c", "x0", "pow", "c", "x1"],  # 2·x0·1.0016**x1
])
def test_noise_fitting_dead_weight_is_pruned_and_the_rest_snapped(names):
    X, y = _noisy(lambda X: 2 * X[:, 0], 0.1)
    found, score = _fitted(names, X, y)
    pruned = prune(found, score.refit)
    snapped = snap(pruned, *_polished(score, y))
    assert snapped.expression.to_sympy() == 2 * x0


# ------------------------------------------------------------------ the estimator
def test_the_estimator_keeps_the_formula_before_snapping_and_predicts_the_snapped_tree():
    X, y = _noisy(lambda X: 2 * X[:, 0] + X[:, 1], 0.1, n=300)
    kw = dict(n_epochs=4, batch_size=100, ff_dim=32, random_state=0, device="cpu", n_jobs=1)
    model = CADSRRegressor(**kw).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), model.best_expression_.evaluate(X))
    assert model.best_expression_.complexity <= model.unsnapped_expression_.complexity
    plain = CADSRRegressor(snap_constants=False, **kw).fit(X, y)
    assert plain.unsnapped_expression_ is plain.best_expression_
    assert plain.unsnapped_expression_.key == model.unsnapped_expression_.key
    assert not plain.best_expression_.fixed.any()


def test_multiples_of_pi_have_small_numerators():
    # 17/(3π) = 1.8038 is within 1 % of 1.81, but no simpler than it
    assert all("pi" not in str(n.symbol) for n in _nearby(1.81, 0.01))


def test_the_bic_test_guards_snaps_whatever_the_reward():
    # with σ² = Var(y) the reward alone would let 0.426 become 4/(3π); the guard keeps it
    X, y = _noisy(lambda X: 0.426 * X[:, 0] + X[:, 1], 0.01, n=1000)
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    reward = make_reward("bic", y, bic_variance="target", likelihood="gaussian")
    score = Scorer(fitter, reward, X)
    (found,) = score([Expression.from_names(["add", "mul", "c", "x0", "x1"], LIB, order="prefix")])
    assert snap(found, *_polished(score, y), n_samples=len(y)) is found


def test_the_front_keeps_one_row_per_complexity_with_tau_star_in_its_slot():
    from cadsr_sklearn.scoring.scorer import Candidate, HallOfFame

    def cand(names, reward, loss):
        return Candidate(Expression.from_names(names, LIB, order="prefix"), reward, loss)

    hof = HallOfFame()
    rival = cand(["mul", "x0", "x1"], 11.0, 0.31)  # a snapped member in τ*'s slot
    tau = cand(["add", "x0", "x1"], 10.0, 0.5)
    hof.update([cand(["x0"], 9.0, 0.6), rival, cand(["add", "x0", "sin", "x1"], 8.0, 0.3)])
    front = hof.pareto_front(keep=tau)
    assert [c.complexity for c in front] == sorted({c.complexity for c in front})
    assert tau in front and rival not in front


def test_a_literal_costs_its_codelength():
    from math import log, pi

    from cadsr_sklearn.expressions.simple_numbers import FLOAT_CODELENGTH, codelength

    assert codelength(0.0) == codelength(1.0) == 0.0
    assert codelength(2.0) == codelength(0.5) == codelength(-1.0) == pytest.approx(log(2))
    assert codelength(79 / 2) == pytest.approx(log(79) + log(2))
    assert codelength(pi) == pytest.approx(log(4))  # naming π: π is not free
    assert codelength(pi / 2) == pytest.approx(log(2) + log(4))
    assert codelength(4 * pi**2) == pytest.approx(log(4) + log(8))
    assert codelength(4 * pi**2) < codelength(79 / 2)  # 39.48: 4π² is tried before 79/2
    assert codelength(0.4) < codelength(1 / (2 * pi) ** 0.5)  # 0.41: 2/5 before 1/√(2π)
    assert codelength(0.123456789) == FLOAT_CODELENGTH  # no simple number: a float's bits
    # more than two digits above or below is no simple number: a fitted decimal
    assert codelength(17459 / 2) == codelength(3013074890.0) == FLOAT_CODELENGTH


# ------------------------------------------------------------------ the description length
def _mdl_scorer(X, y):
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    criterion = make_reward("mdl", y, X=X, likelihood="gaussian")
    return Scorer(fitter, reward, X, criterion=criterion)


def test_a_constant_the_data_cannot_tell_from_zero_is_dropped():
    # x0·(c − x1) on data of −x0·x1 (10 % noise, 2000 rows): the fitted c is noise
    X, y = _noisy(lambda X: -X[:, 0] * X[:, 1], 0.1)
    score = _mdl_scorer(X, y)
    (found,) = score([Expression.from_names(["mul", "x0", "sub", "c", "x1"], LIB,
                                            order="prefix")])
    assert found.expression.constants[0] != 0
    snapped = snap(found, *_polished(score, y), n_samples=len(y))
    assert list(snapped.expression.constants) == [0.0] and snapped.expression.fixed.all()
    assert snapped.expression.to_sympy() == -x0 * x1
    # a constant the data need is not: 0.5 of 0.5 + x0·x1
    X, y = _noisy(lambda X: 0.5 + X[:, 0] * X[:, 1], 0.1)
    score = _mdl_scorer(X, y)
    (found,) = score([Expression.from_names(["add", "c", "mul", "x0", "x1"], LIB,
                                            order="prefix")])
    snapped = snap(found, *_polished(score, y), n_samples=len(y))
    assert snapped.expression.to_sympy() == x0 * x1 + sympy.Rational(1, 2)


def test_four_pi_squared_comes_before_seventy_nine_halves():
    # the pendulum's sqrt(c·L/g) with c = 4π² = 39.478: 79/2 is within 0.06 % of it
    values = [n.symbol for n in _nearby(39.5, 0.05)]
    assert values.index(4 * sympy.pi**2) < values.index(sympy.Rational(79, 2))
    for value in (0.97, 39.5, 1234.5, 0.0123, -7.77):
        for number in _nearby(value, 0.05):
            fraction, _ = number.symbol.as_coeff_Mul()
            assert abs(fraction.p) <= 99 and fraction.q <= 99, number


def test_an_exponent_is_snapped_to_a_fraction_only():
    # 2·x0**1.732 on 200 rows: √3 = 1.7321 is nearer and shorter to write than 7/4, but laws
    # raise to rational powers; and 7/4 is not resolved, √3 being its rival
    X, y = _noisy(lambda X: 2 * X[:, 0] ** 1.732, 0.1, n=200)
    score = _mdl_scorer(X, y)
    (found,) = score([Expression.from_names(["mul", "c", "pow", "x0", "c"], LIB,
                                            [2.0, 1.733], order="prefix")])
    snapped = snap(found, *_polished(score, y), n_samples=len(y))
    assert not snapped.expression.fixed[-1] and snapped.expression.constants[-1] != 1.75
