"""The proposers beyond the policy: the genetic stage (its operators keep trees whole, its
children keep the sampler's rules, recombination writes what neither parent holds, and the
loop takes its children in) and the linear leaves."""

import warnings

import numpy as np
import pytest
import sympy
import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.formula_parser import parse_formula
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.search.build import build_search
from cadsr_sklearn.search.genetic import _Grammar, breadth_first, crossover, mutate, subtree_end
from cadsr_sklearn.expressions.operations import apply_rows
from cadsr_sklearn.search.inversion import (INVERSES, invertible, output_through, path_steps,
                                            subtree_target)
from cadsr_sklearn.search.linear import (INNER_PROPOSALS, MAX_MONOMIALS, LinearCombinations,
                                         Selection, _exponent_vectors, _leaf_bic,
                                         forward_selection)
from cadsr_sklearn.search.proposers import GENETIC, LINEAR, POLICY, Proposal
from cadsr_sklearn.units.quantities import data_units
from cadsr_sklearn.units.rule import UnitsRule

from components import settings


def _random_trees(library, n, rng):
    grammar = _Grammar(library)
    return [grammar.random_tree(rng, depth=3) for _ in range(n)]


def test_subtree_end_spans_one_subtree():
    library = Library(2)
    tree = Expression.from_names(["add", "mul", "x0", "x1", "sin", "x0"], library,
                                 order="prefix").prefix()
    arity = library.arity_by_id
    assert subtree_end(tree, 0, arity) == len(tree)
    assert subtree_end(tree, 1, arity) == 4  # mul x0 x1
    assert subtree_end(tree, 4, arity) == 6  # sin x0
    assert subtree_end(tree, 2, arity) == 3  # a leaf


def test_crossover_and_mutation_always_give_whole_trees():
    library = Library(3)
    rng = np.random.default_rng(0)
    grammar = _Grammar(library)
    trees = _random_trees(library, 200, rng)
    for a, b in zip(trees[::2], trees[1::2]):
        c, d = crossover(a, b, library.arity_by_id, rng)
        assert len(c) + len(d) == len(a) + len(b)  # sub-trees swapped, nothing lost
        for child in (c, d, mutate(c, grammar, rng), mutate(d, grammar, rng)):
            Expression.from_prefix(child, library)  # raises for a tree that is not whole


def test_crossover_swaps_subtrees_between_parents():
    library = Library(4)
    a = Expression.from_names(["add", "mul", "x0", "x1", "c"], library, order="prefix").prefix()
    b = Expression.from_names(["div", "c", "add", "x2", "x3"], library, order="prefix").prefix()
    rng = np.random.default_rng(1)
    children = {tuple(child) for _ in range(400)
                for child in crossover(a, b, library.arity_by_id, rng)}
    law = Expression.from_names(["div", "mul", "x0", "x1", "add", "x2", "x3"], library,
                                order="prefix").prefix()
    assert tuple(law) in children  # (x0*x1)/(x2 + x3): the product into the quotient


def _search(X, y, **params):
    params = dict(batch_size=64, random_state=0, n_jobs=1) | params
    return build_search(settings(**params), X, y, None, torch.device("cpu"), 0, 0)


def test_children_keep_the_samplers_rules():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, (100, 3))
    y = X[:, 0] * X[:, 1] / X[:, 2]
    search = _search(X, y, max_constants=1, max_length=12, required_features=[2],
                     genetic_generations=3, genetic_population=64)
    stage = search.proposers[1].stage
    seeds = search.scorer(search.sampler.sample(64, search.generator).expressions(search.library))
    population = [c for c in seeds if np.isfinite(c.reward)]
    for _ in range(5):
        children = stage._offspring(population, search.config)
        constraints = search.sampler.constraints
        assert constraints.admits([e.tokens for e in children]).all()
        assert all(len(e) <= 12 and e.n_constants <= 1 for e in children)
        assert all(2 in {search.library[t].feature for t in e.tokens} for e in children)
        population = search.scorer(children)


