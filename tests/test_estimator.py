"""CADSRRegressor behaviour: recovery, fitted attributes, stopping rules, devices."""

import numpy as np
import pytest
import sympy
from budgets import SMALL
from torch.optim.optimizer import register_optimizer_step_pre_hook

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.search.devices import resolve_device
from cadsr_sklearn.estimator import PAPER_SETTINGS



@pytest.fixture(scope="module")
def quadratic():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(50, 1))
    return X, X[:, 0] ** 2 + X[:, 0]


@pytest.fixture(scope="module")
def fitted(quadratic):
    X, y = quadratic
    return CADSRRegressor(n_epochs=40, **SMALL).fit(X, y)


def test_recovers_a_simple_polynomial_and_stops_at_round_off(fitted, quadratic):
    X, y = quadratic
    x0 = sympy.Symbol("x0")
    assert sympy.simplify(fitted.expression_ - (x0**2 + x0)) == 0
    assert fitted.stop_reason_ == "tol"
    assert fitted.n_epochs_ < 40
    assert fitted.score(X, y) == pytest.approx(1.0)


def test_predict_is_the_exported_formula(fitted, quadratic):
    X, _ = quadratic
    f = sympy.lambdify(sympy.Symbol("x0"), fitted.expression_, "numpy")
    np.testing.assert_allclose(fitted.predict(X), f(X[:, 0]), rtol=1e-9)


def test_fitted_attributes(fitted):
    assert fitted.n_features_in_ == 1
    # every formula scored is counted, whoever proposed it: the policy's 200 an epoch,
    # the linear leaves', the unary edits' (those its scorer had not scored before)
    assert fitted.n_evaluations_ == fitted.history_[-1]["evaluations"]
    assert all(h["proposed_policy"] == 200 for h in fitted.history_)
    assert fitted.n_evaluations_ > fitted.n_epochs_ * 200
    assert len(fitted.history_) == fitted.n_epochs_
    record = fitted.history_[-1]
    for key in ("best_reward", "best_loss", "time", "evaluations", "approx_kl", "clip_fraction",
                "entropy", "kl_ref", "n_unique"):
        assert key in record
    front = fitted.equations_
    assert list(front["complexity"]) == sorted(front["complexity"])
    assert np.all(np.diff(front["loss"]) < 0)  # a Pareto front: each step buys a lower loss
    assert front["selected"].sum() == 1
    assert isinstance(fitted.sympy(), sympy.Expr)
    assert "x_{0}" in fitted.latex()
    assert fitted.device_.type == "cpu"


def test_same_random_state_same_formula(quadratic):
    X, y = quadratic
    y = y + np.sin(3 * X[:, 0])  # harder: no early stop within the budget
    a = CADSRRegressor(n_epochs=4, **SMALL).fit(X, y)
    b = CADSRRegressor(n_epochs=4, **SMALL).fit(X, y)
    assert str(a.expression_) == str(b.expression_)
    assert [h["best_reward"] for h in a.history_] == [h["best_reward"] for h in b.history_]


def test_pandas_column_names_become_symbols():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"mass": rng.uniform(1, 2, 40), "speed": rng.uniform(1, 2, 40)})
    y = df["mass"] * df["speed"]
    model = CADSRRegressor(n_epochs=30, **SMALL).fit(df, y)
    assert {s.name for s in model.expression_.free_symbols} <= {"mass", "speed"}
    assert list(model.feature_names_in_) == ["mass", "speed"]


def test_constant_target_gives_the_constant():
    X = np.arange(10.0).reshape(-1, 1)
    model = CADSRRegressor(**SMALL).fit(X, np.full(10, 3.5))
    assert float(model.expression_) == 3.5
    np.testing.assert_array_equal(model.predict(X), 3.5)


def test_max_evaluations(quadratic):
    # max_time: tests/test_budgets.py (on a clock of its own), perf/bench_max_time.py (the wall)
    X, y = quadratic
    y = y + np.sin(3 * X[:, 0])
    # the paper's loop, one batch an epoch: the count stops on the budget exactly
    # (with proposers, one proposal past it at most: tests/test_budgets.py)
    model = CADSRRegressor(n_epochs=1000, max_evaluations=600, linear_terms=0, unary_edits=0,
                           **SMALL).fit(X, y)
    assert model.stop_reason_ == "max_evaluations" and model.n_evaluations_ == 600


def test_patience(quadratic):
    X, y = quadratic
    # noise: no formula fits exactly, and tol=0 besides, so only patience can stop it
    y = y + np.sin(3 * X[:, 0]) + np.random.default_rng(0).normal(0, 0.1, len(y))
    model = CADSRRegressor(n_epochs=1000, patience=2, tol=0.0, **SMALL).fit(X, y)
    assert model.stop_reason_ == "patience"
    best = [h["best_criterion"] for h in model.history_]
    last_change = max(i for i in range(len(best)) if i == 0 or best[i] != best[i - 1])
    assert model.n_epochs_ == last_change + 2 + 1  # two epochs after τ* last changed


