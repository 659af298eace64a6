"""``required_features`` and ``nested_constraints``: hard rules of sampling, from the
constraint state machine to a fitted model's front."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.priors import Priors
from cadsr_sklearn.sampling.sampler import Sampler
from cadsr_sklearn.front.simplification import simplest_equivalent

from budgets import TINY
from components import policy_options

N_TREES = 2000


def _sampler(constraints: Constraints, length_prior: float | None = 12) -> Sampler:
    """An untrained policy (seeded) behind ``constraints``, with the estimator's priors."""
    library = constraints.library
    torch.manual_seed(0)
    policy = Policy(len(library), **policy_options(max_length=constraints.max_length, ff_dim=32,
                                                   parent_sibling=True))
    return Sampler(policy, library, constraints,
                   Priors(library, uniform_arity=True, length=length_prior))


def _replays_exactly(sampler: Sampler, batch) -> None:
    """Masks are a function of the tree state: teacher forcing and ``admits`` agree with
    sampling (the invariant the policy update rests on)."""
    forced = sampler.teacher_force(batch.token_lists())
    assert torch.equal(forced.masks, batch.masks)
    torch.testing.assert_close(forced.log_probs, batch.log_probs, atol=1e-5, rtol=0)
    assert sampler.constraints.admits(batch.token_lists()).all()


# ------------------------------------------------------------ required features
@pytest.mark.parametrize("required, max_length", [((1, 3), 32), ((0, 1, 2, 3), 7), ((2,), 14)])
def test_every_sampled_tree_holds_the_required_features(required, max_length):
    library = Library(4)
    constraints = Constraints(library, max_length=max_length, max_constants=10,
                              required_features=required)
    sampler = _sampler(constraints)
    batch = sampler.sample(N_TREES, torch.Generator().manual_seed(1))
    tokens = {int(library.variable_ids[f]) for f in required}
    lacking = [seq for seq in batch.token_lists() if not tokens <= set(seq)]
    assert not lacking
    assert int(batch.lengths.max()) <= max_length
    assert bool(batch.masks.any(dim=2)[batch.valid].all())  # no step had nothing allowed
    _replays_exactly(sampler, batch)
    # the rule is what does it: without it many of these trees lack a required feature
    free = _sampler(Constraints(library, max_length=max_length, max_constants=10))
    unconstrained = free.sample(N_TREES, torch.Generator().manual_seed(1)).token_lists()
    assert sum(not tokens <= set(seq) for seq in unconstrained) > N_TREES // 10


def test_admits_rejects_a_tree_without_a_required_feature():
    """Pruning filters its edits with ``admits``: an edit that drops x1 is never tried."""
    library = Library(2)
    constraints = Constraints(library, max_length=32, max_constants=10, required_features=[1])
    names = [["add", "x0", "x1"], ["add", "x0", "x0"], ["sin", "x1"], ["x0"]]
    tokens = [tuple(library.encode(n)) for n in names]
    assert constraints.admits(tokens).tolist() == [True, False, True, False]


@pytest.mark.parametrize("kwargs, message", [
    (dict(required_features=[4]), "not columns of X"),
    (dict(required_features=[1, 1]), "more than once"),
    (dict(required_features=[0, 1, 2], max_length=4), "at least 5 nodes"),
    (dict(required_features=[0, 1], nested_constraints={"sin": {"add": 0, "sub": 0, "mul": 0,
                                                                 "div": 0, "pow": 0}}),
     "leave one binary operator unlimited"),
])
def test_impossible_required_features_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Constraints(Library(4), **{"max_length": 32, "max_constants": 10, **kwargs})
    with pytest.raises(ValueError, match="without a binary operator"):
        Constraints(Library(4, (), ("sin",)), max_length=32, max_constants=10,
                    required_features=[0, 1])


def test_simplification_keeps_a_required_feature():
    x0, x1 = sympy.symbols("x0 x1")
    X = np.random.default_rng(0).uniform(1, 2, (50, 2))
    formula = x0**2 + sympy.Float(1e-15) * x1  # x1's term is round-off on these rows
    reference = X[:, 0] ** 2 + 1e-15 * X[:, 1]
    assert simplest_equivalent(formula, X, reference, [x0, x1]) == x0**2
    kept = simplest_equivalent(formula, X, reference, [x0, x1], keep=[x1])
    assert x1 in kept.free_symbols