def test_children_keep_the_units():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, (100, 2))
    y = 0.5 * X[:, 0] * X[:, 1] ** 2
    rule = UnitsRule(data_units(["kg", "m/s"], "J", ["m", "v"]))
    search = build_search(settings(batch_size=64, random_state=0, n_jobs=1), X, y, None,
                          torch.device("cpu"), 0, 0, units=rule)
    stage = search.proposers[1].stage
    batch = search.sampler.sample(64, search.generator)
    population = [c for c in search.scorer(batch.expressions(search.library))
                  if np.isfinite(c.reward)]
    assert population  # the masks write consistent formulas
    changed = 0
    for _ in range(4):
        children = stage._offspring(population, search.config)
        assert all(rule.consistent(e) for e in children)
        changed += sum(e.key not in {c.expression.key for c in population} for e in children)
        population = [c for c in search.scorer(children) if np.isfinite(c.reward)]
    assert changed > 0  # not only the parents handed back


def test_the_stage_recombines_what_the_batch_holds():
    """Seeded with two halves of a law, a few generations write the law, which neither
    seed holds, and the scorer fits it exactly (parents drawn at random: the test is of
    the recombination, not of the selection, which would let the better half take over)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (200, 4))
    y = X[:, 0] * X[:, 1] / (X[:, 2] + X[:, 3])
    search = _search(X, y, genetic_generations=10, genetic_population=40, genetic_elites=5,
                     tournament_size=1, use_one=False)
    lib = search.library
    halves = [Expression.from_names(names, lib, order="prefix") for names in
              (["mul", "mul", "x0", "x1", "c"], ["div", "c", "add", "x2", "x3"])]
    seeds = search.scorer(halves * 10)
    result = search.proposers[1].stage.run(seeds, search.scorer, search.config)
    assert result.generations == 10 and result.evaluations > 0
    best = result.elites[0]
    assert best.loss < 1e-20 * np.var(y)
    assert all(c.expression.key not in {h.key for h in halves} for c in result.scored)


def test_the_loop_records_each_proposer_and_who_wrote_the_answer():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (200, 2))
    y = X[:, 0] / (X[:, 0] + X[:, 1])
    # the genetic stage beside the policy alone (the linear leaves write this ratio)
    model = CADSRRegressor(batch_size=64, n_epochs=3, random_state=0, n_jobs=1,
                           genetic_generations=2, genetic_population=32, genetic_elites=8,
                           linear_terms=0, unary_edits=0).fit(X, y)
    first = model.history_[0]
    # every child scored is counted; at most the 8 elites enter the selection
    assert first["proposed_policy"] == 64 and first["proposed_genetic"] > 8
    assert first["top_genetic"] <= 8
    assert first["top_policy"] + first["top_genetic"] <= 4  # n_top = ⌈5 % of 64⌉
    assert model.found_by_ in (POLICY, GENETIC)
    # the generations' children are counted as scored formulas
    assert model.n_evaluations_ > 3 * 64

    paper = CADSRRegressor(batch_size=64, n_epochs=3, random_state=0, n_jobs=1,
                           genetic_generations=0, linear_terms=0, unary_edits=0).fit(X, y)
    assert paper.n_evaluations_ == 3 * 64
    assert all(h["proposed_genetic"] == 0 for h in paper.history_)
    assert paper.found_by_ == POLICY


def test_genetic_search_is_reproducible():
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 3, (150, 2))
    y = np.sqrt(X[:, 0] ** 2 + X[:, 1] ** 2)
    params = dict(batch_size=64, n_epochs=4, random_state=3, genetic_generations=2,
                  genetic_population=32)
    a = CADSRRegressor(n_jobs=1, **params).fit(X, y)
    b = CADSRRegressor(n_jobs=2, **params).fit(X, y)
    assert str(a.expression_) == str(b.expression_)
    assert [h["best_reward"] for h in a.history_] == [h["best_reward"] for h in b.history_]


@pytest.mark.parametrize("bad", [dict(genetic_generations=-1), dict(genetic_population=1),
                                 dict(crossover_rate=1.5), dict(tournament_size=0)])
def test_bad_genetic_settings_are_refused(bad):
    with pytest.raises(ValueError):
        CADSRRegressor(**bad).fit(np.ones((10, 1)), np.arange(10.0))


# ------------------------------------------------------------------- linear leaves
def test_forward_selection_finds_the_sparse_sum():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(300, 12))
    y = 2.0 * B[:, 3] - 0.5 * B[:, 7] + 1.25
    path = forward_selection(B, y, np.ones(300), n_terms=3)
    columns, coef = path[1]
    assert sorted(columns) == [3, 7]
    assert np.allclose(coef[np.argsort(columns)], [2.0, -0.5]) and np.isclose(coef[-1], 1.25)
    assert len(path) == 3  # a step per term, up to n_terms


def test_a_selection_with_integer_weights_is_one_on_repeated_rows():
    """scikit-learn's contract for sample_weight holds in the forward selection too: the
    columns are centred on their weighted means, and a row of weight k counts as k rows."""
    rng = np.random.default_rng(0)
    B, scale = rng.uniform(0.5, 2.0, size=(40, 6)), rng.uniform(0.5, 2.0, size=40)
    y = 2.0 * B[:, 3] - 0.5 * B[:, 1] * B[:, 2] + rng.normal(0, 0.1, 40)
    counts = rng.integers(0, 4, size=40)
    for extra in (None, scale):
        weighted = Selection(B, np.sqrt(counts.astype(float))).path(y, 3, None, extra)
        repeated = Selection(B.repeat(counts, axis=0), np.ones(counts.sum())).path(
            y.repeat(counts), 3, None, None if extra is None else extra.repeat(counts))
        assert [c for c, _ in weighted] == [c for c, _ in repeated]
        for (_, a), (_, b) in zip(weighted, repeated):
            np.testing.assert_allclose(a, b, rtol=1e-9)


def test_a_column_the_chosen_ones_span_ends_the_path():
    """Once x and z are chosen, x + 1e-15·w is in their span to round-off, yet it still
    correlates a little with what is left of y: it is not fitted, and the path ends."""
    rng = np.random.default_rng(0)
    x, z, w = rng.normal(size=(3, 200))
    B = np.column_stack([x, z, x + 1e-15 * w])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = forward_selection(B, x + z + 0.1 * w, np.ones(200), n_terms=3)
    assert len(path) == 2 and 1 in path[-1][0]
    assert np.allclose(path[-1][1][:2], [1.0, 1.0], atol=0.05)
    assert forward_selection(B, np.full(200, 3.0), np.ones(200), n_terms=3) == []


def test_a_selection_leaves_out_undefined_rows_and_numbers_scaled_columns_after():
    rng = np.random.default_rng(0)
    B, scale = rng.normal(size=(300, 12)), rng.normal(size=300)
    y = 2.0 * B[:, 3] - 3.0 * scale * B[:, 1] + 1.25
    defined = rng.random(300) > 0.1
    y[~defined] = 1e6  # rows no value reaches
    selection = Selection(B, np.ones(300))
    columns, coef = selection.path(y, 2, defined, scale)[1]
    assert sorted(columns) == [3, 13]
    assert np.allclose(coef[np.argsort(columns)], [2.0, -3.0]) and np.isclose(coef[-1], 1.25)
    assert all(max(columns) < 12 for columns, _ in selection.path(y, 2, defined))


def test_a_path_gives_the_values_of_each_step_on_every_row():
    """A step's values are its sum c0 + Σ c_i·B_i on every row, the rows left out of the
    fit included; with scaled columns, the ratio P / Q its linearised fit stands for."""
    rng = np.random.default_rng(0)
    B = rng.uniform(1, 2, size=(200, 6))
    y = (1.5 + 2.0 * B[:, 1]) / (1 + 0.5 * B[:, 4]) + rng.normal(0, 0.01, 200)
    defined = rng.random(200) > 0.1
    selection = Selection(B, np.ones(200))
    path, values = selection.path_and_values(y, 3, defined)
    assert len(path) == len(values) == 3
    for (columns, coef), v in zip(path, values):
        np.testing.assert_allclose(v, B[:, columns] @ coef[:-1] + coef[-1], rtol=1e-12)
    path, ratios = selection.path_and_values(y, 3, defined, -values[-1])
    for (columns, coef), v in zip(path, ratios):
        P = coef[-1] + sum(k * B[:, j] for j, k in zip(columns, coef) if j < 6)
        Q = 1 + sum(k * B[:, j - 6] for j, k in zip(columns, coef) if j >= 6)
        np.testing.assert_allclose(v, P / Q, rtol=1e-12)
    assert any(j >= 6 for j in path[0][0])  # a ratio from its first step


def test_an_inner_leaf_is_ranked_by_the_bic_its_written_formula_has():
    """The inner leaves are ranked before they are written: their output carried up the
    path, their complexity from their shape. Each written formula has that BIC on the
    leaf's rows, and no formula is proposed twice."""
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 3, (300, 3))
    y = X[:, 0] * np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2) + rng.normal(0, 0.05, 300)
    search = _search(X, y, linear_terms=3, genetic_generations=0)
    linear = next(p for p in search.proposers if p.origin == LINEAR)
    rows = linear._rows_for_leaves(search.scorer.fitter)
    reward = search.scorer.reward
    source = Expression.from_names(["mul", "x0", "add", "x1", "c"], search.library, [0.5],
                                   order="prefix")
    best = linear._best_rewritten(source, rows, reward, 3)
    assert len(best) == INNER_PROPOSALS == len({prefix for _, prefix, _ in best})
    assert [bic for bic, _, _ in best] == sorted(bic for bic, _, _ in best)
    n_rows = rows.sqrt_w @ rows.sqrt_w
    for bic, prefix, constants in best:
        written = Expression.from_prefix(list(prefix), search.library, constants)
        residual = (written.evaluate(rows.X) - rows.y) * rows.sqrt_w
        loss = residual @ residual / n_rows
        assert bic == pytest.approx(_leaf_bic(loss, written.complexity, reward), rel=1e-9)


