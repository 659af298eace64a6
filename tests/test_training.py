"""The GRPO objective (eq. 13), its ablation (eq. 12) and the hall of fame."""

import copy
import dataclasses
import math

import numpy as np
import pytest
import torch
from components import policy_options

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.search.rank_mapping import rank_weights
from cadsr_sklearn.sampling.sampler import Sampler, masked_log_softmax, token_log_probs
from cadsr_sklearn.scoring.scorer import Candidate, HallOfFame
from cadsr_sklearn.settings import TrainingSettings
from cadsr_sklearn.search.training import grpo_loss, risk_seeking_loss


@pytest.fixture()
def setup():
    torch.manual_seed(0)
    library = Library(2)
    policy = Policy(len(library), **policy_options(max_length=16, ff_dim=32, parent_sibling=False))
    with torch.no_grad():  # move away from the near-uniform start so gradients are informative
        for p in policy.parameters():
            p.add_(0.3 * torch.randn_like(p))
    sampler = Sampler(policy, library, Constraints(library, max_length=16, max_constants=10))
    batch = sampler.sample(40, torch.Generator().manual_seed(1))
    rewards = np.random.default_rng(2).normal(size=40)
    config = TrainingSettings.from_params({**CADSRRegressor().get_params(), "batch_size": 40,
                                         "alpha": 25.0, "beta": 0.0, "entropy_coef": 0.0})
    weights = torch.as_tensor(rank_weights(rewards, config.alpha, config.batch_size, config.lam),
                              dtype=torch.float32)
    return policy, batch, weights, config


def _grads(policy, loss):
    policy.zero_grad()
    loss.backward()
    return torch.cat([p.grad.flatten() for p in policy.parameters() if p.grad is not None])


def test_grpo_gradient_at_the_sampling_policy_is_the_rank_weighted_policy_gradient(setup):
    # At θ = θ_old the ratio is 1 and ∇g = ∇log p, so eq. (13) with β = 0 reduces to eq. (12).
    policy, batch, weights, config = setup
    with torch.no_grad():
        old = token_log_probs(masked_log_softmax(policy, batch), batch)
        ref = masked_log_softmax(policy, batch)
    grpo, info = grpo_loss(policy, batch, weights, old, ref, config)
    g_grpo = _grads(policy, grpo)
    plain, _ = risk_seeking_loss(policy, batch, weights, config)
    g_plain = _grads(policy, plain)
    assert g_plain.abs().max() > 0
    torch.testing.assert_close(g_grpo, g_plain, rtol=1e-4, atol=1e-7)
    assert info.approx_kl == pytest.approx(0.0, abs=1e-6)
    assert info.clip_fraction == 0.0
    assert info.kl_ref == pytest.approx(0.0, abs=1e-6)


def test_ratios_above_the_trust_region_give_no_gradient(setup):
    # Positive advantages: min(g, clip(g, 1±ε)) is flat once g > 1 + ε.
    policy, batch, weights, config = setup
    with torch.no_grad():
        old = token_log_probs(masked_log_softmax(policy, batch), batch) - 1.0  # g = e > 1.2
        ref = masked_log_softmax(policy, batch)
    loss, info = grpo_loss(policy, batch, weights, old, ref, config)
    assert _grads(policy, loss).abs().max() == 0
    assert info.clip_fraction > 0.9


def test_kl_penalty_pulls_towards_the_reference(setup):
    policy, batch, weights, config = setup
    ref_policy = copy.deepcopy(policy)
    with torch.no_grad():
        for p in ref_policy.parameters():
            p.add_(0.2 * torch.randn_like(p))
        old = token_log_probs(masked_log_softmax(policy, batch), batch)
        ref = masked_log_softmax(ref_policy, batch)
    zero = torch.zeros_like(weights)  # no reward signal: only the KL term acts
    config = dataclasses.replace(config, beta=1.0)
    loss, info = grpo_loss(policy, batch, zero, old, ref, config)
    assert info.kl_ref > 0
    optimizer = torch.optim.SGD(policy.parameters(), lr=1e-3)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    _, after = grpo_loss(policy, batch, zero, old, ref, config)
    assert after.kl_ref < info.kl_ref


def _candidate(library, names, loss, reward):
    return Candidate(Expression.from_names(names, library, order="prefix"), reward, loss)


def test_hall_of_fame_front_and_the_chosen_formula():
    lib = Library(1)
    fame = HallOfFame()
    a = _candidate(lib, ["x0"], 1.0, -10.0)  # k = 1
    b = _candidate(lib, ["sin", "x0"], 2.0, -12.0)  # k = 2, worse loss: off the front
    c = _candidate(lib, ["add", "x0", "x0"], 0.5, -5.0)  # k = 3
    # same k and reward: first kept
    c_twin = _candidate(lib, ["mul", "x0", "x0"], 0.5 - 1e-17, -5.0)
    bad = _candidate(lib, ["log", "x0"], math.inf, -math.inf)
    fame.update([a, b, c, c_twin, bad])
    front = fame.pareto_front()
    assert [f.expression.key for f in front] == [a.expression.key, c.expression.key]
    assert fame.pareto_front(keep=b)[1] is b  # τ* is always listed


