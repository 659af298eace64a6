"""Pruning τ*: greedy node-removing edits scored by the search's own reward."""

import inspect
import math
import time

import numpy as np
import pytest

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.search.refinement.pruning import prune
from cadsr_sklearn.scoring.rewards import make_reward
from cadsr_sklearn.scoring.scorer import Candidate, Scorer

LIB = Library(1)


def _scorer(X, y):
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0)
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")
    return Scorer(fitter, reward, X)


def _prefix(names):
    return Expression.from_names(names, LIB, order="prefix")


def _edits_tried(expression):
    """The edits prune hands its ``score`` in a round on ``expression``, in their order."""
    tried = []

    def score(edits):  # none beats τ*, so prune stops after one round
        tried.extend(edits)
        return [Candidate(e, reward=-math.inf, loss=math.inf) for e in edits]

    prune(Candidate(expression, reward=0.0, loss=0.0), score)
    return tried


@pytest.fixture(scope="module")
def parabola():
    X = np.random.default_rng(0).uniform(-2, 2, (40, 1))
    return X, X[:, 0] ** 2


def test_dead_weight_that_fits_exactly_is_removed(parabola):
    X, y = parabola
    score = _scorer(X, y)
    # (c^x − exp(x)) + x·x with c = e: the first term is zero, the fit exact either way
    bloated = _prefix(["add", "sub", "pow", "c", "x0", "exp", "x0", "mul", "x0", "x0"])
    (start,) = score([bloated])
    assert start.loss <= 1e-20 * np.var(y)
    pruned = prune(start, score)
    assert pruned.expression.key == _prefix(["mul", "x0", "x0"]).key
    assert pruned.reward > start.reward
    assert pruned.loss <= 1e-20 * np.var(y)  # still exact


def test_a_formula_no_edit_improves_is_returned_as_it_is(parabola):
    X, y = parabola
    score = _scorer(X, y)
    (best,) = score([_prefix(["mul", "x0", "x0"])])
    assert prune(best, score) is best


def test_pruning_trades_a_small_loss_for_many_nodes_only_as_the_bic_says():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (200, 1))
    y = np.sin(X[:, 0]) + 1e-3 * rng.normal(size=200)
    score = _scorer(X, y)
    # sin(x) + c·x³·x: the extra term only fits noise
    noisy = _prefix(["add", "sin", "x0", "mul", "c", "mul", "mul", "x0", "x0", "mul", "x0", "x0"])
    (start,) = score([noisy])
    pruned = prune(start, score)
    assert pruned.reward >= start.reward
    assert pruned.expression.key == _prefix(["sin", "x0"]).key


def test_every_edit_removes_nodes_and_none_repeats():
    expr = _prefix(["add", "sin", "mul", "x0", "c", "div", "x0", "1"])
    edits = _edits_tried(expr)
    keys = [e.key for e in edits]
    assert len(keys) == len(set(keys)) and expr.key not in keys
    assert all(len(e) < len(expr) for e in edits)
    # the root replaced by each child, and one of the edits of the sin subtree
    assert _prefix(["sin", "mul", "x0", "c"]).key in keys
    assert _prefix(["div", "x0", "1"]).key in keys
    assert _prefix(["add", "c", "div", "x0", "1"]).key in keys


def test_edits_the_constraints_reject_are_not_tried(parabola):
    X, y = parabola
    score = _scorer(X, y)
    # x0·x0 + (x0 − x0): replacing (x0 − x0) by c would add a constant the cap forbids
    (start,) = score([_prefix(["add", "mul", "x0", "x0", "sub", "x0", "x0"])])
    pruned = prune(start, score, admits=Constraints(LIB, max_length=32, max_constants=0).admits)
    assert pruned.expression.n_constants == 0
    assert pruned.reward >= start.reward
    # without the cap, c absorbs the zero term and the root goes next: x0·x0
    assert prune(start, score).expression.key == _prefix(["mul", "x0", "x0"]).key


def test_an_exact_fit_is_not_traded_for_nodes_when_told(parabola):
    X, y = parabola
    score = _scorer(X, y)
    (start,) = score([_prefix(["add", "mul", "x0", "x0", "mul", "c", "sin", "x0"])])
    assert start.loss <= 1e-20 * np.var(y)
    exact = prune(start, score, max_loss=1e-20 * np.var(y))
    assert exact.loss <= 1e-20 * np.var(y)
    # no edit is admitted by a max_loss below every candidate's loss
    assert prune(start, score, max_loss=-1.0) is start


def test_no_round_starts_after_the_deadline(parabola):
    X, y = parabola
    score = _scorer(X, y)
    bloated = _prefix(["add", "sub", "pow", "c", "x0", "exp", "x0", "mul", "x0", "x0"])
    (start,) = score([bloated])
    assert prune(start, score, deadline=time.perf_counter() - 1.0) is start