def test_linear_leaves_write_a_sum_in_one_epoch():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (300, 4))
    y = 3.1 * X[:, 0] * X[:, 1] - 1.7 * X[:, 2] / X[:, 3] + 0.4
    model = CADSRRegressor(batch_size=64, n_epochs=2, random_state=0, n_jobs=1,
                           genetic_generations=0, linear_terms=3).fit(X, y)
    assert model.found_by_ == LINEAR and model.stop_reason_ == "tol"
    assert model.score(X, y) > 1 - 1e-12
    # a sum per step of the path (3), and the best formulas with a leaf inside
    assert 3 < model.history_[0]["proposed_linear"] <= 3 + INNER_PROPOSALS


def test_the_leaves_and_the_edits_are_on_by_default_and_off_in_the_papers_settings():
    assert (CADSRRegressor().linear_terms, CADSRRegressor().unary_edits) == (3, 2)
    assert (CADSRRegressor.paper().linear_terms, CADSRRegressor.paper().unary_edits) == (0, 0)
    with pytest.raises(ValueError, match="linear_terms"):  # "auto" was the units' choice
        CADSRRegressor(linear_terms="auto").fit(np.ones((10, 1)), np.arange(10.0))


def test_a_fit_with_units_proposes_leaves_in_both_searches(monkeypatch):
    from cadsr_sklearn.search import reduction

    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (100, 3))  # m, v, c: the relativistic mass, v < c
    X[:, 1] = X[:, 2] * rng.uniform(0.1, 0.6, 100)
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / X[:, 2] ** 2) + rng.normal(0, 0.01, 100)
    copies = []  # the copy of the estimator that searches the dimensionless groups
    clone = reduction.clone
    monkeypatch.setattr(reduction, "clone", lambda estimator: (
        copies.append(clone(estimator)), copies[-1])[1])
    model = CADSRRegressor(batch_size=64, n_epochs=2, random_state=0, n_jobs=1).fit(
        X, y, X_units=["kg", "m/s", "m/s"], y_units="kg")
    assert all(h["proposed_linear"] > 0 for h in model.history_)
    [copy] = copies
    assert all(h["proposed_linear"] > 0 for h in copy.history_)


