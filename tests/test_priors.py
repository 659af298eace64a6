"""Soft priors: what each does to the next token and to the trees an untrained policy writes."""

import numpy as np
import pytest
import torch
from components import policy_options

from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.priors import Priors
from cadsr_sklearn.sampling.sampler import Sampler

LIB = Library(1)  # 3 terminals (x0, 1, c), 5 unary and 5 binary operators


def test_uniform_arity_gives_each_arity_the_same_mass():
    state = Constraints(LIB, max_length=32, max_constants=10).new_state(4)
    weights = Priors(LIB, uniform_arity=True, length=None)(state).exp()  # (4, V)
    masses = [float(weights[0, LIB.arities == a].sum()) for a in (0, 1, 2)]
    assert masses == pytest.approx([1.0, 1.0, 1.0])


def test_soft_length_penalises_only_growth_past_its_location():
    priors = Priors(LIB, length=8, uniform_arity=False)
    state = Constraints(LIB, max_length=32, max_constants=10).new_state(2)
    state.n_nodes = torch.tensor([3, 9])  # committed nodes of two partial trees
    prior = priors(state)
    arity = torch.as_tensor(LIB.arities)
    assert torch.all(prior[0] == 0)  # 3 + 2 ≤ 8: no penalty at all
    # Past L = 8 (scale 2) a binary loses more than a unary, which loses more than a terminal.
    relative = prior[1] - prior[1, arity == 0].max()
    assert torch.allclose(relative[arity == 1], torch.tensor(-0.5 * ((10 - 8) ** 2 - 1) / 4))
    assert torch.allclose(relative[arity == 2], torch.tensor(-0.5 * ((11 - 8) ** 2 - 1) / 4))


@pytest.mark.parametrize("bad", [0, 0.5, -3])
def test_length_location_is_checked(bad):
    with pytest.raises(ValueError, match="location"):
        Priors(LIB, length=bad, uniform_arity=False)


def test_no_prior_is_inactive_and_zero():
    priors = Priors(LIB, uniform_arity=False, length=None)
    assert not priors.active
    assert torch.all(priors(Constraints(LIB, max_length=32, max_constants=10).new_state(3)) == 0)


def _lengths(priors):
    torch.manual_seed(0)
    policy = Policy(len(LIB), **policy_options(max_length=32, ff_dim=64, parent_sibling=False))
    sampler = Sampler(policy, LIB, Constraints(LIB, max_length=32, max_constants=10), priors)
    return sampler.sample(1000, torch.Generator().manual_seed(0)).lengths.numpy()


def test_priors_shorten_the_untrained_policys_trees():
    # One feature and ten operators: without a prior most trees hit the length cap.
    plain = _lengths(None)
    assert np.mean(plain >= 30) > 0.5
    arity_only = Priors(LIB, uniform_arity=True, length=None)
    assert np.mean(_lengths(arity_only) >= 30) < np.mean(plain >= 30) - 0.1
    assert np.mean(_lengths(Priors(LIB, length=12, uniform_arity=False)) >= 30) < 0.15
