"""Rewards: the BIC, the description length and the ablation rewards."""

from __future__ import annotations

import warnings
from math import log

import numpy as np
import pytest
from components import reward_options
from scipy import stats

from cadsr_sklearn import Expression, Library
from cadsr_sklearn.scoring.rewards import (
    REWARDS,
    bic,
    make_reward,
    mdl,
    mse,
    nrmse,
    sample_size,
)
from cadsr_sklearn.search.rank_mapping import rank_weights

LIB = Library(1)
X = np.linspace(-1, 1, 200)[:, None]
Y = 3.39 * X[:, 0] ** 3 + 2.12 * X[:, 0] ** 2 + 1.78 * X[:, 0]


def expr(prefix: str, constants=None) -> Expression:
    return Expression.from_names(prefix.split(), LIB, constants=constants, order="prefix")


SIMPLE = expr("mul x0 x0")  # 3 nodes, k = 3
BIGGER = expr("add mul x0 x0 mul c x0", [0.0])  # 7 nodes + 1 constant, k = 8
#: make_reward's options as the estimator sets them (the paper's: η = 0.99, λ = 0.1, L = 32).
DEFAULTS = reward_options()
BIC_OPTIONS = [
    dict(bic_variance=v, likelihood=lik)
    for v in ("target", "mle")
    for lik in ("gaussian", "student_t")
]


def roundoff(y: np.ndarray, relative_mse: float, seed: int = 0) -> np.ndarray:
    """y plus noise whose MSE is ``relative_mse`` · mean(y²): a fit "exact" to round-off."""
    z = np.random.default_rng(seed).standard_normal(y.shape)
    z *= np.sqrt(relative_mse * np.mean(y**2) / np.mean(z**2))
    return y + z


# ----------------------------------------------------------------------------- BIC
def test_bic_matches_the_formula():
    rng = np.random.default_rng(0)
    y_pred = Y + 0.1 * rng.standard_normal(Y.shape)
    S, k, r = len(Y), 8, y_pred - Y
    var = np.var(Y)
    loglik = np.sum(stats.norm.logpdf(Y, loc=y_pred, scale=np.sqrt(var)))
    assert bic(y_pred, Y, k, variance="target") == pytest.approx(-(k * log(S) - 2 * loglik),
                                                                  rel=1e-12)
    mle = np.mean(r**2)
    loglik = np.sum(stats.norm.logpdf(Y, loc=y_pred, scale=np.sqrt(mle)))
    assert bic(y_pred, Y, k, variance="mle") == pytest.approx(-(k * log(S) - 2 * loglik), rel=1e-12)
    # the factory computes the same number
    reward = make_reward("bic", Y, bic_variance="mle", likelihood="gaussian")
    expected = bic(y_pred, Y, BIGGER.complexity, variance="mle")
    assert reward(y_pred, BIGGER) == pytest.approx(expected)


def test_student_t_matches_scipy():
    rng = np.random.default_rng(1)
    y_pred = Y + 0.2 * rng.standard_t(3, Y.shape)
    S, k, nu = len(Y), 5, 4.0
    for variance, sigma2 in (("target", np.var(Y)), ("mle", np.mean((y_pred - Y) ** 2))):
        scale = np.sqrt(sigma2 * (nu - 2) / nu)  # the t's variance is σ²
        loglik = np.sum(stats.t.logpdf(Y - y_pred, df=nu, scale=scale))
        got = bic(y_pred, Y, k, variance=variance, likelihood="student_t", nu=nu)
        assert got == pytest.approx(-(k * log(S) - 2 * loglik), rel=1e-10)


