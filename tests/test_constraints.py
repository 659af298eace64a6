"""Constraint masks: every finished tree obeys every active rule, checked independently."""

import numpy as np
import pytest
import torch
from components import policy_options

from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.expression import Expression, is_complete
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.sampler import Sampler

LIB = Library(2, ["add", "sub", "mul", "div", "pow"],
              ["sin", "cos", "tan", "log", "exp", "sqrt", "square", "neg", "inv"])




def sampler(library=LIB, favour=(), bias=3.0, seed=0, **settings):
    """A small policy, its head biased toward ``favour`` so that rules get tested hard."""
    torch.manual_seed(seed)
    constraints = Constraints(library, **{"max_length": 32, "max_constants": 10, **settings})
    policy = Policy(len(library), **policy_options(max_length=constraints.max_length, ff_dim=64,
                                                   parent_sibling=False)).eval()
    with torch.no_grad():
        for name in favour:
            policy.head.bias[library.index(name)] += bias
    return Sampler(policy, library, constraints)


def draw(s, n=1500, seed=0):
    return s.sample(n, torch.Generator().manual_seed(seed))


# ---------------------------------------------- independent checks on whole trees

def violations(tokens, library, max_length=32, min_length=2, max_constants=10,
               no_constant_subtrees=True, no_inverse=True, no_nested_trig=True):
    """Names of the rules that the finished BFS tree ``tokens`` breaks."""
    out = set()
    if not is_complete(tokens, library):
        return {"incomplete"}
    expr = Expression(tokens, library)
    names = [library.names[t] for t in tokens]
    if len(tokens) > max_length:
        out.add("max_length")
    if len(tokens) < min_length:
        out.add("min_length")
    if max_constants is not None and names.count("c") > max_constants:
        out.add("max_constants")
    parent = {c: i for i in range(len(tokens)) for c in expr.children(i)}
    constant_only = [False] * len(tokens)
    for i in range(len(tokens) - 1, -1, -1):  # children come after parents in BFS
        kids = list(expr.children(i))
        if kids:
            constant_only[i] = all(constant_only[k] for k in kids)
        else:
            constant_only[i] = names[i] in ("c", "1")
    # a lone c/1 leaf is fine; an operator over constants only (or a constant root) is not
    if no_constant_subtrees and any(constant_only[i] and (i == 0 or expr.children(i))
                                    for i in range(len(tokens))):
        out.add("constant_subtree")
    inverse = {(library.names[p], library.names[c]) for p, c in library.inverse_pairs}
    trig = {"sin", "cos", "tan"}
    for child, p in parent.items():
        if no_inverse and (names[p], names[child]) in inverse:
            out.add("inverse")
        if no_nested_trig and names[child] in trig:
            a = p
            while True:
                if names[a] in trig:
                    out.add("trig")
                    break
                if a not in parent:
                    break
                a = parent[a]
    return out


def all_violations(batch, library, **settings):
    found = set()
    for tokens in batch.token_lists():
        found |= violations(tokens, library, **settings)
    return found


def test_checker_catches_what_it_should():
    names = lambda *ns: list(LIB.encode(ns))  # noqa: E731
    assert violations(names("exp", "log", "x0"), LIB) == {"inverse"}
    assert violations(names("sin", "add", "cos", "x0", "x1"), LIB) == {"trig"}
    assert violations(names("add", "x0", "mul", "c", "1"), LIB) == {"constant_subtree"}
    assert violations(names("x0"), LIB) == {"min_length"}
    assert violations(names("add", "x0", "c"), LIB) == set()


# ----------------------------------------------------------------- sampling

STRESS = ("c", "1", "sin", "cos", "exp", "log", "sqrt", "square", "neg", "inv")


