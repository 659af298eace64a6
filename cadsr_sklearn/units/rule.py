"""The data's physical units as one rule of the search.

A search given units (``X_units``, ``y_units``) returns only dimensionally
consistent formulas (:mod:`cadsr_sklearn.units.check` says what that means). The rule
acts at four points of the search, and each asks this one object:

* **the mask** — while trees grow, a node may only take a token that can still give
  it the units it needs within the length (:meth:`UnitsRule.tables`, the
  constraints' lookup tables; :meth:`UnitsRule.restrict`, the constraints' rule;
  :mod:`cadsr_sklearn.units.masks`);
* **the prior** — each node more than the fewest a token needs to give a node its
  units weighs e times less (:meth:`UnitsRule.log_prior`; see
  :mod:`cadsr_sklearn.sampling.priors`);
* **the batch flag** — a tree whose mask had to yield somewhere is marked, so that
  the sampler can replace it (:meth:`UnitsRule.broken`);
* **the final check** — every finished formula is checked before its constants are
  fitted, and rejected if it fails (:meth:`UnitsRule.consistent` in the scorer,
  :meth:`UnitsRule.check`, which also says why, for the guesses).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..expressions.expression import Expression
from ..expressions.library import Library
from .masks import UnitTables
from .check import UnitCheck, check_units
from .quantities import Units

__all__ = ["UnitsRule", "UNITS_PRIOR_WEIGHT"]

#: Log-weight of each node more than the fewest a token needs to give a node its
#: units. Light on purpose: a heavier weight leaves few distinct formulas in a batch
#: and the search settles on short ones such as (r1 + r2)/2 (docs/experiments/units.md).
UNITS_PRIOR_WEIGHT = 1.0


@dataclass(frozen=True)
class UnitsRule:
    """Dimensional consistency with ``units``: the mask, the prior, the flag and the check.

    What a batch of growing trees knows of its units (each node's need, the reach of
    each token) is the :class:`~cadsr_sklearn.units.masks.UnitTracker` that the
    constraints' tree state carries, row for row with the trees. The rule is what the
    constraints, the priors, the sampler and the scorer ask, so that none of them reads
    that tracker, or the data's units, itself. ``state`` below is such a tree state
    (:meth:`~cadsr_sklearn.sampling.constraints.Constraints.new_state`).
    """

    units: Units

    def tables(self, library: Library, device: torch.device) -> UnitTables:
        """The lookup tables of the mask for ``library``'s tokens; the masks' prior and
        flags are handed to the sampler on ``device``."""
        return UnitTables(library, self.units, device)

    def restrict(self, state, max_length: int, allowed: torch.Tensor) -> None:
        """Clear (in place) the tokens of ``allowed`` (b, V) that cannot give node
        ``state.t`` of each tree of the :class:`~cadsr_sklearn.sampling.constraints.TreeState`
        its units within ``max_length`` nodes; where none can, the mask yields and the
        tree is marked (:meth:`broken`)."""
        t = state.t
        state.units.restrict(t, state.parent[:, t], state.slot[:, t], max_length, allowed)

    def log_prior(self, state) -> torch.Tensor:
        """The units prior (b, V) of node ``state.t``: −w per node more than the fewest
        (:meth:`restrict` must have run on the state first, as the sampler does)."""
        return -UNITS_PRIOR_WEIGHT * state.units.extra_nodes

    def broken(self, state) -> torch.Tensor:
        """(b,) bool: the trees whose mask had to yield somewhere (the final check
        rejects them)."""
        return state.units.violated

    def check(self, expression: Expression) -> UnitCheck:
        """The final check of a finished formula, with the reason of a rejection."""
        return check_units(expression, self.units)

    def consistent(self, expression: Expression) -> bool:
        """Whether a finished formula passes the final check (the scorer's question, asked
        of every new formula: the reason is not worked out)."""
        return check_units(expression, self.units, explain=False).consistent