@pytest.mark.parametrize("options", BIC_OPTIONS)
def test_exact_fit_is_finite_and_beats_an_inexact_one(options):
    reward = make_reward("bic", Y, **options)
    exact = reward(Y.copy(), SIMPLE)
    assert np.isfinite(exact)
    assert exact > reward(roundoff(Y, 1e-6), SIMPLE)
    if options["bic_variance"] == "mle":
        # profile likelihood on noise-free data: even a more complex exact fit beats a
        # simple, slightly wrong one
        assert reward(Y.copy(), BIGGER) > reward(roundoff(Y, 1e-8), SIMPLE)


@pytest.mark.parametrize("options", BIC_OPTIONS)
@pytest.mark.parametrize("simple_mse,complex_mse", [(1e-30, 1e-32), (1e-32, 1e-30), (0.0, 1e-28)])
def test_among_exact_fits_the_simpler_wins(options, simple_mse, complex_mse):
    reward = make_reward("bic", Y, **options)
    simple = reward(roundoff(Y, simple_mse, 1), SIMPLE)
    complex_ = reward(roundoff(Y, complex_mse, 2), BIGGER)
    assert np.isfinite(simple) and np.isfinite(complex_)
    assert simple > complex_
    # and by about the complexity difference, not by round-off noise
    assert simple - complex_ == pytest.approx((BIGGER.complexity - SIMPLE.complexity) * log(len(Y)),
                                              rel=1e-3)


def test_bic_prefers_simpler_under_noise():
    rng = np.random.default_rng(3)
    y = Y + 0.05 * rng.standard_normal(Y.shape)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    truth = expr("add add mul c mul x0 mul x0 x0 mul c mul x0 x0 mul c x0", [3.39, 2.12, 1.78])
    # an overfitted variant: tiny extra term that lowers MSE by less than the k penalty
    over = expr("add add add mul c mul x0 mul x0 x0 mul c mul x0 x0 mul c x0 mul c sin x0",
                [3.39, 2.12, 1.78, 0.0])
    y_over = truth.evaluate(X) + 1e-4 * np.sin(X[:, 0])
    assert reward(truth.evaluate(X), truth) > reward(y_over, over)


def test_constant_target_gives_finite_rewards():
    y = np.full(50, 2.0)
    for name in REWARDS:
        reward = make_reward(name, y, X=X[:50], **DEFAULTS)
        assert np.isfinite(reward(np.full(50, 2.0), SIMPLE))
        assert np.isfinite(reward(np.full(50, 2.5), SIMPLE))
    zeros = make_reward("bic", np.zeros(10), bic_variance="mle", likelihood="gaussian")
    assert np.isfinite(zeros(np.zeros(10), SIMPLE))


@pytest.mark.parametrize("name", REWARDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e200])
def test_invalid_predictions_get_minus_inf(name, bad):
    reward = make_reward(name, Y, X=X, **DEFAULTS)
    y_pred = Y.copy()
    y_pred[17] = bad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = reward(y_pred, SIMPLE)
    assert got == -np.inf  # 1e200: finite, but its squared error overflows
    assert rank_weights(np.array([got, 0.0, -5.0]), 100, 3, lam=0.2)[0] == 0.0


