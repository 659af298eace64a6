"""The rank mapping f of the policy update, eq. (11)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadsr_sklearn.search.rank_mapping import rank_weights


def test_rank_weights_values():
    r = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -np.inf, np.nan])
    # α·B/100 = 20·20/100 = 4: ranks 0..3 get λ(1 − rank/4)
    w = rank_weights(r, alpha=20, batch_size=20, lam=0.2)
    np.testing.assert_allclose(w, [0.2, 0.15, 0.1, 0.05, 0, 0, 0, 0])


def test_top_alpha_positive_even_when_all_equal():
    r = np.full(1000, -1234.5678)
    r[:10] += 1e-13  # differences at machine precision
    w = rank_weights(r, alpha=5, batch_size=1000, lam=0.2)
    assert np.all(w[:10] == 0.2)
    assert np.all(w > 0)  # the other 990 tie behind 10 better ones: 10 < 50
    w_eq = rank_weights(np.full(1000, 3.0), alpha=5, batch_size=1000, lam=0.2)
    assert np.all(w_eq == 0.2)  # no tail barrier


def test_minus_inf_never_weighted():
    assert np.all(rank_weights(np.full(10, -np.inf), alpha=100, batch_size=10, lam=0.2) == 0)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.one_of(st.integers(-5, 5).map(float), st.just(-np.inf)), min_size=1,
                    max_size=60),
    alpha=st.floats(1, 100),
    perm_seed=st.integers(0, 2**16),
)
def test_rank_weights_properties(values, alpha, perm_seed):
    r = np.array(values)
    B = len(r)
    w = rank_weights(r, alpha, B, lam=0.2)
    assert np.all((w >= 0) & (w <= 0.2))
    # ties share a weight
    for v in np.unique(r):
        assert np.ptp(w[r == v]) == 0
    # higher reward, no less weight
    order = np.argsort(r)
    assert np.all(np.diff(w[order]) >= 0)
    # order invariance
    perm = np.random.default_rng(perm_seed).permutation(B)
    np.testing.assert_array_equal(rank_weights(r[perm], alpha, B, lam=0.2), w[perm])
    # everything with fewer than α·B/100 strictly better gets a positive weight
    finite = np.isfinite(r)
    better = np.array([np.sum(r > v) for v in r])
    assert np.all(w[finite & (better < alpha * B / 100)] > 0)
    assert np.all(w[~finite] == 0)


def test_rank_weights_rejects_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        rank_weights(np.zeros(3), 0, 3, lam=0.2)
    with pytest.raises(ValueError, match="batch_size"):
        rank_weights(np.zeros(3), 5, 0, lam=0.2)
    with pytest.raises(ValueError, match="lam"):
        rank_weights(np.zeros(3), 5, 3, lam=0)