def test_ctrl_c_while_pruning_keeps_the_sampled_best(monkeypatch):
    # Ctrl-C in the first fit prune asks for: the search hands prune its scorer's refit
    refit, pruning = Scorer.refit, []

    def interrupted_when_pruning(self, *args, **kwargs):
        if inspect.currentframe().f_back.f_code is prune.__code__:
            pruning.append(True)
            raise KeyboardInterrupt
        return refit(self, *args, **kwargs)

    monkeypatch.setattr(Scorer, "refit", interrupted_when_pruning)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 1))
    model = CADSRRegressor(batch_size=32, n_epochs=2, random_state=0, device="cpu", max_length=12)
    model.fit(X, X[:, 0] ** 2 + np.sin(X[:, 0]))
    assert pruning == [True]  # the search got as far as pruning, and no further
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert np.isfinite(model.predict(X)).all()


def test_the_estimator_prunes_after_the_search_and_can_be_told_not_to():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 1))
    y = X[:, 0] ** 3 + X[:, 0]
    params = dict(batch_size=64, n_epochs=6, random_state=3, device="cpu", max_length=16)
    raw = CADSRRegressor(prune=False, **params).fit(X, y)
    pruned = CADSRRegressor(prune=True, **params).fit(X, y)
    # the same search, then a reward that can only go up
    assert [h["best_reward"] for h in raw.history_] == [h["best_reward"] for h in pruned.history_]
    front = dict(zip(pruned.equations_["expression"].astype(str), pruned.equations_["reward"]))
    raw_reward = raw.equations_.loc[raw.equations_["selected"], "reward"].item()
    chosen = pruned.equations_.loc[pruned.equations_["selected"], "reward"].item()
    assert chosen >= raw_reward and math.isfinite(chosen) and front
    assert pruned.best_expression_.complexity <= raw.best_expression_.complexity


def test_a_phase_shift_goes_by_swapping_the_operator_first():
    X = np.random.default_rng(2).uniform(-1, 1, (30, 1))
    y = np.sin(X[:, 0] ** 2) - 0.75
    score = _scorer(X, y)
    # cos(x·x − c) + c fits exactly with c = π/2 and −0.75, at three more nodes than the truth
    shifted = _prefix(["add", "cos", "sub", "mul", "x0", "x0", "c", "c"])
    (start,) = score([shifted])
    assert start.loss <= 1e-20 * np.var(y)
    pruned = prune(start, score)
    assert pruned.expression.key == _prefix(["add", "sin", "mul", "x0", "x0", "c"]).key
    np.testing.assert_allclose(pruned.expression.constants, [-0.75])


def test_edits_carry_the_constants_they_keep():
    # 10·sin(40·x) + (20 − 30); BFS numbers the constants 10, 20, 30, 40
    best = _prefix(["add", "mul", "c", "sin", "mul", "c", "x0", "sub", "c", "c"])
    best = best.with_constants([10.0, 20.0, 30.0, 40.0])
    for edit in _edits_tried(best):
        # every constant comes from τ* or is a new c at 1, and none is invented
        assert set(edit.constants.tolist()) <= {10.0, 20.0, 30.0, 40.0, 1.0}
    # (20 − 30) replaced by its left child: 10·sin(40·x) + 20
    target = _prefix(["add", "mul", "c", "sin", "mul", "c", "x0", "c"])
    (edit,) = [e for e in _edits_tried(best) if e.key == target.key]
    assert edit.constants.tolist() == [20.0, 10.0, 40.0]  # BFS: the c at depth 1 first
    assert edit.prefix_constants().tolist() == [10.0, 40.0, 20.0]


def test_refits_start_from_the_kept_constants():
    # 2.5·sin(7.3x) + (c − c): replacing (c − c) by c, a fresh start (frequency near 1)
    # falls into another minimum; started from the frequency τ* holds, the refit is exact.
    X = np.linspace(-1, 1, 60)[:, None]
    y = 2.5 * np.sin(7.3 * X[:, 0])
    score = _scorer(X, y)
    bloated = _prefix(["add", "mul", "c", "sin", "mul", "c", "x0", "sub", "c", "c"])
    (start,) = score.refit([bloated.with_constants([2.5, 0.3, 0.3, 7.3])])  # BFS order
    assert start.loss <= 1e-20 * np.var(y)
    shorter = _prefix(["add", "mul", "c", "sin", "mul", "c", "x0", "c"])
    (cold,) = score([shorter])
    assert cold.loss > 1e-3 * np.var(y)  # the fresh start alone misses
    pruned = prune(start, score.refit)
    assert pruned.expression.key == _prefix(["mul", "c", "sin", "mul", "c", "x0"]).key
    assert pruned.loss <= 1e-20 * np.var(y)