def test_sample_weights_are_frequencies():
    # scikit-learn's meaning: weight k is the row k times, so S = Σw
    rng = np.random.default_rng(4)
    y_pred = Y + 0.1 * rng.standard_normal(Y.shape)
    counts = rng.integers(0, 4, len(Y))
    repeated = np.repeat(np.arange(len(Y)), counts)
    for name in REWARDS:
        weighted = make_reward(name, Y, X=X, sample_weight=counts, **DEFAULTS)
        plain = make_reward(name, Y[repeated], X=X[repeated], **DEFAULTS)
        assert weighted.n_samples == counts.sum() == plain.n_samples
        assert weighted(y_pred, BIGGER) == pytest.approx(plain(y_pred[repeated], BIGGER),
                                                         rel=1e-12)
    assert sample_size(len(Y), counts) == counts.sum() and sample_size(len(Y)) == len(Y)
    # so a constant weight is more data, not no weight, for the rewards that count rows
    tripled = make_reward("bic", Y, sample_weight=np.full(len(Y), 3.0), **DEFAULTS)
    once = make_reward("bic", Y, **DEFAULTS)
    assert tripled(y_pred, BIGGER) != pytest.approx(once(y_pred, BIGGER), rel=1e-6)
    # a zero-weight row does not matter at all
    w = np.ones(len(Y))
    w[5] = 0.0
    moved = y_pred.copy()
    moved[5] += 1e3
    for name in REWARDS:
        reward = make_reward(name, Y, X=X, sample_weight=w, **DEFAULTS)
        assert reward(moved, BIGGER) == pytest.approx(reward(y_pred, BIGGER), rel=1e-12)
    # weighted Gaussian log-likelihood with σ² = weighted variance, S = Σw
    w = rng.uniform(0.1, 2.0, len(Y))
    mean = np.average(Y, weights=w)
    var = np.average((Y - mean) ** 2, weights=w)
    loglik = np.sum(w * stats.norm.logpdf(Y, loc=y_pred, scale=np.sqrt(var)))
    assert bic(y_pred, Y, 8, sample_weight=w, variance="target") == pytest.approx(
        -(8 * log(w.sum()) - 2 * loglik))


def test_one_prediction_s_residuals_serve_every_reward_bound_to_the_same_targets():
    # the scorer computes a prediction's residuals once for the reward, the loss and the
    # criterion: each must be what the reward computes from the prediction itself
    rng = np.random.default_rng(6)
    y_pred = Y + 0.2 * rng.standard_normal(Y.shape)
    w = rng.uniform(0.5, 2.0, len(Y))
    for weights in (None, w):
        bic_reward = make_reward("bic", Y, X=X, sample_weight=weights, **DEFAULTS)
        valid = bic_reward.residuals(y_pred)
        assert valid.mean_square == bic_reward.loss(y_pred) == mse(y_pred, Y, weights)
        for name in REWARDS:
            other = make_reward(name, Y, X=X, sample_weight=weights, **DEFAULTS)
            assert other.shares_targets(bic_reward)
            assert other.of_residuals(valid, BIGGER) == other(y_pred, BIGGER)
            assert other.of_residuals(None, BIGGER) == -np.inf
    assert bic_reward.residuals(np.full_like(Y, np.nan)) is None
    assert bic_reward.residuals(np.full_like(Y, 1e200)) is None  # its squares overflow
    plain = make_reward("bic", Y, **DEFAULTS)
    assert not plain.shares_targets(bic_reward)  # weighted against unweighted
    assert not plain.shares_targets(make_reward("bic", Y + 1.0, **DEFAULTS))


# ----------------------------------------------------------------------------- ablation rewards
def test_ablation_rewards_match_their_definitions():
    rng = np.random.default_rng(5)
    y_pred = Y + 0.3 * rng.standard_normal(Y.shape)
    rmse = np.sqrt(np.mean((y_pred - Y) ** 2))
    e = expr("mul mul x0 x0 mul c x0", [1.0])  # 3 multiplications, 7 nodes
    assert make_reward("nrmse", Y)(y_pred, e) == pytest.approx(1 / (1 + rmse / np.std(Y)))
    assert make_reward("spl", Y, spl_eta=0.9)(y_pred, e) == pytest.approx(0.9**3 / (1 + rmse))
    expected = 1 / (1 + rmse**2 / np.var(Y)) + 0.5 * np.exp(-7 / 20)
    tpsr = make_reward("tpsr", Y, tpsr_lambda=0.5, max_length=20)
    assert tpsr(y_pred, e) == pytest.approx(expected)
    # the estimator's defaults are the paper's: η = 0.99, λ = 0.1, L = 32
    assert make_reward("spl", Y, **DEFAULTS)(y_pred, e) == pytest.approx(0.99**3 / (1 + rmse))
    assert make_reward("tpsr", Y, **DEFAULTS)(y_pred, e) == pytest.approx(
        1 / (1 + rmse**2 / np.var(Y)) + 0.1 * np.exp(-7 / 32))


