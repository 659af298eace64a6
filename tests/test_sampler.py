"""Sampler and Batch: log-prob invariant, reproducibility, uniqueness, re-scoring helpers."""

import copy

import numpy as np
import pytest
import torch
from components import policy_options

from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.priors import Priors
from cadsr_sklearn.sampling.sampler import (PAD, Batch, Sampler, masked_entropy, masked_kl,
                                   masked_log_softmax, log_probs_under, token_log_probs)

LIB = Library(3)
COMBOS = [(a, p) for a in ("dct", "standard") for p in ("dpe", "1d")]




def make_sampler(library=LIB, seed=0, max_length=16, attention="dct", position_encoding="dpe",
                 sharpen=50.0, parent_sibling=False, priors=None, **settings):
    torch.manual_seed(seed)
    policy = Policy(len(library), **policy_options(
        max_length=max_length, ff_dim=64, n_layers=2, n_heads=2, attention=attention,
        position_encoding=position_encoding, parent_sibling=parent_sibling)).eval()
    # Sharpen the untrained policy a little so that log-probs are not all ≈ −log V.
    with torch.no_grad():
        policy.head.weight.mul_(sharpen)
    constraints = Constraints(library, **{"max_length": max_length, "max_constants": 10,
                                          **settings})
    return Sampler(policy, library, constraints, priors)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.fixture(scope="module")
def sampler():
    return make_sampler()


@pytest.fixture(scope="module")
def batch(sampler):
    return sampler.sample(400, gen())


# ------------------------------------------------------------ the invariant

OPTIONS = [dict(attention=a, position_encoding=p) for a, p in COMBOS] + [
    dict(parent_sibling=True),
    dict(priors=Priors(LIB, uniform_arity=True, length=6)),
    dict(parent_sibling=True, priors=Priors(LIB, length=5, uniform_arity=False),
         attention="standard"),
]


@pytest.mark.parametrize("options", OPTIONS)
def test_rescoring_reproduces_sampling_log_probs(options):
    s = make_sampler(**options)
    batch = s.sample(300, gen(1))
    assert batch.log_probs.min() < -1.0  # a non-trivial distribution
    with torch.no_grad():
        log_probs, entropies = log_probs_under(s.policy, batch)
    assert torch.allclose(log_probs, batch.log_probs, atol=1e-5)
    assert torch.allclose(entropies, batch.entropies, atol=1e-5)
    forced = s.teacher_force(batch.token_lists())
    for name in ("tokens", "lengths", "depth", "masks", "parent", "sibling"):
        assert torch.equal(getattr(forced, name), getattr(batch, name)), name
    assert torch.allclose(forced.horizontal, batch.horizontal)
    assert torch.allclose(forced.priors, batch.priors)
    assert torch.allclose(forced.log_probs, batch.log_probs, atol=1e-5)
    assert torch.allclose(forced.entropies, batch.entropies, atol=1e-5)


def test_kept_trees_are_not_forced_again():
    s = make_sampler(priors=Priors(LIB, uniform_arity=True, length=6), parent_sibling=True)
    batch = s.sample(60, gen(2))
    s.keep_structure(batch)
    # the replay buffer's trees come from sampled batches: forcing them needs no constraint
    s.constraints = copy.copy(s.constraints)
    s.constraints.mask = lambda state: pytest.fail("a kept tree was forced again")
    forced = s.teacher_force(batch.token_lists()[::-1])
    for name in ("horizontal", "priors", "masks", "depth", "parent", "sibling", "tokens"):
        assert torch.equal(getattr(forced, name), getattr(batch, name).flip(0)), name
    assert torch.allclose(forced.log_probs, batch.log_probs.flip(0), atol=1e-5)
    assert torch.allclose(forced.entropies, batch.entropies.flip(0), atol=1e-5)


def test_batch_layout_and_padding(batch):
    T, V = 16, len(LIB)
    assert batch.tokens.shape == (400, T) and batch.masks.shape == (400, T, V)
    valid = batch.valid
    assert torch.equal(valid.sum(1), batch.lengths)
    assert bool((batch.tokens[~valid] == PAD).all()) and bool((batch.tokens[valid] >= 0).all())
    assert not bool(batch.masks[~valid].any())
    assert bool((batch.log_probs[~valid] == 0).all()) and bool((batch.entropies[~valid] == 0).all())
    assert bool((batch.depth[~valid] == 0).all()) and bool((batch.depth[valid] >= 1).all())
    assert bool((batch.log_probs[valid] <= 0).all()) and bool((batch.entropies >= -1e-6).all())
    assert bool((batch.depth[:, 0] == 1).all()) and bool((batch.horizontal[:, 0] == 0.5).all())
    # every tree is complete and fits
    exprs = batch.expressions(LIB)
    assert all(isinstance(e, Expression) for e in exprs)
    assert [e.key for e in exprs] == batch.keys() == batch.token_lists()


