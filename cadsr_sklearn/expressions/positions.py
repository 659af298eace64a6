"""Where each node sits in its tree, and the encodings of that place.

The policy generates trees breadth-first (BFS), layer by layer. In a BFS token
sequence the children of node ``i`` are consecutive and start right after the
children of every earlier node, so the whole tree structure follows from the
arities alone (:func:`first_children`).

Each node has the paper's dual index (depth ``d``, horizontal ``h``), appendix
Algorithms 2–3: the root is ``(1, 1/2)``; a child at depth ``d + 1`` sits at
``h ∓ 1/2^(d+1)`` (left −, right +); a unary operator's only child takes the left
slot. Two encodings turn a place into ``E`` channels:

* :func:`dual_indexed_encoding` — the paper's DPE, eq. (3)–(6): sin/cos of
  ``d / 10000^(4i/E)`` in the first half of the channels and sin/cos of
  ``h / 10^(4j/E)`` in the second half;
* :func:`sequence_encoding` — the standard sinusoidal encoding of the BFS index
  (the paper's "Drop DPE" ablation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch loads lazily: expressions and constants do not need it
    import torch

__all__ = [
    "first_children",
    "tree_positions",
    "child_position",
    "dual_indexed_encoding",
    "sequence_encoding",
]


def first_children(arities: np.ndarray) -> np.ndarray:
    """BFS index of the first child of every node (meaningless for terminals).

    Node ``i``'s children are ``first[i] … first[i] + arities[i] - 1``: the root
    is node 0, and the children of earlier nodes come first.
    """
    arities = np.asarray(arities, dtype=np.int64)
    return 1 + np.cumsum(arities) - arities


def child_position(depth, horizontal, slot):
    """Dual index of the child in ``slot`` (0 = left/only, 1 = right) of a node.

    Works elementwise on NumPy arrays and torch tensors alike.
    """
    child_depth = depth + 1
    sign = 2 * slot - 1  # left −, right +
    return child_depth, horizontal + sign * 0.5**child_depth


def tree_positions(arities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depth ``d`` (root 1) and horizontal position ``h`` (root 1/2) of each BFS node.

    Appendix Algorithms 2–3, walked in BFS order instead of recursively: a
    parent always precedes its children, so its place is known when theirs is
    set. ``arities`` may also be a BFS *prefix* of a tree (children not yet
    generated are skipped), as the sampler holds while it builds a tree.
    ``h`` is a dyadic rational with at most ``d`` bits, so it is exact in float64.

    Returns
    -------
    depth : ndarray of int64, shape (n,)
    horizontal : ndarray of float64, shape (n,)
    """
    arities = [int(a) for a in np.asarray(arities, dtype=np.int64).reshape(-1)]
    n = len(arities)
    depth = [1] * n
    horizontal = [0.5] * n
    child = 1  # BFS index of the next child to place
    for i in range(n):
        d = depth[i] + 1
        step = 0.5**d
        for slot in range(arities[i]):
            if child >= n:
                break
            depth[child] = d
            horizontal[child] = horizontal[i] + (step if slot else -step)  # left −, right +
            child += 1
    return np.array(depth, dtype=np.int64), np.array(horizontal, dtype=np.float64)


def _sinusoid(values: torch.Tensor, n_channels: int, base: float, scale: float) -> torch.Tensor:
    """Interleaved sin/cos of ``values / base^(scale·i)`` over channel pairs ``i``."""
    import torch

    pair = torch.arange(n_channels, device=values.device) // 2
    inv_freq = base ** (-scale * pair.to(values.dtype))
    angles = values.unsqueeze(-1) * inv_freq  # (..., n_channels)
    even = (torch.arange(n_channels, device=values.device) % 2) == 0
    return torch.where(even, torch.sin(angles), torch.cos(angles))


def dual_indexed_encoding(
    depth: torch.Tensor, horizontal: torch.Tensor, embedding_dim: int
) -> torch.Tensor:
    """The paper's DPE(d, h), eq. (3)–(6).  Shapes: (...) → (..., E)."""
    depth_channels = (embedding_dim + 1) // 2
    width_channels = embedding_dim - depth_channels
    # The paper writes 4i/D for a 2D-channel encoding, which has no valid index range
    # when the half-width D is odd (D = 5 for the default E = 10); with E the whole
    # width, as in the authors' code, the exponents of each half run from 0 towards 1.
    scale = 4.0 / embedding_dim
    import torch

    dtype = torch.get_default_dtype()
    d = _sinusoid(depth.to(dtype), depth_channels, 10000.0, scale)
    h = _sinusoid(horizontal.to(dtype), width_channels, 10.0, scale)
    return torch.cat([d, h], dim=-1)


def sequence_encoding(index: torch.Tensor, embedding_dim: int) -> torch.Tensor:
    """Standard sinusoidal encoding of the BFS index.  Shapes: (...) → (..., E)."""
    import torch

    index = index.to(torch.get_default_dtype())
    return _sinusoid(index, embedding_dim, 10000.0, 2.0 / embedding_dim)