def test_scores_from_reused_lm_outputs_equal_scores_of_the_evaluated_formula():
    # When LM saw every row, its last output stands in for evaluate(X): it must be the
    # same numbers, or predict() would disagree with what the search scored.
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
    from cadsr_sklearn.scoring.rewards import make_reward, mse
    from cadsr_sklearn.scoring.scorer import Scorer

    library = Library(2)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.1, 2.0, (200, 2))
    y = 1.7 * np.sin(X[:, 0]) * X[:, 1] ** 0.5 + 0.3
    torch.manual_seed(0)
    policy = Policy(len(library), **policy_options(max_length=16, ff_dim=32, parent_sibling=False))
    batch = Sampler(policy, library, Constraints(library, max_length=16, max_constants=10)).sample(
        300, torch.Generator().manual_seed(0))
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0)
    scorer = Scorer(fitter, reward, X)
    assert scorer.reuse_outputs
    candidates = scorer(batch.expressions(library))
    fitted = [c for c in candidates if c.expression.n_constants and math.isfinite(c.reward)]
    assert len(fitted) > 20
    for cand in fitted:
        y_pred = cand.expression.evaluate(X)
        assert cand.reward == reward(y_pred, cand.expression)
        assert cand.loss == mse(y_pred, y)


def test_a_scorer_s_criterion_judges_the_reward_s_targets():
    # the scorer scores a prediction's residuals once for the reward and the criterion
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
    from cadsr_sklearn.scoring.rewards import make_reward
    from cadsr_sklearn.scoring.scorer import Scorer

    X = np.linspace(0.1, 2.0, 50)[:, None]
    y = 2.0 * X[:, 0]
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    other = make_reward("mdl", y + 1.0, X=X, likelihood="gaussian")
    with pytest.raises(ValueError, match="criterion must be bound to the reward's targets"):
        Scorer(fitter, reward, X, criterion=other)


def test_the_top_set_holds_each_tree_once():
    # A collapsed policy fills the batch with repeats (appendix Algorithm 1); copies
    # would share the top rank weight and take several replay slots.
    from cadsr_sklearn.search.training import top_distinct

    lib = Library(1)
    a = _candidate(lib, ["x0"], 1.0, -10.0)
    b = _candidate(lib, ["sin", "x0"], 2.0, -12.0)
    c = _candidate(lib, ["cos", "x0"], 3.0, -14.0)
    bad = _candidate(lib, ["log", "x0"], math.inf, -math.inf)
    batch = [a, a, b, a, bad, c]
    rewards = np.array([cand.reward for cand in batch])
    assert top_distinct(batch, rewards, 3) == [0]  # the top 3 rows are one tree
    assert top_distinct(batch, rewards, 6) == [0, 2, 5]  # the invalid one never enters
    weights = rank_weights(rewards[top_distinct(batch, rewards, 6)], 50.0, 6, 0.2)
    assert np.allclose(weights, [0.2, 0.2 * (1 - 1 / 3), 0.2 * (1 - 2 / 3)])