def test_losses():
    y_pred = Y + 0.5
    assert mse(y_pred, Y) == pytest.approx(0.25)
    assert nrmse(y_pred, Y) == pytest.approx(0.5 / np.std(Y))
    assert mse(np.full_like(Y, np.nan), Y) == np.inf
    w = np.r_[np.ones(100), np.zeros(100)]
    y2 = Y.copy()
    y2[100:] += 10
    assert mse(y2, Y, sample_weight=w) == 0.0


def test_make_reward_rejects_bad_options():
    with pytest.raises(ValueError, match="Unknown reward 'r2'"):
        make_reward("r2", Y)
    with pytest.raises(ValueError, match="bic_variance"):
        make_reward("bic", Y, bic_variance="sample", likelihood="gaussian")
    with pytest.raises(ValueError, match="likelihood"):
        make_reward("bic", Y, bic_variance="mle", likelihood="laplace")
    with pytest.raises(ValueError, match="nu"):
        make_reward("bic", Y, bic_variance="mle", likelihood="student_t", student_t_nu=2.0)
    with pytest.raises(ValueError, match="spl_eta"):
        make_reward("spl", Y, spl_eta=1.5)
    with pytest.raises(ValueError, match="tpsr_lambda"):
        make_reward("tpsr", Y, tpsr_lambda=-1, max_length=32)
    with pytest.raises(ValueError, match="sample_weight"):
        make_reward("bic", Y, sample_weight=np.zeros(len(Y)), **DEFAULTS)
    with pytest.raises(ValueError, match="finite"):
        make_reward("bic", np.r_[Y, np.nan], **DEFAULTS)
    # a reward's own options have no default here: the estimator sets them
    for name, needs in (("mdl", "likelihood"), ("bic", "bic_variance, likelihood"),
                        ("spl", "spl_eta"), ("tpsr", "tpsr_lambda, max_length")):
        with pytest.raises(TypeError, match=needs):
            make_reward(name, Y)
    with pytest.raises(TypeError, match="likelihood"):
        make_reward("bic", Y, bic_variance="mle")
    make_reward("nrmse", Y)  # needs none


def test_reward_is_picklable():
    import pickle

    reward = make_reward("bic", Y, bic_variance="mle", likelihood="gaussian")
    again = pickle.loads(pickle.dumps(reward))
    assert again(Y + 0.1, SIMPLE) == reward(Y + 0.1, SIMPLE)
    assert "bic" in repr(reward)


# ----------------------------------------------------------------------------- MDL
def test_mdl_matches_its_codelength():
    rng = np.random.default_rng(6)
    law = expr("mul c mul x0 x0", [2.5])  # 5 nodes, one fitted constant
    y = 2.5 * X[:, 0] ** 2 + 0.1 * rng.standard_normal(len(X))
    y_pred = law.evaluate(X)
    S, sigma2 = len(y), np.mean((y_pred - y) ** 2)
    fit = 0.5 * S * (np.log(2 * np.pi * sigma2) + 1)
    information = np.sum(X[:, 0] ** 4) / sigma2  # (∂f/∂c)² = x⁴
    # stated within its reach, the larger of its magnitude and the change that moves the
    # prediction by the targets' spread (here the magnitude, 2.5)
    reach = max(2.5, np.std(y) / np.sqrt(np.mean(X[:, 0] ** 4)))
    assert reach == 2.5
    constant = 0.5 * np.log(information * reach**2 / 3)
    structure = 5 * np.log(len(LIB))
    expected = -2 * (fit + constant + structure)
    assert mdl(y_pred, y, law, X) == pytest.approx(expected, rel=1e-12)
    reward = make_reward("mdl", y, X=X, likelihood="gaussian")
    assert reward(y_pred, law) == pytest.approx(expected, rel=1e-12)
    # a literal costs its codelength, not a parameter's precision
    snapped = law.with_literal(0, 2.5)  # 5/2: ln 5 + ln 2
    assert mdl(y_pred, y, snapped, X) == pytest.approx(
        -2 * (fit + structure + np.log(5) + np.log(2)), rel=1e-12)


