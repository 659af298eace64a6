"""The policy: DCT, teacher-forced vs cached decoding, causality, settings, devices."""

from pathlib import Path

import pytest
import torch
from components import policy_options

from cadsr_sklearn.sampling.policy import FeedForward, Policy, dct_matrix

COMBOS = [(a, p) for a in ("dct", "standard") for p in ("dpe", "1d")]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])




def small_policy(n_tokens=7, **kw):
    torch.manual_seed(0)
    settings = policy_options(max_length=12, ff_dim=64, parent_sibling=False)
    settings.update(kw)
    return Policy(n_tokens, **settings).eval()


def random_inputs(policy, B=5, T=9, seed=1):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, policy.n_tokens, (B, T), generator=g)
    depth = torch.randint(1, 6, (B, T), generator=g)
    horizontal = torch.rand(B, T, generator=g)
    return tokens, depth, horizontal


@pytest.mark.parametrize("n", [1, 8, 10, 15])
def test_dct_matrix_is_orthonormal(n):
    c = dct_matrix(n).double()
    assert torch.allclose(c @ c.T, torch.eye(n, dtype=torch.float64), atol=1e-6)
    # Row 0 is the constant (lowest-frequency) basis vector.
    assert torch.allclose(c[0], torch.full((n,), n**-0.5, dtype=torch.float64), atol=1e-6)


def test_dct_buffer_keeps_lowest_frequencies():
    policy = small_policy(embedding_dim=10, dct_dim=8)
    assert policy.dct.shape == (8, 10)
    assert torch.allclose(policy.dct, dct_matrix(10)[:8])
    assert not any(p is policy.dct for p in policy.parameters())


def test_shift_right_convention():
    policy = small_policy()
    tokens = torch.tensor([[3, 1, 2, -1], [4, -1, -1, -1]])
    tokens_in = policy.shift_right(tokens)
    S = policy.start_token
    assert S == policy.n_tokens
    assert tokens_in.tolist() == [[S, 3, 1, 2], [S, 4, S, S]]


@pytest.mark.parametrize("attention,position_encoding", COMBOS)
@pytest.mark.parametrize("n_layers,n_heads", [(1, 1), (2, 2)])
def test_cached_step_matches_forward(attention, position_encoding, n_layers, n_heads):
    policy = small_policy(attention=attention, position_encoding=position_encoding,
                          n_layers=n_layers, n_heads=n_heads)
    tokens, depth, horizontal = random_inputs(policy)
    tokens_in = policy.shift_right(tokens)
    with torch.no_grad():
        full = policy(tokens_in, depth, horizontal)  # (B, T, V)
        cache = policy.init_cache(tokens.shape[0])
        steps = [policy.step(tokens_in[:, t], depth[:, t], horizontal[:, t], t, cache)
                 for t in range(tokens.shape[1])]
    assert full.shape == (5, 9, policy.n_tokens)
    assert torch.allclose(torch.stack(steps, 1), full, atol=1e-5)


def test_parent_sibling_inputs_step_matches_forward_and_are_read():
    policy = small_policy(parent_sibling=True, n_layers=2, n_heads=2)
    tokens, depth, horizontal = random_inputs(policy)
    g = torch.Generator().manual_seed(3)
    parent = torch.randint(0, policy.n_tokens + 1, tokens.shape, generator=g)
    sibling = torch.randint(0, policy.n_tokens + 1, tokens.shape, generator=g)
    tokens_in = policy.shift_right(tokens)
    with torch.no_grad():
        full = policy(tokens_in, depth, horizontal, None, parent, sibling)
        cache = policy.init_cache(tokens.shape[0])
        steps = [policy.step(tokens_in[:, t], depth[:, t], horizontal[:, t], t, cache,
                             parent[:, t], sibling[:, t]) for t in range(tokens.shape[1])]
        other = policy(tokens_in, depth, horizontal, None, (parent + 1) % policy.n_tokens, sibling)
    assert torch.allclose(torch.stack(steps, 1), full, atol=1e-5)
    assert not torch.allclose(other, full, atol=1e-4)  # the parent's token is an input


def test_parent_sibling_policy_asks_for_them():
    policy = small_policy(parent_sibling=True)
    tokens, depth, horizontal = random_inputs(policy)
    with pytest.raises(ValueError, match="pass parent and sibling"):
        policy(policy.shift_right(tokens), depth, horizontal)


@pytest.mark.parametrize("std", [0.02, 0.7])
def test_embedding_std_sets_the_token_embedding_scale(std):
    policy = small_policy(n_tokens=200, embedding_std=std, parent_sibling=True)
    for table in (policy.embed, policy.embed_parent, policy.embed_sibling):
        assert abs(float(table.weight.detach().std()) - std) < 0.1 * std
    assert float(policy.head.weight.detach().std()) < 0.03  # the output layer stays small