def test_screening_refits_the_batch_leaders_on_every_fitting_row():
    # Screened on 60 of 400 rows, then the n_full_refits best refitted on all 400: the
    # leaders hold full fits (never worse than the screened one), the rest keep the
    # screened constants, and every reward is computed on all rows either way.
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
    from cadsr_sklearn.scoring.rewards import make_reward
    from cadsr_sklearn.scoring.scorer import Scorer

    library = Library(2)
    rng = np.random.default_rng(1)
    X = rng.uniform(0.1, 2.0, (400, 2))
    y = 1.7 * np.sin(X[:, 0]) * X[:, 1] ** 0.5 + 0.3 + 0.05 * rng.standard_normal(400)
    torch.manual_seed(0)
    policy = Policy(len(library), **policy_options(max_length=16, ff_dim=32, parent_sibling=False))
    constraints = Constraints(library, max_length=16, max_constants=10)
    expressions = Sampler(policy, library, constraints).sample(
        300, torch.Generator().manual_seed(0)).expressions(library)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    fitter = ConstantFitter(X, y, random_state=0, const_fit_samples=400)
    screen = fitter.screening_fitter(60)
    assert len(screen.rows_) == 60 and set(screen.rows_) <= set(fitter.rows_)
    assert fitter.screening_fitter(400) is None  # nothing to save
    scorer = Scorer(fitter, reward, X, screen=screen, n_full_refits=10)
    candidates = scorer(expressions)
    by_key = {c.expression.key: c for c in candidates}
    rewards = {k: c.reward for k, c in by_key.items()}
    leaders = sorted(rewards, key=rewards.get, reverse=True)[:10]
    assert set(leaders) <= scorer.fitted_on_all_rows
    screened_only = ConstantFitter(X, y, random_state=0, const_fit_samples=400).screening_fitter(60)
    screened_only.fit(expressions)  # the same screened fits (same starts, same order)

    def screened_fit(expr):
        return screened_only.fit([expr])[0]  # from its cache

    for key in leaders:
        cand = by_key[key]
        assert cand.reward == reward(cand.expression.evaluate(X), cand.expression)
        again = screened_fit(cand.expression)
        assert cand.reward >= reward(again.evaluate(X), again)
    # the rest of the set fitted on all rows: formulas without constants (nothing to refit) and
    # screened fits that were not finite on every row (fitted again in full)
    for key in scorer.fitted_on_all_rows - set(leaders):
        expr = by_key[key].expression
        assert expr.n_constants == 0 or not np.all(np.isfinite(screened_fit(expr).evaluate(X)))
    # the rows each fit saw, where the uncertainty of its constants is judged
    for cand in by_key.values():
        if cand.expression.n_fitted and cand.expression.key not in scorer.fitted_on_all_rows:
            assert cand.screened and cand.fitted_rows is screen.rows_
    refitted = scorer.refit([by_key[leaders[0]].expression])[0]
    assert not refitted.screened and refitted.fitted_rows is fitter.rows_
    restored = Scorer.__new__(Scorer)  # the cache packed as a checkpoint pickles it
    restored.__setstate__(scorer.__getstate__())
    assert ({k: (c.screened, c.fitted_rows.tolist()) for k, c in restored.cache.items()}
            == {k: (c.screened, c.fitted_rows.tolist()) for k, c in scorer.cache.items()})
    # Polishing from held constants only: one start, no fresh draws.
    leader = by_key[leaders[0]].expression
    polished = fitter.fit([leader], from_held=True, fresh_starts=False)[0]
    np.testing.assert_array_equal(polished.constants, fitter.fit([leader], from_held=True,
                                                                 fresh_starts=False)[0].constants)


def test_evaluate_many_is_each_expressions_evaluate_on_any_number_of_threads():
    from cadsr_sklearn.expressions.expression import evaluate_many

    library = Library(2)
    torch.manual_seed(0)
    policy = Policy(len(library), **policy_options(max_length=16, ff_dim=32, parent_sibling=False))
    constraints = Constraints(library, max_length=16, max_constants=10)
    expressions = Sampler(policy, library, constraints).sample(
        50, torch.Generator().manual_seed(3)).expressions(library)
    X = np.random.default_rng(0).uniform(-2, 2, (1100, 2))  # more than one block of rows
    expected = np.array([e.evaluate(X) for e in expressions])
    for n_jobs in (1, 2, None):
        np.testing.assert_array_equal(evaluate_many(expressions, X, n_jobs), expected)


def test_n_jobs_resolution():
    from cadsr_sklearn.expressions.parallel import available_cores, resolve_n_jobs

    cores = available_cores()
    assert resolve_n_jobs(None) == resolve_n_jobs(-1) == cores
    assert resolve_n_jobs(1) == 1 and resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-2) == max(1, cores - 1)
    assert resolve_n_jobs(-1000) == 1


def test_evaluate_many_can_stop_at_the_first_non_finite_block():
    from cadsr_sklearn.expressions.expression import Expression, evaluate_many

    library = Library(1)
    X = np.linspace(-1, 1, 2000)[:, None]  # log(x0) is NaN on the first rows
    log_x = Expression.from_names(["log", "x0"], library)
    square = Expression.from_names(["mul", "x0", "x0"], library)
    Y = evaluate_many([log_x, square], X, stop_at_nonfinite=True)
    assert np.isnan(Y[0]).all()
    np.testing.assert_array_equal(Y[1], square.evaluate(X))


def test_a_screened_fit_not_finite_on_every_row_is_fitted_again_in_full():
    # sqrt(x0 + c) with y = sqrt(max(x0 − 0.05, 0)): LM on a subsample can settle on a c
    # that makes the root of a negative on rows it did not see; the full fit must then run.
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
    from cadsr_sklearn.scoring.rewards import make_reward
    from cadsr_sklearn.scoring.scorer import Scorer

    library = Library(1)
    expr = Expression.from_names(["sqrt", "add", "x0", "c"], library)
    outcomes = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        X = rng.uniform(0, 1, (1000, 1))
        y = np.sqrt(np.maximum(X[:, 0] - 0.05, 0))
        fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=seed)
        screen = fitter.screening_fitter(40)
        screened_fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=seed)
        (screened,) = screened_fitter.screening_fitter(40).fit([expr])
        scorer = Scorer(fitter, make_reward("bic", y, bic_variance="mle", likelihood="gaussian"),
                        X, screen=screen, n_full_refits=0)
        (cand,) = scorer([expr])
        outcomes.append(bool(np.all(np.isfinite(screened.evaluate(X)))))
        assert math.isfinite(cand.reward), seed  # never lost to the screening rows
        assert expr.key in scorer.fitted_on_all_rows
    assert not all(outcomes), "no seed exercised a screened fit that fails on other rows"
