"""``operator_complexity``: a token's complexity, one k for the BIC, the description
length, the Pareto front and what is shown."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.scoring.rewards import make_reward

from budgets import TINY

WEIGHTS = {"sin": 3, "exp": 3, "pow": 2}


def _weighted_k(expression: Expression, weights: dict[str, int]) -> int:
    names = expression.library.names
    return sum(weights.get(names[t], 1) for t in expression.tokens) + expression.n_fitted


def test_a_library_carries_its_tokens_complexity():
    library = Library(2, operator_complexity={**WEIGHTS, "^": 2})  # PySR's name of pow
    by_name = dict(zip(library.names, library.complexity_by_id))
    assert by_name == {**dict.fromkeys(library.names, 1), **WEIGHTS}
    assert not library.uniform_complexity and Library(2).uniform_complexity
    assert library != Library(2)  # different formulas' k: not the same library
    copy = pickle.loads(pickle.dumps(library))
    assert copy == library and copy.complexity_by_id == library.complexity_by_id


@pytest.mark.parametrize("weights, message", [
    ({"tan": 2}, "not one of the operators"),
    ({"x0": 2}, "not one of the operators"),
    ({"sin": 0}, "integer ≥ 1"),
    ({"sin": 1.5}, "integer ≥ 1"),
    ({"sin": True}, "integer ≥ 1"),
])
def test_bad_operator_complexity_raises(weights, message):
    with pytest.raises(ValueError, match=message):
        Library(2, operator_complexity=weights)
    X = np.random.default_rng(0).uniform(1, 2, (30, 2))
    with pytest.raises(ValueError, match=message):
        CADSRRegressor(**TINY, operator_complexity=weights).fit(X, X[:, 0])


def test_complexity_weighs_nodes_and_the_rewards_follow():
    plain, weighted = Library(1), Library(1, operator_complexity=WEIGHTS)
    names = ["mul", "c", "sin", "pow", "x0", "x0"]  # c*sin(x0**x0), BFS
    a, b = (Expression.from_names(names, lib, constants=[2.0]) for lib in (plain, weighted))
    assert a.complexity == 6 + 1 and b.complexity == 1 + 1 + 3 + 2 + 1 + 1 + 1
    assert b.complexity == _weighted_k(b, WEIGHTS) and b.node_complexity == 9
    X = np.random.default_rng(0).uniform(0.5, 1.5, (40, 1))
    y = a.evaluate(X) + np.random.default_rng(1).normal(0, 0.01, 40)
    S, extra = len(y), b.complexity - a.complexity
    bic = make_reward("bic", y, X=X, bic_variance="mle", likelihood="gaussian")
    assert bic(a.evaluate(X), b) == pytest.approx(bic(a.evaluate(X), a) - extra * math.log(S))
    mdl = make_reward("mdl", y, X=X, likelihood="gaussian")
    assert mdl(a.evaluate(X), b) == pytest.approx(
        mdl(a.evaluate(X), a) - 2 * extra * math.log(len(plain)))


def test_the_front_and_the_answer_count_the_weights():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2, (80, 2))
    y = np.column_stack([X[:, 0] * X[:, 1] + 1, np.sin(X[:, 0]) * 2])
    weights = {"add": 2, "sub": 2, "mul": 3, "div": 3, "pow": 4, "sin": 5}
    model = CADSRRegressor(**TINY, unary_operators=("sin", "exp"),
                           operator_complexity=weights).fit(X, y)
    for estimator in model.estimators_:  # each output: its own search, the same weights
        rows = estimator.pareto_front_
        ks = [row.complexity for row in rows]
        assert ks == [_weighted_k(row.expression, weights) for row in rows]
        assert ks == sorted(set(ks))  # one formula per complexity, simplest first
        assert any(k != len(row.expression) + row.expression.n_fitted
                   for k, row in zip(ks, rows))  # the weights do count
        table = estimator.equations_
        assert list(table["complexity"]) == ks


def test_warm_start_needs_the_same_operator_complexity():
    X = np.random.default_rng(0).uniform(1, 2, (40, 2))
    y = X[:, 0] * X[:, 1] + np.random.default_rng(1).normal(0, 0.1, 40)  # no exact stop
    model = CADSRRegressor(**TINY, operator_complexity={"mul": 2}, warm_start=True).fit(X, y)
    model.fit(X, y)
    assert model.n_epochs_ == 2 * TINY["n_epochs"]
    with pytest.raises(ValueError, match="operator_complexity"):
        model.set_params(operator_complexity={"mul": 3}).fit(X, y)