def test_cache_select_keeps_rows():
    policy = small_policy()
    tokens, depth, horizontal = random_inputs(policy)
    tokens_in = policy.shift_right(tokens)
    with torch.no_grad():
        full = policy(tokens_in, depth, horizontal)
        cache = policy.init_cache(5)
        rows = torch.arange(5)
        for t in range(9):
            out = policy.step(tokens_in[rows, t], depth[rows, t], horizontal[rows, t], t, cache)
            assert torch.allclose(out, full[rows, t], atol=1e-5)
            if t in (2, 5):  # drop a row, as the sampler does with finished trees
                keep = torch.arange(1, len(rows))
                rows, cache = rows[keep], cache.select(keep)


@pytest.mark.parametrize("attention,position_encoding", COMBOS)
def test_forward_is_causal(attention, position_encoding):
    policy = small_policy(attention=attention, position_encoding=position_encoding)
    tokens, depth, horizontal = random_inputs(policy)
    tokens_in = policy.shift_right(tokens)
    with torch.no_grad():
        a = policy(tokens_in, depth, horizontal)
        tokens_in[:, 6:] = 0
        depth[:, 6:] = 3
        b = policy(tokens_in, depth, horizontal)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6)
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_position_is_used():
    policy = small_policy(position_encoding="dpe")
    tokens, depth, horizontal = random_inputs(policy)
    tokens_in = policy.shift_right(tokens)
    with torch.no_grad():
        a = policy(tokens_in, depth, horizontal)
        b = policy(tokens_in, depth, horizontal + 0.25)
    assert not torch.allclose(a, b)


def test_gradients_flow():
    policy = small_policy(n_layers=2)
    tokens, depth, horizontal = random_inputs(policy)
    policy(policy.shift_right(tokens), depth, horizontal).logsumexp(-1).sum().backward()
    grads = [p.grad for p in policy.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(attention="fourier"), "attention must be one of"),
        (dict(position_encoding="tree"), "position_encoding must be one of"),
        (dict(embedding_dim=10, dct_dim=12), "dct_dim"),
        (dict(dct_dim=8, n_heads=3), "n_heads=3 must divide"),
        (dict(attention="standard", embedding_dim=10, n_heads=4), "n_heads=4 must divide"),
        (dict(n_layers=0), "n_layers must be a positive integer"),
        (dict(ff_dim=-1), "ff_dim must be a positive integer"),
        (dict(embedding_dim=2.5), "embedding_dim must be a positive integer"),
    ],
)
def test_bad_settings_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Policy(7, **{**policy_options(parent_sibling=False), **kwargs})


def test_step_past_cache_raises():
    policy = small_policy(max_length=3)
    cache = policy.init_cache(2)
    with pytest.raises(ValueError, match="past the cache length"):
        policy.step(torch.zeros(2, dtype=torch.long), torch.ones(2), torch.ones(2), 3, cache)


def test_paper_defaults():
    # the policy has no defaults of its own: the estimator's are the paper's
    policy = Policy(17, **policy_options(parent_sibling=False))
    assert (policy.embedding_dim, policy.width, policy.max_length) == (10, 8, 32)
    assert policy.blocks[0].ff[0].out_features == 2048
    assert policy.head.out_features == 17  # START is never emitted


@pytest.mark.parametrize("device", DEVICES)
def test_runs_on_device(device):
    policy = small_policy().to(device)
    tokens, depth, horizontal = (x.to(device) for x in random_inputs(policy))
    assert policy.device.type == device
    out = policy(policy.shift_right(tokens), depth, horizontal)
    cache = policy.init_cache(5)
    assert cache.keys[0].device.type == device
    step = policy.step(policy.shift_right(tokens)[:, 0], depth[:, 0], horizontal[:, 0], 0, cache)
    assert out.device.type == step.device.type == device


def test_no_hard_coded_cuda():
    root = Path(__file__).resolve().parents[1] / "cadsr_sklearn" / "sampling"
    for name in ("policy.py", "constraints.py", "sampler.py"):
        assert "cuda" not in (root / name).read_text().lower(), name


@pytest.mark.parametrize("device", DEVICES)
def test_the_feed_forward_block_and_its_gradients_are_autograds(device):
    # the block computes its products and their gradients in its own orientation; in
    # double precision they must be nn.Sequential's under autograd, for x and every parameter
    torch.manual_seed(0)
    block = FeedForward(8, 64).double().to(device)
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.5)  # biases too, so that ReLU cuts about half
    reference = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 8)).double().to(device)
    reference.load_state_dict(block.state_dict())
    x = torch.randn(3, 11, 8, dtype=torch.float64, device=device)
    ours, theirs = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    out, expected = block(ours), reference(theirs)
    seed = torch.randn_like(out)
    (out * seed).sum().backward()
    (expected * seed).sum().backward()
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(ours.grad, theirs.grad)
    for (name, p), q in zip(block.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