def test_a_fit_reports_only_formulas_with_the_required_features():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0.5, 2, 80), "b": rng.uniform(0.5, 2, 80),
                      "c": rng.uniform(0.5, 2, 80)})
    y = np.column_stack([2 * X.a**2, X.a + 1])  # neither output needs b or c
    model = CADSRRegressor(**TINY, required_features=["b", 2]).fit(X, y)  # pruned and snapped
    for estimator in model.estimators_:
        assert estimator.prune and estimator.snap_constants
        for row in estimator.pareto_front_:
            assert {1, 2} <= {row.expression.library[t].feature for t in row.expression.tokens}
            written = row.expression.to_sympy(["a", "b", "c"]).free_symbols
            assert written & {sympy.Symbol("b"), sympy.Symbol("c")} <= row.equation.free_symbols


def test_required_features_name_columns_and_bad_names_raise():
    X = np.random.default_rng(0).uniform(1, 2, (30, 2))
    y = X[:, 0] * 2
    for bad, message in (([" x0"], "not a column of X"), (["x9"], "not a column of X"),
                         ([2], "out of range"), (["x0", 0], "more than once"),
                         ("x0", "array-like")):
        with pytest.raises(ValueError, match=message):
            CADSRRegressor(**TINY, required_features=bad).fit(X, y)
    with pytest.raises(ValueError, match="max_length is 2"):
        CADSRRegressor(**{**TINY, "max_length": 2}, required_features=["x0", "x1"]).fit(X, y)


def test_warm_start_keeps_the_required_features():
    X = np.random.default_rng(0).uniform(1, 2, (40, 2))
    y = X[:, 0] * 2 + np.random.default_rng(1).normal(0, 0.1, 40)  # no exact stop
    model = CADSRRegressor(**TINY, required_features=["x1"], warm_start=True).fit(X, y)
    model.set_params(required_features=[1]).fit(X, y)  # the same column: continued
    assert model.n_epochs_ == 2 * TINY["n_epochs"]
    with pytest.raises(ValueError, match="required_features"):
        model.set_params(required_features=["x0"]).fit(X, y)


# ---------------------------------------------------------------- nesting limits
def _max_nesting(node, library: Library, outer: str, inner: str, below: int | None = None) -> int:
    """The most ``inner`` operators on a path below the topmost ``outer`` one (−1: no outer)."""
    name = library.names[node.token]
    here = below
    if below is None and name == outer:
        here = 0
    elif below is not None and name == inner:
        here = below + 1
    deepest = -1 if below is None else below
    if here is not None:
        deepest = max(deepest, here if below is not None else -1)
    for child in node.children:
        deepest = max(deepest, _max_nesting(child, library, outer, inner, here))
    return deepest


def test_nesting_helper_counts_per_path():
    library = Library(1)
    tree = Expression.from_names(["exp", "add", "exp", "exp", "x0", "exp", "x0"], library,
                                 order="prefix").to_tree()
    assert _max_nesting(tree, library, "exp", "exp") == 2  # exp(exp(exp(x0)) + exp(x0))
    assert _max_nesting(tree, library, "sin", "exp") == -1


def test_every_sampled_tree_obeys_the_nesting_limits():
    library = Library(2)
    limits = {"sin": {"sin": 0, "cos": 0}, "exp": {"exp": 1}, "log": {"exp": 0}}
    constraints = Constraints(library, max_length=32, max_constants=10, nested_constraints=limits)
    sampler = _sampler(constraints, length_prior=None)  # long trees: deep nesting
    batch = sampler.sample(N_TREES, torch.Generator().manual_seed(2))
    trees = [e.to_tree() for e in batch.expressions(library)]
    for outer, inners in limits.items():
        for inner, limit in inners.items():
            assert max(_max_nesting(t, library, outer, inner) for t in trees) <= limit
    # the limit is what was asked, no stricter: exp(exp(·)) is drawn
    assert max(_max_nesting(t, library, "exp", "exp") for t in trees) == 1
    _replays_exactly(sampler, batch)