def test_mdl_prefers_the_law_to_an_interpolant_on_six_rows_where_the_bic_does_not():
    # DanWood-like: y = b1·x^b2 on six rows with 1 % noise; a quartic through them with
    # five constants fits to round-off and leaves one residual degree of freedom
    rng = np.random.default_rng(0)
    x = np.array([1.309, 1.471, 1.490, 1.565, 1.611, 1.680])
    X6 = x[:, None]
    y = 0.7689 * x**3.8604 * (1 + 0.01 * rng.standard_normal(6))
    lib = Library(1, ("add", "mul", "pow"), (), use_constants=True, use_one=False)
    law = Expression.from_names("mul c pow x0 c".split(), lib, order="prefix")
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter

    (law,) = ConstantFitter(X6, y, const_fit_samples=1000, random_state=0, n_jobs=1).fit([law])
    quartic = Expression.from_names(
        "add c mul x0 add c mul x0 add c mul x0 add c mul x0 c".split(), lib, order="prefix")
    (quartic,) = ConstantFitter(X6, y, const_fit_samples=1000, random_state=0,
                                n_jobs=1).fit([quartic])
    exact = y + 1e-15 * y  # the quartic through the rows, to round-off
    quartic_pred = quartic.evaluate(X6)
    assert np.max(np.abs(quartic_pred - y)) < 1e-2 * np.std(y)
    for name, prefers_law in (("bic", False), ("mdl", True)):
        reward = make_reward(name, y, X=X6, **DEFAULTS)
        assert (reward(law.evaluate(X6), law) > reward(exact, quartic)) == prefers_law, name


def test_mdl_scores_a_formula_with_as_many_constants_as_rows_minus_inf():
    law = expr("add c mul c x0", [1.0, 2.0])
    X2 = X[:2]
    assert mdl(law.evaluate(X2), law.evaluate(X2), law, X2) == -np.inf
    assert np.isfinite(mdl(law.evaluate(X[:3]), law.evaluate(X[:3]) + [0, 1e-3, 0], law, X[:3]))


def test_mdl_charges_a_base_near_one_the_precision_it_needs():
    # 0.9996**x and exp(-0.0004*x) are the same function; the base must be stated to
    # eight digits, the rate to four: the exponential is the shorter description
    lib = Library(1, ("mul", "pow"), ("exp",), use_constants=True, use_one=False)
    x = np.linspace(0, 100, 50)[:, None]
    y = np.exp(-0.0004 * x[:, 0]) + 1e-5 * np.random.default_rng(0).standard_normal(50)
    base = Expression.from_names("pow c x0".split(), lib, [np.exp(-0.0004)], order="prefix")
    rate = Expression.from_names("exp mul c x0".split(), lib, [-0.0004], order="prefix")
    y_pred = base.evaluate(x)
    np.testing.assert_allclose(rate.evaluate(x), y_pred, rtol=1e-12)
    assert mdl(y_pred, y, rate, x) > mdl(y_pred, y, base, x)


