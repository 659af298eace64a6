"""The rank mapping f of the risk-seeking policy update, eq. (11): :func:`rank_weights`.

The update (:mod:`cadsr_sklearn.search.training`, step 4 of the epoch) learns from
the top α % of the batch merged with the replay buffer, each weighted by its rank
among them, not by its reward: the weights do not depend on the reward's scale
or on how far the best are ahead, and the top α % always get a positive weight,
also when their rewards tie (no tail barrier).
"""

from __future__ import annotations

import numpy as np

__all__ = ["rank_weights"]


def rank_weights(
    rewards: np.ndarray, alpha: float, batch_size: int, lam: float
) -> np.ndarray:
    """The step-wise rank mapping f of eq. (11).

    f(τ) = λ · ReLU(1 − |{τ' : R(τ') > R(τ)}| / (α·B/100)), counted over the whole
    set passed in (e.g. memory plus new samples). Ties share a weight (only
    strictly greater rewards count), so the top α% always get a positive weight
    even when their rewards are equal: there is no tail barrier. ``-inf`` and NaN
    rewards get 0.

    Parameters
    ----------
    rewards : ndarray of shape (N,)
    alpha : float
        Risk-seeking percentage, 0 < α ≤ 100 (the paper uses 5).
    batch_size : int
        B.
    lam : float
        λ > 0.

    Returns
    -------
    ndarray of shape (N,)
        Weights in [0, λ].
    """
    if not 0 < alpha <= 100:
        raise ValueError(f"alpha is a percentage in (0, 100], got {alpha}.")
    if int(batch_size) < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}.")
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    r = np.where(np.isnan(r), -np.inf, r)
    ordered = np.sort(r)  # ascending
    greater = r.size - np.searchsorted(ordered, r, side="right")  # |{τ': R(τ') > R(τ)}|
    weights = lam * np.maximum(0.0, 1.0 - greater / (alpha * int(batch_size) / 100.0))
    weights[r == -np.inf] = 0.0
    return weights