@pytest.mark.parametrize("favour", [(), STRESS, ("add", "mul", "pow"), ("x0", "c")])
def test_sampled_trees_obey_every_rule(favour):
    s = sampler(favour=favour)
    batch = draw(s)
    for tokens in batch.token_lists():
        assert is_complete(tokens, LIB)
    assert int(batch.lengths.max()) <= 32
    assert all_violations(batch, LIB) == set()
    # the taken token was always allowed, and every node had a choice
    valid = batch.valid
    taken = batch.masks.gather(-1, batch.tokens.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    assert bool(taken[valid].all())
    assert bool(batch.masks.any(-1)[valid].all())
    assert not bool(batch.masks[~valid].any())


@pytest.mark.parametrize("max_length,min_length", [(1, 1), (3, 2), (7, 5), (12, 12), (32, 8)])
def test_length_limits(max_length, min_length):
    s = sampler(favour=("add", "mul", "sin"), max_length=max_length, min_length=min_length)
    batch = draw(s, 500)
    lengths = batch.lengths
    assert int(lengths.max()) <= max_length and int(lengths.min()) >= min_length
    assert all_violations(batch, LIB, max_length=max_length, min_length=min_length) == set()


def test_min_length_yields_when_no_operator_fits():
    # Only binaries: sizes are odd, so min_length = max_length = 4 cannot be met; the
    # mask must still allow a terminal instead of leaving nothing.
    lib = Library(1, ["add"], [], use_constants=False, use_one=False)
    batch = draw(sampler(lib, max_length=4, min_length=4), 200)
    assert set(batch.lengths.tolist()) == {3}


def test_max_constants():
    s = sampler(favour=("c", "add", "mul"), bias=2.0, max_constants=2, no_constant_subtrees=False)
    counts = (draw(s).tokens == LIB.const_id).sum(1)
    assert int(counts.max()) == 2


@pytest.mark.parametrize(
    "setting,favour,rule",
    [
        (dict(no_inverse=False), ("exp", "log", "neg", "inv"), "inverse"),
        (dict(no_nested_trig=False), ("sin", "cos", "tan"), "trig"),
        (dict(no_constant_subtrees=False), ("c", "1"), "constant_subtree"),
        (dict(max_constants=None, no_constant_subtrees=False), ("c", "add"), "max_constants"),
        (dict(min_length=1), ("x0", "x1"), "min_length"),
    ],
)
def test_switching_a_rule_off_allows_what_it_banned(setting, favour, rule):
    batch = draw(sampler(favour=favour, **setting), 2000)
    found = all_violations(batch, LIB)
    assert rule in found
    switched_off = {"no_inverse": "inverse", "no_nested_trig": "trig", "min_length": "min_length",
                    "no_constant_subtrees": "constant_subtree", "max_constants": "max_constants"}
    assert found <= {switched_off[k] for k in setting}
    # the same trees are fine for a checker told which rules were off
    assert all_violations(batch, LIB, **setting) == set()


def test_tree_state_places_match_expression_positions():
    batch = draw(sampler(), 200)
    for i, tokens in enumerate(batch.token_lists()):
        depth, horizontal = Expression(tokens, LIB).positions()
        n = len(tokens)
        assert batch.depth[i, :n].tolist() == depth.tolist()
        np.testing.assert_allclose(batch.horizontal[i, :n].numpy(), horizontal, rtol=1e-6)


def test_mask_examples():
    c = Constraints(LIB, max_length=4, max_constants=10)
    ids = LIB.index
    state = c.new_state(1)
    mask = c.mask(state)[0]
    assert not mask[ids("x0")] and not mask[ids("c")]  # min_length: the root is an operator
    assert mask[ids("add")] and mask[ids("exp")]
    state.advance(torch.tensor([ids("exp")]))
    mask = c.mask(state)[0]
    assert not mask[ids("log")]  # inverse of exp
    assert not mask[ids("c")] and not mask[ids("1")]  # exp(c) is a constant
    assert mask[ids("add")]  # 2 committed + 2 children = 4 ≤ max_length
    state.advance(torch.tensor([ids("add")]))
    mask = c.mask(state)[0]
    assert not mask[LIB.binary_ids].any() and not mask[LIB.unary_ids].any()  # no room left
    assert mask[ids("c")] and mask[ids("x1")]
    state.advance(torch.tensor([ids("c")]))
    mask = c.mask(state)[0]
    assert not mask[ids("c")] and not mask[ids("1")] and mask[ids("x0")]  # add(c, c) banned
    state.advance(torch.tensor([ids("x0")]))
    assert bool(state.done[0])


def test_trig_flag_is_inherited():
    c = Constraints(LIB, max_length=32, max_constants=10)
    state = c.new_state(1)
    for name in ("sin", "add", "x0"):  # sin(add(x0, ·)): the right slot is still below sin
        assert c.mask(state)[0, LIB.index("cos")] == (name == "sin")
        state.advance(torch.tensor([LIB.index(name)]))
    assert not c.mask(state)[0, LIB.index("cos")]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(max_length=0), "max_length must be an integer"),
        (dict(max_length=4, min_length=5), r"min_length must be an integer in \[1, max_length=4\]"),
        (dict(min_length=0), "min_length"),
        (dict(max_constants=-1), "max_constants must be None or an integer"),
        (dict(max_length=3.5), "max_length"),
    ],
)
def test_bad_settings_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Constraints(LIB, **{"max_length": 32, "max_constants": 10, **kwargs})


def test_rules_listed_and_skipped_when_irrelevant():
    lib = Library(1, ["add"], [], use_constants=False, use_one=False)
    rules = Constraints(lib, max_length=32, max_constants=10).rules
    assert [r.__name__ for r in rules] == ["length_rule", "min_length_rule"]
    names = [r.__name__ for r in Constraints(LIB, max_length=32, max_constants=10,
                                               no_inverse=False).rules]
    assert "inverse_rule" not in names and "trig_rule" in names


def test_admits_agrees_with_the_independent_checker():
    # trees drawn with every rule off break them in every way; admits must see which
    off = dict(min_length=1, max_constants=None, no_constant_subtrees=False, no_inverse=False,
               no_nested_trig=False)
    trees = (draw(sampler(**off), n=400).token_lists()
             + draw(sampler(favour=STRESS, **off), n=400).token_lists())
    strict = Constraints(LIB, max_length=32, max_constants=3)
    admitted = strict.admits(trees)
    expected = [violations(t, LIB, max_constants=3) == set() for t in trees]
    assert admitted.tolist() == expected
    assert 30 < sum(expected) < len(trees) - 30  # both outcomes well represented
    too_long = list(LIB.encode(["add"] * 20 + ["x0"] * 21))
    assert strict.admits([too_long, []]).tolist() == [False, False]

