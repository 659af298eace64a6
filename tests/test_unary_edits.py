"""Unary edits of the best formulas (cadsr_sklearn.search.unary_edits)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.search.build import build_search
from cadsr_sklearn.search.genetic import breadth_first
from cadsr_sklearn.search.proposers import POLICY, UNARY_EDIT, Proposal
from cadsr_sklearn.search.unary_edits import unary_edits
from cadsr_sklearn.units.quantities import data_units
from cadsr_sklearn.units.rule import UnitsRule

from components import settings


def _names(prefix, library):
    return [library.names[t] for t in prefix]


def test_every_one_node_unary_edit_is_proposed_once():
    library = Library(2, ["mul"], ["sin", "asin"], use_constants=True)
    tree = Expression.from_names(["mul", "c", "sin", "x1"], library, [2.0], order="prefix")
    edits = [tuple(_names(e, library)) for e in unary_edits(tree.prefix(), library)]
    assert len(edits) == len(set(edits))
    assert set(edits) == {
        # above the product, above sin(x1), above x1 (not above the constant alone)
        ("sin", "mul", "c", "sin", "x1"), ("asin", "mul", "c", "sin", "x1"),
        ("mul", "c", "sin", "sin", "x1"), ("mul", "c", "asin", "sin", "x1"),
        ("mul", "c", "sin", "sin", "x1"), ("mul", "c", "sin", "asin", "x1"),
        # sin swapped for asin, or removed
        ("mul", "c", "asin", "x1"), ("mul", "c", "x1"),
    }


def _edits_of(search, formula: Expression) -> Proposal:
    """The unary edits of an epoch whose batch held ``formula`` alone."""
    proposer = next(p for p in search.proposers if p.origin == UNARY_EDIT)
    return proposer.propose(search, [Proposal(POLICY, search.scorer.score_given([formula]))])


def _search(X, y, units=None, **params):
    params = dict(batch_size=64, random_state=0, n_jobs=1) | params
    return build_search(settings(**params), X, y, None, torch.device("cpu"), 0, 0, units=units)


def test_the_law_one_operator_above_its_approximation_is_written():
    """Snell's law from its first-order approximation n*sin(theta2)."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1, 300), rng.uniform(1, 5, 300)])
    y = np.arcsin(X[:, 0] * np.sin(X[:, 1]))
    search = _search(X, y, unary_operators=("sin", "cos", "asin", "tanh"), unary_edits=1)
    near = Expression.from_names(["mul", "x0", "sin", "x1"], search.library, order="prefix")
    proposal = _edits_of(search, near)
    best = max(proposal.scored, key=lambda c: c.criterion)
    assert _names(best.expression.prefix(), search.library) == ["asin", "mul", "x0", "sin", "x1"]
    assert np.allclose(best.expression.evaluate(X), y)
    # every edit scored counts; none enters the selection that trains the policy
    assert proposal.evaluations == len(proposal.scored) > 0 and proposal.candidates == []
    # the next epoch's edits of the same formula come from the cache and count for nothing
    again = _edits_of(search, near)
    assert again.evaluations == 0 and len(again.scored) == len(proposal.scored)


def test_edits_keep_the_samplers_rules_and_the_units():
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 2, (100, 3))
    y = 0.5 * X[:, 0] * X[:, 1] * np.sin(X[:, 2])
    rule = UnitsRule(data_units(["kg", "m/s", ""], "kg*m/s", ["m", "v", "theta"]))
    search = _search(X, y, units=rule, unary_operators=("sin", "sqrt", "square"),
                     unary_edits=1, max_length=8)
    near = Expression.from_names(["mul", "c", "mul", "x0", "mul", "x1", "x2"], search.library,
                                 [0.5], order="prefix")
    written = {Expression(breadth_first(e, search.library.arity_by_id), search.library).key
               for e in unary_edits(near.prefix(), search.library)}
    proposal = _edits_of(search, near)
    scored = [c.expression for c in proposal.scored]
    constraints = search.sampler.constraints
    assert all(constraints.admits([e.tokens for e in scored]))
    assert all(rule.consistent(e) and len(e) <= 8 for e in scored)
    # of the 18 edits (three operators above six places) only those of the dimensionless
    # theta keep kg*m/s: sin, sqrt and square above it (sin(m), sqrt(m*v*theta)… dropped)
    assert len(written) == 18 and len(scored) == 3
    best = max(proposal.scored, key=lambda c: c.criterion)
    assert np.allclose(best.expression.evaluate(X), y)


def test_the_loop_counts_the_edits_and_who_wrote_the_answer():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1, 200), rng.uniform(1, 5, 200)])
    y = np.arcsin(X[:, 0] * np.sin(X[:, 1]))
    params = dict(batch_size=64, n_epochs=3, random_state=0,
                  unary_operators=("sin", "asin"))
    model = CADSRRegressor(n_jobs=1, unary_edits=2, linear_terms=0, **params).fit(X, y)
    paper = CADSRRegressor(n_jobs=1, unary_edits=0, linear_terms=0, **params).fit(X, y)
    assert model.n_evaluations_ > paper.n_evaluations_ == 3 * 64
    assert all(h["proposed_unary_edit"] == 0 for h in paper.history_)
    assert sum(h["proposed_unary_edit"] for h in model.history_) > 0
    assert all(h["top_unary_edit"] == 0 for h in model.history_)  # the policy's own only
    assert model.found_by_ == UNARY_EDIT  # an edit can still become τ*
    again = CADSRRegressor(n_jobs=2, unary_edits=2, linear_terms=0, **params).fit(X, y)
    assert str(again.expression_) == str(model.expression_)


@pytest.mark.parametrize("bad", [-1, 1.5, "auto"])
def test_bad_unary_edits_are_refused(bad):
    with pytest.raises(ValueError, match="unary_edits"):
        CADSRRegressor(unary_edits=bad).fit(np.ones((5, 1)), np.arange(5.0))


def test_an_edit_that_became_the_best_is_not_edited_again():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1, 300), rng.uniform(1, 5, 300)])
    y = np.arcsin(X[:, 0] * np.sin(X[:, 1]))
    search = _search(X, y, unary_operators=("sin", "asin", "tanh"), unary_edits=1)
    near = Expression.from_names(["mul", "x0", "sin", "x1"], search.library, order="prefix")
    first = _edits_of(search, near)
    law = max(first.scored, key=lambda c: c.criterion)
    law.origin = UNARY_EDIT  # what the loop records for what the edits wrote first
    search.state.best = law
    # the epoch's batch held only the approximation: its edits again (from the cache),
    # none of the law's (tanh(asin(x0*sin(x1))) and the like)
    again = _edits_of(search, near)
    assert {c.expression.key for c in again.scored} == {c.expression.key for c in first.scored}
    # the same τ* written by the policy is the source (the one of highest reward)
    law.origin = POLICY
    of_the_law = {c.expression.key for c in _edits_of(search, near).scored}
    assert near.key in of_the_law  # asin removed
    assert of_the_law != {c.expression.key for c in first.scored}
