"""The baselines: the constant and the affine formula in each feature beside the search's own."""

import numpy as np
import pytest
import sympy
from budgets import TINY

from cadsr_sklearn import CADSRRegressor, Library
from cadsr_sklearn.search.refinement.baselines import baseline_expressions


def _forms(library: Library, names: list[str]) -> list[sympy.Expr]:
    return [e.to_sympy(names, symbolic_constants=True) for e in baseline_expressions(library)]


def test_the_baselines_are_the_constant_and_each_features_line():
    a, b, c0, c1 = sympy.symbols("a b c0 c1")
    assert _forms(Library(2), ["a", "b"]) == [c0, c0 + c1 * a, c0 + c1 * b]
    assert _forms(Library(1, ("mul",)), ["a"]) == [c0]  # no add: no line
    assert baseline_expressions(Library(1, use_constants=False)) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tiny_search_is_never_worse_than_the_line_it_missed(seed):
    # one informative feature of eight, and a search of two epochs of 16 formulas
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 8))
    y = 3.0 * X[:, 5] - 1.0 + rng.normal(0, 0.1, 120)
    model = CADSRRegressor(**{**TINY, "n_epochs": 2, "batch_size": 16,
                              "random_state": seed}).fit(X, y)
    line = np.polyfit(X[:, 5], y, 1)
    r2_line = 1 - np.mean((np.polyval(line, X[:, 5]) - y) ** 2) / np.var(y)
    # the line itself, or what the criterion ranks above it (3*x5 - 1, its numbers snapped)
    assert model.score(X, y) >= r2_line - 1e-3
    assert model.expression_.free_symbols == {sympy.Symbol("x5")}


def test_constraints_apply_to_the_baselines():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, size=(60, 2))
    y = 2.0 * X[:, 0] + 1.0
    constant, line_in_x0, _ = (e.tokens for e in baseline_expressions(Library(2)))
    # every formula must hold x1: neither y = c nor the line in x0 may be on the front
    model = CADSRRegressor(**TINY, required_features=["x1"]).fit(X, y)
    trees = [row.expression.tokens for row in model.pareto_front_]
    assert constant not in trees and line_in_x0 not in trees
    # the line in x0 is the law, and is found when nothing forbids it
    model = CADSRRegressor(**TINY).fit(X, y)
    assert line_in_x0 in [row.expression.tokens for row in model.pareto_front_]
    # one constant at most: no line of two constants is on the front
    model = CADSRRegressor(**TINY, max_constants=1).fit(X, y)
    assert all(row.expression.n_constants <= 1 for row in model.pareto_front_)


def test_the_constant_is_scored_though_the_sampler_never_draws_it():
    # Theophylline in one subject (R's Theoph, subject 1), 8 of its 11 rows: the sampler's
    # rules (no constant-only tree, at least two nodes) spare it from drawing y = c, but
    # they are no verdict on the answer. Without the constant, this search answered
    # sqrt(t), which its own criterion ranks below y = c, at a training R² of -1.7.
    t = np.array([24.37, 5.1, 0.25, 7.03, 9.05, 1.12, 0.0, 3.82])
    conc = np.array([3.28, 8.36, 2.84, 7.47, 6.89, 10.5, 0.74, 8.58])
    model = CADSRRegressor(**{**TINY, "n_epochs": 4}).fit(t[:, None], conc)
    constant = baseline_expressions(model.best_expression_.library)[0].tokens
    [row] = [row for row in model.pareto_front_ if row.expression.tokens == constant]
    assert row.loss == pytest.approx(np.var(conc))
    # never worse than the mean on its own training rows
    assert model.score(t[:, None], conc) >= -1e-9
    sqrt_t = model.score_formula("sqrt(x0)", t[:, None], conc)
    assert sqrt_t.criterion < row.criterion