def test_a_limit_on_trig_operators_replaces_the_trig_ban_for_that_pair():
    library = Library(1, ("add", "mul"), ("sin", "cos"))
    constraints = Constraints(library, max_length=32, max_constants=10,
                              nested_constraints={"sin": {"cos": 1}})
    sampler = _sampler(constraints, length_prior=None)
    batch = sampler.sample(N_TREES, torch.Generator().manual_seed(3))
    trees = [e.to_tree() for e in batch.expressions(library)]
    deepest = {(o, i): max(_max_nesting(t, library, o, i) for t in trees)
               for o in ("sin", "cos") for i in ("sin", "cos")}
    # cos once below sin; every other trig pair still banned (no_nested_trig)
    assert deepest == {("sin", "cos"): 1, ("sin", "sin"): 0, ("cos", "sin"): 0,
                       ("cos", "cos"): 0}
    _replays_exactly(sampler, batch)
    # without the limit the built-in rule bans cos below sin
    plain = Constraints(library, max_length=32, max_constants=10)
    assert not plain.admits([tuple(library.encode(["sin", "cos", "x0"]))])[0]
    assert constraints.admits([tuple(library.encode(["sin", "cos", "x0"]))])[0]


def test_nesting_limits_and_required_features_together():
    library = Library(3)
    constraints = Constraints(library, max_length=20, max_constants=10, required_features=[0, 2],
                              nested_constraints={"mul": {"mul": 0}, "exp": {"add": 1}})
    sampler = _sampler(constraints)
    batch = sampler.sample(N_TREES, torch.Generator().manual_seed(4))
    for expression in batch.expressions(library):
        assert {0, 2} <= {library[t].feature for t in expression.tokens}
        assert _max_nesting(expression.to_tree(), library, "mul", "mul") <= 0
    _replays_exactly(sampler, batch)


@pytest.mark.parametrize("nested, message", [
    ({"tan": {"sin": 0}}, "'tan' as an outer operator"),
    ({"sin": {"nope": 0}}, "'nope' below 'sin'"),
    ({"sin": {"cos": -1}}, "integer ≥ 0"),
    ({"sin": {"cos": 0.5}}, "integer ≥ 0"),
    ({"sin": 0}, "must be a dict of inner operator"),
])
def test_bad_nesting_limits_raise(nested, message):
    X = np.random.default_rng(0).uniform(1, 2, (30, 2))
    with pytest.raises(ValueError, match=message):
        CADSRRegressor(**TINY, nested_constraints=nested).fit(X, X[:, 0])
    with pytest.raises(ValueError, match=message):
        Constraints(Library(2), max_length=32, max_constants=10, nested_constraints=nested)


def test_nesting_limits_take_pysr_names_and_survive_warm_start():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, (40, 2))
    y = np.exp(X[:, 0])
    limits = {"*": {"*": 0}, "exp": {"exp": 0}}
    model = CADSRRegressor(**TINY, nested_constraints=limits, warm_start=True).fit(X, y)
    for row in model.pareto_front_:
        tree = row.expression.to_tree()
        assert _max_nesting(tree, row.expression.library, "mul", "mul") <= 0
        assert _max_nesting(tree, row.expression.library, "exp", "exp") <= 0
    with pytest.raises(ValueError, match="nested_constraints"):
        model.set_params(nested_constraints={"exp": {"exp": 1}}).fit(X, y)


def test_a_checkpoint_resumes_only_with_the_same_limits(tmp_path):
    X = np.random.default_rng(0).uniform(1, 2, (40, 2))
    y = X[:, 0] * 2 + np.random.default_rng(1).normal(0, 0.1, 40)
    path = str(tmp_path / "run.ckpt")
    limits = dict(required_features=["x1"], nested_constraints={"exp": {"exp": 0}},
                  operator_complexity={"exp": 2})
    CADSRRegressor(**TINY, **limits, checkpoint=path).fit(X, y)
    resumed = CADSRRegressor(**TINY, **limits, checkpoint=path).fit(X, y)
    assert resumed.n_epochs_ == TINY["n_epochs"]  # taken up where it ended: no new epoch
    for name, other in (("required_features", ["x0"]), ("nested_constraints", None),
                        ("operator_complexity", {"exp": 3})):
        with pytest.raises(ValueError, match=name):
            CADSRRegressor(**TINY, **{**limits, name: other}, checkpoint=path).fit(X, y)