def test_keyboard_interrupt_keeps_the_best_so_far(quadratic):
    X, y = quadratic
    y = y + np.sin(3 * X[:, 0])
    model = CADSRRegressor(n_epochs=100, **SMALL)
    steps = []

    def interrupt_on_third_epoch(optimizer, args, kwargs):  # its policy update's first step
        steps.append(True)
        if len(steps) == 2 * model.steps_per_epoch + 1:
            raise KeyboardInterrupt

    # torch's hook on every optimizer's step: the policy's, after the epoch's batch was scored
    hook = register_optimizer_step_pre_hook(interrupt_on_third_epoch)
    try:
        model.fit(X, y)
    finally:
        hook.remove()
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert model.n_epochs_ == 2
    assert np.all(np.isfinite(model.predict(X)))


def test_sample_weight_zero_rows_are_ignored():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(60, 1))
    y = 2.0 * X[:, 0]
    y_corrupt = y.copy()
    y_corrupt[:10] = 100.0
    w = np.ones(60)
    w[:10] = 0.0
    model = CADSRRegressor(n_epochs=30, **SMALL).fit(X, y_corrupt, sample_weight=w)
    np.testing.assert_allclose(model.predict(X[10:]), y[10:], rtol=1e-6, atol=1e-8)


def _small_fit(X, y, **params):
    """Two epochs of a small search, every formula it scored kept (``candidates_``)."""
    return CADSRRegressor(n_epochs=2, keep_candidates=True,
                          **{**SMALL, "batch_size": 50}, **params).fit(X, y)


def _built(monkeypatch, cls) -> list:
    """Every instance of ``cls`` constructed from now on (the test's own ``monkeypatch``)."""
    built, construct = [], cls.__init__

    def init(self, *args, **kwargs):
        construct(self, *args, **kwargs)
        built.append(self)
    monkeypatch.setattr(cls, "__init__", init)
    return built


