"""Soft priors: log-weights added to the policy's logits before sampling.

Hard constraints (:mod:`cadsr_sklearn.sampling.constraints`) say which tokens a node may
take; priors only reweigh the allowed ones (DSO's split). Like the masks, a
prior is computed from the partial tree's :class:`~cadsr_sklearn.sampling.constraints.TreeState`
and stored with the batch, so re-scoring a tree adds exactly what sampling added
and its log-probability is the same either way.

* **uniform arity** (DSO's ``UniformArityPrior``): each token gets ``−log n_a``,
  where ``n_a`` is the number of library tokens of its arity, so an untrained
  policy picks a terminal, a unary and a binary operator equally often. Without
  it, a library with many operators and one or two features makes most of the
  untrained policy's trees grow to the length cap.
* **soft length** (location ``L``): an operator that would make the tree's
  committed size (its nodes plus the open slots they leave) exceed ``L`` gets
  ``−½((size − L)/(L/4))²``: a soft version of the hard length cap, at ``L``
  nodes, so that most of an untrained policy's trees end well short of the cap
  while a longer law stays within reach (the tuning guide, ``length_prior``, gives
  the effect). (DSO's ``SoftLengthPrior`` counts BFS steps instead; with
  breadth-first growth, its push against early terminals opens more slots and
  makes trees longer.)
* **units** (with the data's physical units): where a node's units are known, a
  token gets ``−(n − n_min)``, where ``n`` is the fewest nodes a subtree rooted
  at it needs to have those units and ``n_min`` the fewest over the allowed tokens
  (:mod:`cadsr_sklearn.units.masks`; a factor of a product is priced with its
  sibling): each node more than needed weighs e times less
  (:data:`~cadsr_sklearn.units.rule.UNITS_PRIOR_WEIGHT`). Without it an untrained policy, denied the
  terminals of the wrong units, keeps choosing operators and most trees run into
  the length cap unfinished.
"""

from __future__ import annotations

import numpy as np
import torch

from .constraints import TreeState
from ..expressions.library import Library
from ..units.rule import UnitsRule

__all__ = ["Priors"]


class Priors:
    """The log-prior (b, V) of the next node of every tree of a :class:`TreeState`.

    Parameters
    ----------
    library : Library
    uniform_arity : bool
        Equal prior weight for each arity (0, 1, 2) present in the library.
    length : float or None
        Location ``L`` (nodes) of the soft length prior; None switches it off.
    units : UnitsRule or None, default None
        The units prior, for constraints with the same rule (its masks must have
        run on the state first, as the sampler does).

    Neither has a default here: the estimator's ``arity_prior`` and
    ``length_prior`` are where they are set.
    """

    def __init__(self, library: Library, *, uniform_arity: bool,
                 length: float | None, units: UnitsRule | None = None) -> None:
        if length is not None and not length >= 1:
            raise ValueError(f"The soft length prior's location must be ≥ 1, got {length!r}.")
        self.library, self.uniform_arity = library, bool(uniform_arity)
        self.length = None if length is None else float(length)
        self.units = units
        arities = np.asarray(library.arities)
        self._arity_prior = torch.as_tensor(-np.log(np.bincount(arities, minlength=3)[arities]),
                                            dtype=torch.get_default_dtype())  # (V,)
        self._arity_prior_on: dict[torch.device, torch.Tensor] = {}

    def _arity_prior_at(self, device: torch.device) -> torch.Tensor:
        """The uniform-arity log-weights (V,) on ``device``, copied there once."""
        if device not in self._arity_prior_on:
            self._arity_prior_on[device] = self._arity_prior.to(device)
        return self._arity_prior_on[device]

    @property
    def active(self) -> bool:
        return self.uniform_arity or self.length is not None or self.units is not None

    def __repr__(self) -> str:
        return (f"Priors(uniform_arity={self.uniform_arity}, length={self.length}, "
                f"units={self.units is not None})")

    def __call__(self, state: TreeState) -> torch.Tensor:
        """Log-prior (b, V) of node ``state.t`` of every tree; zeros when no prior is on."""
        device = state.n_nodes.device
        prior = torch.zeros(len(state), len(self.library), device=device)
        if self.uniform_arity:
            prior += self._arity_prior_at(device)
        if self.length is not None:
            size = state.n_nodes.unsqueeze(1) + state.arities  # (b, V)
            over = (size - self.length).clamp(min=0) / (self.length / 4)
            prior -= 0.5 * over.to(prior.dtype) ** 2
        if self.units is not None:
            prior += self.units.log_prior(state)
        return prior