def test_linear_leaves_keep_the_constant_cap():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (300, 3))
    y = X[:, 0] + X[:, 1] + X[:, 2]
    model = CADSRRegressor(batch_size=64, n_epochs=2, random_state=0, n_jobs=1,
                           max_constants=2, genetic_generations=0, linear_terms=3).fit(X, y)
    assert model.best_expression_.n_constants <= 2
    # a sum of three terms needs four constants: of the sums, only the one-term one is
    # admitted, alone or inside a formula
    search = _search(X, y, max_constants=2, genetic_generations=0, linear_terms=3)
    sample = search.scorer(search.sampler.sample(64, search.generator)
                           .expressions(search.library))
    proposed = next(p for p in search.proposers if p.origin == LINEAR).propose(
        search, [Proposal(POLICY, sample)])
    assert proposed.candidates
    assert all(c.expression.n_constants <= 2 for c in proposed.candidates)


def test_breadth_first_is_the_searchs_order():
    library = Library(3)
    rng = np.random.default_rng(2)
    for tree in _random_trees(library, 100, rng):
        assert tuple(breadth_first(tree, library.arity_by_id)) == \
            Expression.from_prefix(tree, library).tokens


def test_a_warm_started_genetic_search_continues_as_one_longer_fit():
    """The stage's random generator and the proposers are part of the search's state."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, size=(120, 2))
    y = X[:, 0] ** 2 * np.sin(X[:, 1]) + 0.5 * X[:, 0]
    params = dict(batch_size=48, ff_dim=32, max_length=14, steps_per_epoch=1, random_state=0,
                  tol=0.0, n_jobs=1, genetic_generations=2, genetic_population=32,
                  linear_terms=2)
    whole = CADSRRegressor(n_epochs=5, **params).fit(X, y)
    model = CADSRRegressor(n_epochs=3, warm_start=True, **params).fit(X, y)
    model.set_params(n_epochs=2).fit(X, y)
    assert [h["best_reward"] for h in model.history_] == [h["best_reward"] for h in whole.history_]
    # the linear leaves remember which formulas they rewrote: none is rewritten again
    assert ([h["proposed_linear"] for h in model.history_]
            == [h["proposed_linear"] for h in whole.history_])
    assert model.best_expression_.key == whole.best_expression_.key
    assert model.found_by_ == whole.found_by_


def test_the_formula_file_keeps_who_wrote_the_answer(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (200, 2))
    y = 2.5 * X[:, 0] * X[:, 1] + 0.5
    model = CADSRRegressor(batch_size=48, n_epochs=2, random_state=0, n_jobs=1,
                           linear_terms=2).fit(X, y)
    model.save_formula(tmp_path / "model.json")
    loaded = CADSRRegressor.load_formula(tmp_path / "model.json")
    assert loaded.found_by_ == model.found_by_ == LINEAR
    text = (tmp_path / "model.json").read_text().replace('"found_by": "linear"', '"found_by": 3')
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(ValueError, match="found_by"):
        CADSRRegressor.load_formula(tmp_path / "bad.json")


def test_linear_leaves_take_the_new_rows_of_a_warm_start():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (200, 2))
    model = CADSRRegressor(batch_size=48, n_epochs=1, random_state=0, n_jobs=1, tol=0.0,
                           linear_terms=2, warm_start=True).fit(X, 2.0 * X[:, 0] * X[:, 1])
    X_new = rng.uniform(1, 5, (150, 2))
    y_new = 3.0 * X_new[:, 0] / X_new[:, 1] + 1.0
    model.set_params(tol=1e-20).fit(X_new, y_new)  # the basis is built on the new rows
    assert model.score(X_new, y_new) > 1 - 1e-12


def test_linear_leaves_on_columns_of_extreme_scale_raise_no_warning():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(1, 5, 100), 10.0 ** rng.uniform(-200, -150, 100)])
    y = 2.0 * X[:, 0] + 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CADSRRegressor(batch_size=48, n_epochs=2, random_state=0, n_jobs=1,
                               genetic_generations=1, genetic_population=16,
                               linear_terms=3).fit(X, y)
    assert model.score(X, y) > 1 - 1e-9
    # x0/x1 is 1e150 and more: its square overflows, and the column is left out
    B = np.column_stack([X[:, 0], X[:, 0] / X[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [(columns, coef)] = forward_selection(B, y, np.ones(100), n_terms=2)
    assert columns == [0] and np.allclose(coef, [2.0, 1.0])


@pytest.mark.parametrize("rows", [300, 3000])
def test_ctrl_c_in_the_genetic_stage_returns_the_best_so_far(monkeypatch, rows):
    """A Ctrl-C in the third epoch's genetic stage: the fit returns the best model so far,
    and the formula it shows predicts what the model predicts."""
    from cadsr_sklearn.search.genetic import GeneticStage

    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (rows, 2))
    y = X[:, 0] ** 2 * np.sin(X[:, 1]) + 0.5 * X[:, 0]
    calls = []
    offspring = GeneticStage._offspring

    def interrupted(self, population, config):
        calls.append(True)
        if len(calls) == 5:  # the third epoch's first generation (two a epoch)
            raise KeyboardInterrupt
        return offspring(self, population, config)

    monkeypatch.setattr(GeneticStage, "_offspring", interrupted)
    model = CADSRRegressor(batch_size=48, n_epochs=6, random_state=0, n_jobs=1, tol=0.0,
                           genetic_generations=2, genetic_population=32).fit(X, y)
    assert model.interrupted_ and model.n_epochs_ == 2
    shown = sympy.lambdify(sympy.symbols("x0 x1"), model.sympy())(X[:, 0], X[:, 1])
    np.testing.assert_allclose(model.predict(X), shown, rtol=1e-9)


# ------------------------------------------------------------- linear leaves inside formulas
def _subtree_values(expression, X):
    library, prefix = expression.library, expression.prefix()
    constants = list(expression.prefix_constants())
    first = np.cumsum([0] + [t == library.const_id for t in prefix])
    ends = [subtree_end(prefix, i, library.arity_by_id) for i in range(len(prefix))]
    return prefix, [Expression.from_prefix(prefix[i:ends[i]], library,
                                           constants[first[i]:first[ends[i]]]).evaluate(X)
                    for i in range(len(prefix))]


@pytest.mark.parametrize("names, constants", [
    # x0/sqrt(c - x1*x1/(x2*x2)) + exp(sin(x2)): every operator of the paper's set on a path
    (["add", "div", "x0", "sqrt", "sub", "c", "div", "mul", "x1", "x1", "mul", "x2", "x2",
      "exp", "sin", "x2"], [3.0]),
    (["pow", "log", "add", "x0", "x1", "cos", "mul", "c", "x2"], [0.5]),
    (["sub", "c", "pow", "c", "div", "x1", "x2"], [3.0, 2.0]),
])
def test_the_target_of_each_subtree_is_what_it_outputs_in_its_formula(names, constants):
    """Inverting the path from the root gives back every sub-tree's own values (on the
    principal branches, where these formulas stay)."""
    library = Library(3)
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 1.5, (40, 3))
    expression = Expression.from_names(names, library, constants, order="prefix")
    y = expression.evaluate(X)
    prefix, values = _subtree_values(expression, X)
    token_names = [t.name for t in library.tokens]
    written = list(expression.prefix_constants())

    def apply(token, a, b):
        return apply_rows(library.opcodes[token], a, b, library.operator_table)

    for place in range(1, len(prefix)):
        assert invertible(token_names, prefix, library.arity_by_id, place)
        steps = path_steps(prefix, library.arity_by_id, values, place)
        target = subtree_target(steps, token_names, y)
        assert np.allclose(target, values[place], rtol=1e-9, atol=1e-12), names[place]
        # and back up: the formula's output from the sub-tree's values, and from others
        assert np.allclose(output_through(steps, values[place], apply), y, rtol=1e-12)
        # a constant k in its place: the formula written so, evaluated by its program
        end = subtree_end(prefix, place, library.arity_by_id)
        before = sum(t == library.const_id for t in prefix[:place])
        after = sum(t == library.const_id for t in prefix[:end])
        replaced = Expression.from_prefix(
            prefix[:place] + [library.const_id] + prefix[end:], library,
            written[:before] + [1.25] + written[after:])
        assert np.allclose(output_through(steps, np.full(len(X), 1.25), apply),
                           replaced.evaluate(X), rtol=1e-12, equal_nan=True), names[place]


def test_a_target_no_value_reaches_is_nan_and_custom_operators_are_not_inverted():
    library = Library(1, unary_operators=("sqrt", "exp"))
    X = np.array([[1.0], [4.0]])
    expression = Expression.from_names(["sqrt", "x0"], library, order="prefix")
    prefix, values = _subtree_values(expression, X)
    names = [t.name for t in library.tokens]
    steps = path_steps(prefix, library.arity_by_id, values, 1)
    target = subtree_target(steps, names, np.array([-1.0, 3.0]))
    assert np.isnan(target[0]) and target[1] == 9.0  # no root is -1
    assert set(INVERSES) >= {"add", "sub", "mul", "div", "pow", "sin", "cos", "log", "sqrt",
                             "exp"}
    assert not invertible(["my_op", "x0"], [0, 1], [1, 0], 1)


def test_the_monomial_basis_keeps_few_features_first_and_stays_bounded():
    assert _exponent_vectors(2)[:4] == [(-1, 0), (1, 0), (0, -1), (0, 1)]
    assert (-2, 2) in _exponent_vectors(2) and (1, 1, -2) in _exponent_vectors(3)
    assert (2, 2) in _exponent_vectors(2) and (3, 0) not in _exponent_vectors(2)
    assert len(_exponent_vectors(60)) == MAX_MONOMIALS  # made lazily: no millions first


def _proposed_from(search, formula: Expression) -> list:
    """The linear proposer's candidates in an epoch whose batch held ``formula`` alone."""
    linear = next(p for p in search.proposers if p.origin == LINEAR)
    assert isinstance(linear, LinearCombinations)
    return linear.propose(search, [Proposal(POLICY, search.scorer.score_given([formula]))]
                          ).candidates