def _scored(model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(complexity, training MSE, reward) of every valid formula the search scored."""
    table = model.candidates_
    valid = np.isfinite(table["reward"].to_numpy())
    return tuple(table[c].to_numpy()[valid] for c in ("complexity", "loss", "reward"))


@pytest.mark.parametrize("reward", ["nrmse", "spl", "tpsr"])
def test_the_ablation_rewards_score_every_formula_by_their_definition(quadratic, reward):
    X, y = quadratic
    model = _small_fit(X, y, reward=reward)
    assert np.all(np.isfinite(model.predict(X)))
    _, loss, got = _scored(model)
    assert len(got) > 10
    var = np.var(y)
    if reward == "nrmse":  # DSR's 1 / (1 + NRMSE)
        np.testing.assert_allclose(got, 1 / (1 + np.sqrt(loss / var)), rtol=1e-9)
    elif reward == "spl":  # η^n / (1 + RMSE), n the formula's multiplications: n ≥ 0 whole
        n = np.log(got * (1 + np.sqrt(loss))) / np.log(model.spl_eta)
        np.testing.assert_allclose(n, np.round(n), atol=1e-6)
        assert np.all(np.round(n) >= 0) and np.any(np.round(n) > 0)
    else:  # 1 / (1 + NMSE) + λ exp(−l / L), l the formula's nodes: 1 ≤ l ≤ L whole
        L = model.max_length
        length = -L * np.log((got - 1 / (1 + loss / var)) / model.tpsr_lambda)
        np.testing.assert_allclose(length, np.round(length), atol=1e-6)
        assert np.all((np.round(length) >= 1) & (np.round(length) <= L))


@pytest.mark.parametrize("bic_variance", ["mle", "target"])
def test_bic_variance_is_the_sigma_of_the_rewards_likelihood(quadratic, bic_variance):
    X, y = quadratic
    y = y + np.sin(3 * X[:, 0])  # no exact fit: the round-off floor stays out of it
    model = _small_fit(X, y, bic_variance=bic_variance)
    k, loss, got = _scored(model)
    S = len(y)
    sigma2 = loss if bic_variance == "mle" else np.var(y)  # the formula's own MSE, or Var(y)
    log_p = -0.5 * (S * np.log(2 * np.pi * sigma2) + S * loss / sigma2)
    np.testing.assert_allclose(got, -(k * np.log(S) - 2 * log_p), rtol=1e-9)


def test_the_risk_seeking_ablation_takes_one_plain_gradient_step_an_epoch(quadratic):
    X, y = quadratic
    steps = []
    hook = register_optimizer_step_pre_hook(lambda optimizer, args, kwargs: steps.append(1))
    try:
        grpo = _small_fit(X, y)
        grpo_steps = len(steps)
        model = _small_fit(X, y, policy="risk_seeking")
    finally:
        hook.remove()
    assert np.all(np.isfinite(model.predict(X)))
    assert grpo_steps == grpo.n_epochs_ * grpo.steps_per_epoch and grpo.steps_per_epoch > 1
    assert len(steps) - grpo_steps == model.n_epochs_  # one step each epoch
    # no clipped ratio to the sampling policy, no KL to a reference: eq. (12), not (13)
    for record in model.history_:
        assert record["approx_kl"] == record["clip_fraction"] == record["kl_ref"] == 0
    assert any(record["approx_kl"] > 0 for record in grpo.history_)


def test_the_policy_and_prior_options_reach_the_policy_and_the_priors(quadratic, monkeypatch):
    from cadsr_sklearn.sampling.policy import Policy
    from cadsr_sklearn.sampling.priors import Priors

    X, y = quadratic
    policies, priors = _built(monkeypatch, Policy), _built(monkeypatch, Priors)
    options = dict(attention="standard", position_encoding="1d", parent_sibling=False,
                   embedding_std=0.7, arity_prior=False, length_prior=10)
    defaults = CADSRRegressor().get_params()
    assert all(defaults[name] != value for name, value in options.items())  # not the defaults
    model = _small_fit(X, y, **options)
    assert np.all(np.isfinite(model.predict(X)))
    policy, prior = policies[0], priors[0]
    assert (policy.attention, policy.position_encoding) == ("standard", "1d")
    assert (policy.parent_sibling, policy.embedding_std) == (False, 0.7)
    assert (prior.uniform_arity, prior.length) == (False, 10.0)


def test_paper_settings_are_the_papers_table_with_the_additions_off():
    model = CADSRRegressor.paper(max_time=5.0)
    params = model.get_params()
    assert params["max_time"] == 5.0
    assert (params["batch_size"], params["n_epochs"], params["learning_rate"]) == (1000, 600, 1e-4)
    assert params["entropy_coef"] == 0.005
    assert not (params["prune"] or params["snap_constants"] or params["parent_sibling"]
                or params["arity_prior"])
    assert params["length_prior"] is None and params["tol"] == 0
    # every paper setting is applied, and they are exactly where it departs from the defaults
    assert {name: params[name] for name in PAPER_SETTINGS} == dict(PAPER_SETTINGS)
    defaults = CADSRRegressor().get_params()
    assert {name for name in params if params[name] != defaults[name]} == {
        "max_time", "criterion", "batch_size", "learning_rate", "parent_sibling", "arity_prior",
        "length_prior", "const_screen_samples", "row_batch", "tol", "prune", "snap_constants",
        "dimensional_reduction", "linear_terms", "unary_edits"}
    assert CADSRRegressor.paper(learning_rate=1e-3).learning_rate == 1e-3  # overrides win
    with pytest.raises(TypeError):
        PAPER_SETTINGS["batch_size"] = 1  # read-only


def test_resolve_device():
    import torch

    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="Unknown device 'tpu-9'"):
        resolve_device("tpu-9")

    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda:0")


def test_an_exact_fit_far_from_zero_still_stops_early():
    # y = x + 1e7: float64 resolves y to ~1e-9, so MSE/Var(y) of the exact formula is
    # ~1e-17, above tol = 1e-20; the round-off floor at y's magnitude still stops it.
    X = np.random.default_rng(0).uniform(0, 1, (50, 1))
    y = X[:, 0] + 1e7
    model = CADSRRegressor(batch_size=64, n_epochs=60, random_state=0, device="cpu", max_length=8)
    model.fit(X, y)
    assert model.stop_reason_ == "tol", model.expression_
    assert model.n_epochs_ < 60
    np.testing.assert_allclose(model.predict(X), y, rtol=1e-14)


def test_keep_candidates_lists_every_distinct_formula_scored(quadratic):
    X, y = quadratic
    plain = CADSRRegressor(**SMALL, n_epochs=3).fit(X, y)
    assert not hasattr(plain, "candidates_")
    model = CADSRRegressor(**SMALL, n_epochs=3, keep_candidates=True).fit(X, y)
    table = model.candidates_
    assert list(table.columns) == ["complexity", "loss", "reward", "criterion", "formula"]
    # distinct formulas, at most the scored ones; best reward first
    assert len(set(table["formula"])) == len(table) <= model.n_evaluations_
    rewards = table["reward"].to_numpy()
    assert np.all(rewards[:-1] >= rewards[1:])  # invalid formulas (−inf) last
    # the search's best reward of each epoch is among them
    best = max(h["best_reward"] for h in model.history_)
    assert np.isclose(table["reward"].to_numpy(), best, rtol=0, atol=0).any()
    model.set_params(keep_candidates=False).fit(X, y)
    assert not hasattr(model, "candidates_")  # not the previous fit's