def test_entropy_is_that_of_the_masked_distribution(sampler, batch):
    with torch.no_grad():
        log_p = masked_log_softmax(sampler.policy, batch)  # (B, T, V)
    p = log_p.exp()
    valid = batch.valid
    assert torch.allclose(p.sum(-1)[valid], torch.ones(int(valid.sum())), atol=1e-5)
    assert bool((p[~batch.masks & valid.unsqueeze(-1)] == 0).all())
    manual = -(p * torch.where(batch.masks, log_p, 0.0)).sum(-1)
    assert torch.allclose(manual, batch.entropies, atol=1e-5)


def test_rescoring_gradients_are_finite(sampler, batch):
    policy = sampler.policy
    reference = make_sampler(seed=3).policy
    log_p = masked_log_softmax(policy, batch)
    valid = batch.valid
    assert bool(torch.isneginf(log_p[~batch.masks & valid.unsqueeze(-1)]).all())
    assert bool((log_p[~valid] == 0).all())  # padding rows are 0, never −inf
    # even a naive "gather, then multiply by valid" stays finite
    naive = log_p.gather(-1, batch.tokens.clamp(min=0).unsqueeze(-1)).squeeze(-1) * valid
    assert torch.equal(naive, token_log_probs(log_p, batch))
    with torch.no_grad():
        log_q = masked_log_softmax(reference, batch)
    loss = (token_log_probs(log_p, batch).sum() + masked_entropy(log_p, batch.masks).sum()
            + masked_kl(log_p, log_q, batch.masks).sum())
    assert torch.isfinite(loss)
    policy.zero_grad()
    loss.backward()
    grads = [p.grad for p in policy.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    kl = masked_kl(log_p.detach(), log_q, batch.masks)
    assert bool((kl >= -1e-6).all()) and bool((kl[~batch.valid] == 0).all())
    assert float(masked_kl(log_p.detach(), log_p.detach(), batch.masks).abs().max()) < 1e-6
    policy.zero_grad()


# ---------------------------------------------------------- reproducibility

def test_same_seed_same_batch(sampler):
    a, b = sampler.sample(300, gen(7)), sampler.sample(300, gen(7))
    for name in ("tokens", "lengths", "depth", "horizontal", "masks", "log_probs", "entropies"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert not torch.equal(a.tokens, sampler.sample(300, gen(8)).tokens)
    u, v = sampler.sample_unique(100, 2, gen(3)), sampler.sample_unique(100, 2, gen(3))
    assert u.keys() == v.keys()


# ------------------------------------------------------------------ unique

def test_sample_unique_returns_unique_trees(sampler):
    batch = sampler.sample_unique(200, oversampling=2, generator=gen(0))
    assert len(batch) == 200 and len(set(batch.keys())) == 200


def test_sample_unique_fills_with_duplicates_when_few_trees_exist():
    lib = Library(1, ["add"], [], use_constants=False, use_one=False)
    s = make_sampler(lib, max_length=5, sharpen=1.0)
    # min_length 2 forces an add at the root: the only trees are add(x0, x0) and the two
    # five-node ones.
    batch = s.sample_unique(10, oversampling=3, generator=gen(0))
    keys = batch.keys()
    assert len(batch) == 10 and len(set(keys)) == 3
    assert len(set(keys[:3])) == 3  # the unique ones come first
    assert all(len(k) in (3, 5) for k in keys)


# -------------------------------------------------------------- Batch helpers

def test_batch_indexing_concat_and_device(batch):
    first = batch[[0, 2, 4]]
    assert len(first) == 3 and first.keys() == [batch.keys()[i] for i in (0, 2, 4)]
    assert batch[torch.tensor([1, 3])].keys() == [batch.keys()[1], batch.keys()[3]]
    assert batch[batch.lengths > 3].keys() == [k for k in batch.keys() if len(k) > 3]
    assert batch[5].keys() == [batch.keys()[5]] and len(batch[:7]) == 7
    assert batch[np.array([3, 1])].keys() == [batch.keys()[3], batch.keys()[1]]
    assert len(batch[[]]) == 0 and "Batch(size=400" in repr(batch)
    both = Batch.concat([batch[:3], batch[3:10]])
    assert both.keys() == batch[:10].keys() and torch.equal(both.masks, batch.masks[:10])
    moved = batch.to(torch.device("cpu"))
    assert moved.tokens.device.type == "cpu" and torch.equal(moved.tokens, batch.tokens)


# ------------------------------------------------------------ teacher forcing

def test_teacher_force_handles_mixed_lengths(sampler):
    names = [["add", "x0", "x1"], ["mul", "sin", "c", "x2"], ["exp", "x1"]]
    seqs = [tuple(LIB.encode(n)) for n in names]
    batch = sampler.teacher_force(seqs)
    assert batch.keys() == seqs and batch.lengths.tolist() == [3, 4, 2]
    depth, horizontal = Expression(seqs[1], LIB).positions()
    assert batch.depth[1, :4].tolist() == depth.tolist()
    assert torch.allclose(batch.horizontal[1, :4], torch.as_tensor(horizontal, dtype=torch.float32))
    assert bool((batch.log_probs[batch.valid] < 0).all())
    # the model runs only up to the longest tree (4 of 16 positions): same numbers as a
    # plain full-length pass
    with torch.no_grad():
        logits = sampler.policy(sampler.policy.shift_right(batch.tokens), batch.depth,
                                batch.horizontal)
    full = torch.log_softmax(logits.masked_fill(~batch.masks, float("-inf")), -1)
    taken = full.gather(-1, batch.tokens.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(taken[batch.valid], batch.log_probs[batch.valid], atol=1e-6)
    assert masked_log_softmax(sampler.policy, batch).shape == (3, 16, len(LIB))


@pytest.mark.parametrize(
    "names,match",
    [
        (["add", "x0"], "not one complete BFS tree"),
        (["exp", "log", "x0"], "breaks the constraints"),
        (["x0"], "breaks the constraints"),  # min_length 2
        (["add"] + ["add"] * 8 + ["x0"] * 10, "max_length is 16"),
    ],
)
def test_teacher_force_rejects_bad_sequences(sampler, names, match):
    with pytest.raises(ValueError, match=match):
        sampler.teacher_force([tuple(LIB.encode(["add", "x0", "x1"])), tuple(LIB.encode(names))])


def test_teacher_force_rejects_unknown_ids(sampler):
    with pytest.raises(ValueError, match="not one complete BFS tree"):
        sampler.teacher_force([(0, 99, 100)])


# --------------------------------------------------------------- bad settings

def test_bad_settings_raise():
    policy = Policy(len(LIB), **policy_options(max_length=8, ff_dim=16, parent_sibling=False))
    with pytest.raises(ValueError, match="scores 15 tokens but the library has 17"):
        Sampler(policy, Library(5), Constraints(Library(5), max_length=8, max_constants=10))
    with pytest.raises(ValueError, match="exceeds the policy's max_length"):
        Sampler(policy, LIB, Constraints(LIB, max_length=16, max_constants=10))
    with pytest.raises(ValueError, match="another library"):
        other = Library(3, unary_operators=["sin", "cos", "log", "exp", "tan"])
        Sampler(policy, LIB, Constraints(other, max_length=8, max_constants=10))
    s = Sampler(policy, LIB, Constraints(LIB, max_length=8, max_constants=10))
    with pytest.raises(ValueError, match="n must be"):
        s.sample(0)
    with pytest.raises(ValueError, match="oversampling must be"):
        s.sample_unique(10, oversampling=0.5)
    with pytest.raises(ValueError, match="batch_size must be"):
        s.sample_unique(0)
    with pytest.raises(ValueError, match="at least one"):
        s.teacher_force([])


def test_sampling_follows_the_policy_device():
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        s = make_sampler()
        s.policy.to(device)
        batch = s.sample(50, torch.Generator(device=device).manual_seed(0))
        assert batch.tokens.device.type == device
        batch = s.sample(50, torch.Generator().manual_seed(0))  # a CPU generator works too
        assert batch.tokens.device.type == device