def _writes_exactly(candidates: list, X: np.ndarray, y: np.ndarray) -> bool:
    """Whether the closest of ``candidates`` is y to round-off."""
    best = min(candidates, key=lambda c: c.loss)
    return bool(best.loss < 1e-20 * np.var(y)
                and np.allclose(best.expression.evaluate(X), y, rtol=1e-9))


def test_a_linear_leaf_inside_a_formula_writes_the_sum_under_a_root():
    """The relativistic mass from a formula that has the root but not the sum in it: the
    leaf takes the place of the constant, and its values there are 1 - v**2/c**2."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(1, 5, 300), rng.uniform(1, 2, 300), rng.uniform(3, 10, 300)])
    y = X[:, 0] / np.sqrt(1 - X[:, 1] ** 2 / X[:, 2] ** 2)
    search = _search(X, y, linear_terms=2, genetic_generations=0)
    near = Expression.from_names(["div", "x0", "sqrt", "c"], search.library, [0.9],
                                 order="prefix")
    assert _writes_exactly(_proposed_from(search, near), X, y)


def test_a_ratio_of_sums_takes_the_place_of_a_subtree():
    """Coulomb's law of a moving charge, q/(4*pi*epsilon*r*(1 - v/c)), from a formula
    that holds q/(epsilon*r) times a constant: the values there are 1/(4*pi*(1 - v/c)),
    which no sum of monomials is, and a ratio of two is."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.uniform(1, 5, 400) for _ in range(3)]
                        + [rng.uniform(1, 2, 400), rng.uniform(3, 10, 400)])
    q, eps, r, v, c = X.T
    y = q / (4 * np.pi * eps * r * (1 - v / c))
    search = _search(X, y, linear_terms=2, genetic_generations=0)
    near = Expression.from_names(["div", "mul", "c", "x0", "mul", "x1", "x2"],
                                 search.library, [0.1], order="prefix")
    assert _writes_exactly(_proposed_from(search, near), X, y)