def test_mdl_does_not_take_a_small_term_the_noise_put_there():
    # 2000 rows with 10 % noise whose mean sits 4 standard errors off zero: "+ c" fits
    # 8 nats better than the law, more than the two nodes it costs, and ESR's cost of
    # a constant stated within its own magnitude, ln(|c|/Δ), is about nothing
    rng = np.random.default_rng(3)
    X2 = rng.uniform(1, 5, (2000, 2))
    law_y = X2[:, 0] * X2[:, 1]
    noise = rng.standard_normal(2000)
    sigma = 0.1 * np.sqrt(np.mean(law_y**2))
    noise = (noise - noise.mean()) / noise.std() * sigma + 4 * sigma / np.sqrt(2000)
    y = law_y + noise
    lib = Library(2)
    law = Expression.from_names("mul x0 x1".split(), lib, order="prefix")
    term = Expression.from_names("add c mul x0 x1".split(), lib, [float(noise.mean())],
                                 order="prefix")
    gain = 0.5 * 2000 * np.log(np.mean(noise**2) / np.var(noise))
    assert gain > 2 * np.log(len(lib)) + 1  # the term pays for its nodes and more
    assert mdl(law.evaluate(X2), y, law, X2) > mdl(term.evaluate(X2), y, term, X2)
    # with 40 standard errors the term is real, and kept
    y_real = law_y + noise + 36 * sigma / np.sqrt(2000)
    real = term.with_constants([float(np.mean(y_real - law_y))])
    assert mdl(real.evaluate(X2), y_real, real, X2) > mdl(law.evaluate(X2), y_real, law, X2)


def test_mdl_charges_two_constants_that_act_together_about_once():
    # c0·c1·x is c·x: one direction of (c0, c1) is determined, the other not at all
    rng = np.random.default_rng(7)
    y = 2.5 * X[:, 0] + 0.1 * rng.standard_normal(len(X))
    one = expr("mul c x0", [2.5])
    two = expr("mul c mul c x0", [1.25, 2.0])
    y_pred = one.evaluate(X)
    np.testing.assert_allclose(two.evaluate(X), y_pred)
    extra_nodes = 2 * np.log(len(LIB))
    # D·I·D has eigenvalues (2μ, 0) against μ: ½ ln 2 more, not a second constant's cost
    assert mdl(y_pred, y, one, X) - mdl(y_pred, y, two, X) == pytest.approx(
        2 * (extra_nodes + 0.5 * np.log(2)), rel=1e-9)


def test_mdl_charges_a_periodic_node_the_periods_its_argument_spans():
    # sin(x0) on an angle within one period pays nothing beyond its nodes; over P periods,
    # ln P: P frequencies in (0, 1] predict the rows as differently as unrelated formulas
    law = expr("sin x0")
    rng = np.random.default_rng(0)
    for periods in (0.5, 3.0, 40.0):
        x = np.linspace(0.0, periods * 2 * np.pi, 200)[:, None]
        y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(200)
        y_pred = law.evaluate(x)
        within_one = np.linspace(0.0, 0.9 * 2 * np.pi, 200)[:, None]
        expected = 2 * np.log(max(1.0, periods))
        assert mdl(y_pred, y, law, within_one) - mdl(y_pred, y, law, x) == pytest.approx(
            expected, abs=1e-9)


def test_mdl_rejects_a_periodic_node_the_rows_sample_below_the_nyquist_rate():
    # body masses of mammals from 5 g to 6.6 t, in kg: cos(mass) spans ~1000 periods over
    # 62 rows, so each large animal's cosine is as good as a free number
    lib = Library(1, ("mul", "sub"), ("cos",), use_constants=True, use_one=False)
    mass = np.geomspace(0.005, 6654.0, 62)[:, None]
    brain = 10 * mass[:, 0] ** 0.75 * np.exp(0.3 * np.random.default_rng(0).standard_normal(62))
    aliased = Expression.from_names("mul x0 sub c cos x0".split(), lib, [1.7], order="prefix")
    assert mdl(aliased.evaluate(mass), brain, aliased, mass) == -np.inf
    # the same formula on angles the rows resolve (31 periods over 62 rows) is scored
    angle = np.linspace(1.0, 1.0 + 31 * 2 * np.pi - 1e-9, 62)[:, None]
    assert np.isfinite(mdl(aliased.evaluate(angle), brain, aliased, angle))