def test_a_sum_under_a_unary_operator_takes_the_place_of_a_subtree():
    """The magnitude of a moment in a field, mom*sqrt(Bx**2 + By**2 + Bz**2), from
    mom*Bx: the values of Bx's place are the root of a sum, which no sum and no ratio
    of sums of monomials is; the sum is fitted to their square under ``sqrt``."""
    rng = np.random.default_rng(3)
    X = rng.uniform(1, 5, (400, 4))
    y = X[:, 0] * np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2 + X[:, 3] ** 2)
    search = _search(X, y, linear_terms=3, genetic_generations=0)
    near = Expression.from_names(["mul", "x0", "x1"], search.library, order="prefix")
    assert _writes_exactly(_proposed_from(search, near), X, y)


def test_a_ratio_of_sums_is_written_as_fitted_with_a_monomial_on_both_sides():
    """(2 + 3x) / (1 + 0.5x): x is in P and in Q; only the pivot's coefficient is divided out."""
    X = np.linspace(1, 3, 50)[:, None]
    search = _search(X, X[:, 0], linear_terms=2, genetic_generations=0)
    linear = next(p for p in search.proposers if p.origin == LINEAR)
    x = next(t for t in linear._monomial_terms(X)[0] if len(t.prefix) == 1 and not t.reciprocal)
    tokens, constants = linear._rational([(x, 3.0)], 2.0, [(x, 0.5)])
    written = Expression.from_prefix(tokens, search.library, constants)
    np.testing.assert_allclose(written.evaluate(X), (2 + 3 * X[:, 0]) / (1 + 0.5 * X[:, 0]))


def test_a_ratio_of_sums_is_found_through_noise():
    """With 10 % noise the linearised fit on the noisy values picks a denominator that
    cancels them (Q near zero on every row); on the sum's smooth values it picks 1 - v/c,
    and the law scores as well as the law itself does."""
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.uniform(1, 5, 2000) for _ in range(3)]
                        + [rng.uniform(1, 2, 2000), rng.uniform(3, 10, 2000)])
    q, eps, r, v, c = X.T
    law = q / (4 * np.pi * eps * r * (1 - v / c))
    y = law + rng.normal(0, 0.1 * np.std(law), 2000)
    search = _search(X, y, linear_terms=3, genetic_generations=0, use_one=False)
    names = [f"x{i}" for i in range(5)]
    near = parse_formula("x0*(0.088 + 0.29*x3**2/x4**2)/(x1*x2)", names, search.library)
    written = parse_formula("x0/(12.566*x1*x2*(1 - x3/x4))", names, search.library)
    best = max(_proposed_from(search, near), key=lambda c: c.criterion)
    assert best.criterion >= search.scorer.score_given([written])[0].criterion - 1e-6
    assert best.complexity <= 15


def test_a_source_seen_before_gives_back_the_leaves_a_new_fit_would():
    """The inner leaves of a formula are a function of it and the leaf's rows: the second
    epoch that has it among its best gets the first's proposals without fitting them again,
    and new rows (a warm start on other data) fit them anew."""
    rng = np.random.default_rng(3)
    X = rng.uniform(1, 5, (400, 4))
    y = X[:, 0] * np.sqrt(X[:, 1] ** 2 + X[:, 2] ** 2 + X[:, 3] ** 2)
    search = _search(X, y, linear_terms=3, genetic_generations=0)
    linear = next(p for p in search.proposers if p.origin == LINEAR)
    near = Expression.from_names(["mul", "x0", "x1"], search.library, order="prefix")
    first = [c.expression.key for c in _proposed_from(search, near)]
    fits = []
    linear._best_rewritten = lambda *args: fits.append(args) or []  # what a new fit would be
    assert [c.expression.key for c in _proposed_from(search, near)] == first
    assert not fits
    search.scorer.fitter.X = X[::-1].copy()  # other rows
    _proposed_from(search, near)
    assert len(fits) == 1
