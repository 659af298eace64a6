"""The dimensional constraint while trees grow breadth-first.

Each node of a partial tree carries a *need*: the units its subtree must have.
It is

* ``KNOWN`` — fixed by its ancestors (the root needs the target's units, a
  function's argument none, each side of a ``+`` its parent's, the base of
  ``sqrt`` twice its parent's);
* ``LINKED`` — fixed by its sibling, which breadth-first order has not chosen
  yet: the left factor of a product, the left side of a sum whose own units are
  free. When the right sibling is chosen next, and its units are fixed by its
  token (a variable, a function's value, a constant), the left node's need
  becomes KNOWN (a ``*`` needing u whose right factor is in m makes the left
  need u/m); its children, all generated later, inherit it. When neither
  sibling's token fixes units (``sqrt(…)·(… + …)``) the pair is left to the
  final check;
* ``FREE`` — unconstrained: below a node left so, or beside the overall
  factor (see :mod:`cadsr_sklearn.units.check`).

The mask at a node with a KNOWN need u allows a variable only if it is in u, a
constant, the literal ``1``, a function and ``pow`` only if u is dimensionless
(or, for a constant on the top product chain, when the overall factor may carry
units), and every operator that can produce u from its arguments. Every
quantity is a function of the partial tree, so re-scoring a tree rebuilds the
masks it was sampled under. Where no token is left (u is out of reach within
the length) the rule yields, as the length rules do, and the tree is marked;
:func:`~cadsr_sklearn.units.check.check_units`, run on every finished formula before
its constants are fitted, rejects it and the ties the masks left open.
"""

from __future__ import annotations

import numpy as np
import torch

from ..expressions.library import Library
from .check import token_unit_rules
from .quantities import EXPONENT_TOLERANCE, Units

__all__ = ["UnitTables", "UnitTracker"]

# Token kinds (UnitRule.kind), as codes
VARIABLE, DIMENSIONLESS, CONSTANT, SAME, MUL, DIV, POW, SCALE = range(8)
_CODES = {"variable": VARIABLE, "dimensionless": DIMENSIONLESS, "constant": CONSTANT,
          "same": SAME, "mul": MUL, "div": DIV, "pow": POW, "scale": SCALE}
# Needs of a node
KNOWN, LINKED, FREE = 0, 1, 2
# What is known of a node's units once its token is chosen
UNKNOWN, FIXED, SOLVED = 0, 1, 2  # SOLVED: the overall factor, or a product with it

#: Exponents are tracked in quarters (``sqrt`` halves them, twice at most in a
#: short formula); the sizes of the smallest subtrees are tabulated up to this many nodes.
_QUANTUM, _TABULATED_SIZE, _MAX_QUANTA = 4, 9, 48
_UNREACHABLE = 10**6
_MAX_EXTRA = 8  # nodes beyond the fewest that the units prior still tells apart
#: Nodes the units prior adds for a product whose two factors both leave their units
#: open, which only the final check can judge.
_OPEN_PAIR_EXTRA = 1


def _fixes_units(kind: torch.Tensor) -> torch.Tensor:
    """Whether a token's units are fixed by the token alone (a variable, a constant, a
    function's dimensionless value), not by its subtree."""
    return (kind == VARIABLE) | (kind == CONSTANT) | (kind == DIMENSIONLESS) | (kind == POW)


class ReachCosts:
    """The fewest nodes a subtree needs to have given units: a dynamic programme over
    subtree sizes, with the variables' units (and a dimensionless constant) as leaves.

    Sizes up to ``_TABULATED_SIZE`` are exact for the operators ``*``, ``/`` and
    those of ``sqrt``, ``square``, ``cube``, ``inv`` in the library (``scales``,
    the factors they scale units by); units it did not meet cost one node
    more when they are a combination of the variables' units, and cannot be
    reached when they are not. The mask uses these as lower bounds: an
    operator is allowed only where its subtree can close within the length left.
    """

    def __init__(self, variable_units: np.ndarray, scales: tuple[float, ...]) -> None:
        quanta = variable_units * _QUANTUM
        self.D = variable_units.shape[1]
        self.scales = scales  # the factors of the library's scaling operators (sqrt: ½, …)
        self.exact = bool(np.allclose(quanta, np.round(quanta)))
        # An orthonormal basis of the units the variables span: the rest is out of reach.
        basis, singular, _ = np.linalg.svd(variable_units.T, full_matrices=False)
        self.span = basis[:, singular > 1e-9] if variable_units.size else np.zeros((self.D, 0))
        best: dict[tuple, int] = {}
        by_product: dict[tuple, int] = {}
        by_quotient: dict[tuple, int] = {}
        #: What a need the table does not hold costs when the variables span it: past
        #: the table when the table is exact; without a table (exponents that are not
        #: multiples of ¼) only the lower bound 1, so the masks stay loose, never wrong.
        self.untabulated = _TABULATED_SIZE + 1 if self.exact else 1
        #: Fewest nodes of a dimensionless subtree that is not a lone constant (the
        #: argument of a function, which may not be one): from the variables alone.
        self.dimensionless_argument = 1 if self.D == 0 else self.untabulated
        if self.exact and self.D:
            leaves = np.round(quanta).astype(np.int64)
            self._tabulate(leaves, best, by_product, by_quotient, constant_leaf=True)
            without_constants: dict[tuple, int] = {}
            self._tabulate(leaves, without_constants, {}, {}, constant_leaf=False)
            self.dimensionless_argument = without_constants.get((0,) * self.D,
                                                                _TABULATED_SIZE + 1)
        self.keys = sorted(best)
        index = {k: i for i, k in enumerate(self.keys)}
        self.cost = np.array([best[k] for k in self.keys], dtype=np.int64)
        self.cost_mul = np.full(len(self.keys), _UNREACHABLE, dtype=np.int64)
        self.cost_div = np.full(len(self.keys), _UNREACHABLE, dtype=np.int64)
        for table, out in ((by_product, self.cost_mul), (by_quotient, self.cost_div)):
            for k, c in table.items():
                out[index[k]] = c
        self._encoded = self._encode(np.array(self.keys, dtype=np.int64).reshape(len(self.keys),
                                                                                 self.D))
        order = np.argsort(self._encoded)
        self._encoded, self._order = self._encoded[order], order
        self._on_device: dict[torch.device, dict[str, torch.Tensor]] = {}

    @staticmethod
    def _encode(q: np.ndarray) -> np.ndarray:
        """One int64 per vector of quanta (each within ±_MAX_QUANTA)."""
        width = 2 * _MAX_QUANTA + 1
        return ((q + _MAX_QUANTA) * width ** np.arange(q.shape[-1])).sum(-1)

    def _tabulate(self, leaves: np.ndarray, best, by_product, by_quotient,
                  constant_leaf: bool) -> None:
        D = self.D
        sizes: dict[int, np.ndarray] = {}

        def admit(vectors: np.ndarray, size: int, table: dict | None = None) -> list:
            fresh = []
            keep = np.all(np.abs(vectors) <= _MAX_QUANTA, axis=1)
            for row in np.unique(vectors[keep], axis=0):
                key = tuple(int(v) for v in row)
                if table is not None and key not in table:
                    table[key] = size
                if key not in best:
                    best[key] = size
                    fresh.append(row)
            return fresh

        zero = np.zeros((1 if constant_leaf else 0, D), dtype=np.int64)
        first = admit(np.vstack([leaves, zero]), 1)
        sizes[1] = np.array(first, dtype=np.int64).reshape(-1, D)
        for size in range(2, _TABULATED_SIZE + 1):
            fresh = []
            below = sizes[size - 1]
            # unary scalings: the value's units from the child's (quanta stay integral)
            # only the library's scaling operators: without sqrt no half powers, and so on
            scaled = [below * int(f) for f in (2, 3, -1) if f in self.scales]
            if 0.5 in self.scales:
                scaled.append(below[np.all(below % 2 == 0, axis=1)] // 2)
            for vectors in scaled:
                if len(vectors):
                    fresh += admit(vectors, size)
            for left in range(1, size - 1):
                a, b = sizes.get(left), sizes.get(size - 1 - left)
                if a is None or b is None or not len(a) or not len(b):
                    continue
                fresh += admit((a[:, None, :] + b[None, :, :]).reshape(-1, D), size, by_product)
                fresh += admit((a[:, None, :] - b[None, :, :]).reshape(-1, D), size, by_quotient)
            sizes[size] = np.array(fresh, dtype=np.int64).reshape(-1, D)

    def _tables_on(self, device: torch.device) -> dict[str, torch.Tensor]:
        """The sorted codes, their costs and the span's basis as tensors on ``device``
        (made once per device: :meth:`lookup` runs at every step of sampling)."""
        if device not in self._on_device:
            as_tensor = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
            width = 2 * _MAX_QUANTA + 1
            self._on_device[device] = dict(
                encoded=as_tensor(self._encoded), cost=as_tensor(self.cost[self._order]),
                cost_mul=as_tensor(self.cost_mul[self._order]),
                cost_div=as_tensor(self.cost_div[self._order]),
                span=as_tensor(np.ascontiguousarray(self.span, dtype=np.float64)),
                powers=as_tensor(width ** np.arange(self.D, dtype=np.int64)))
        return self._on_device[device]

    def lookup(self, units: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Fewest nodes for ``units`` (..., D): overall, with ``*`` at the top, with ``/``.

        Units not tabulated cost :attr:`untabulated` if the variables span
        them, else ``_UNREACHABLE``.
        """
        shape = units.shape[:-1]
        if self.D == 0:  # every quantity is dimensionless: any leaf, any product of two
            ones = torch.ones(shape, dtype=torch.long, device=units.device)
            return ones, 3 * ones, 3 * ones
        tab = self._tables_on(units.device)
        u = units.reshape(-1, self.D).to(torch.float64)  # (n, D)
        residual = u - (u @ tab["span"]) @ tab["span"].T
        fallback = torch.where((residual.abs() < 1e-9).all(dim=1), self.untabulated,
                               _UNREACHABLE)  # (n,)
        q = u * _QUANTUM
        rounded = q.round()
        inside = ((q - rounded).abs() < 1e-6).all(dim=1) & (rounded.abs()
                                                              <= _MAX_QUANTA).all(dim=1)
        cost, cost_mul, cost_div = fallback, fallback, fallback
        if len(tab["encoded"]):
            quanta = rounded.clamp(-_MAX_QUANTA, _MAX_QUANTA).long()
            code = ((quanta + _MAX_QUANTA) * tab["powers"]).sum(dim=1)  # as _encode writes it
            at = torch.searchsorted(tab["encoded"], code).clamp(max=len(tab["encoded"]) - 1)
            found = inside & (tab["encoded"][at] == code)
            cost = torch.where(found, tab["cost"][at], fallback)
            cost_mul = torch.where(found, torch.minimum(tab["cost_mul"][at], fallback), fallback)
            cost_div = torch.where(found, torch.minimum(tab["cost_div"][at], fallback), fallback)
        return cost.reshape(shape), cost_mul.reshape(shape), cost_div.reshape(shape)


class UnitTables:
    """Per-token unit facts of a library under :class:`~.quantities.Units`, on a device."""

    def __init__(self, library: Library, units: Units, device: torch.device) -> None:
        rules = token_unit_rules(library)
        D = len(units.base)
        self.kind = torch.tensor([_CODES[r.kind] for r in rules], device=device)  # (V,)
        # Parent-indexed: row V for "no parent", where finished trees of a teacher-forced
        # batch go on taking a filler token.
        self.parent_kind = torch.cat([self.kind, self.kind.new_full((1,), DIMENSIONLESS)])
        self.factor = torch.tensor([r.factor for r in rules] + [1.0], dtype=torch.float64,
                                   device=device)  # (V+1,)
        exponents = torch.zeros(len(rules), D, dtype=torch.float64)
        for i, r in enumerate(rules):
            if r.feature is not None:
                exponents[i] = torch.as_tensor(units.features[r.feature])
        self.exponents = exponents.to(device)  # (V, D): a variable's units, 0 for the rest
        self.is_variable = self.kind == VARIABLE
        self.needs_dimensionless = (self.kind == DIMENSIONLESS) | (self.kind == POW)
        self.is_constant = self.kind == CONSTANT
        self.arity = torch.as_tensor(library.arities, device=device)  # (V,)
        self.scale_factors = sorted({r.factor for r in rules if r.kind == "scale"})
        self.reach = ReachCosts(np.asarray(units.features, dtype=np.float64),
                                tuple(self.scale_factors))
        self.target = (None if units.target is None
                       else torch.as_tensor(units.target, dtype=torch.float64, device=device))
        self.dimensional_constant = units.dimensional_constant
        self.D = D
        #: (1, V) UnitTracker's fewest nodes of each token that fixes its own units
        self.own_costs: torch.Tensor | None = None


class UnitTracker:
    """The needs and known units of every node of a batch of partial trees (B, T+1).

    Advanced by :class:`~cadsr_sklearn.sampling.constraints.TreeState`, one node per step;
    the last column is the sink of absent children.
    """

    def __init__(self, tables: UnitTables, batch_size: int, max_length: int,
                 device: torch.device) -> None:
        B, T, D = batch_size, max_length, tables.D
        self.tables = tables
        self.need_kind = torch.full((B, T + 1), FREE, dtype=torch.long, device=device)
        self.need = torch.zeros(B, T + 1, D, dtype=torch.float64, device=device)
        self.unit_kind = torch.full((B, T + 1), UNKNOWN, dtype=torch.long, device=device)
        self.unit = torch.zeros(B, T + 1, D, dtype=torch.float64, device=device)
        self.parent_index = torch.zeros(B, T + 1, dtype=torch.long, device=device)
        self.top_chain = torch.zeros(B, T + 1, dtype=torch.bool, device=device)
        self.top_chain[:, 0] = True
        #: (B,) a mask had to yield: the tree breaks the constraint somewhere.
        self.violated = torch.zeros(B, dtype=torch.bool, device=device)
        #: (B, V) after :meth:`restrict`: how many more nodes than the fewest each
        #: allowed token needs to give node t its known units (0 where they are not known).
        self.extra_nodes = torch.zeros(B, len(tables.kind), device=device)
        #: Fewest nodes each node's subtree was counted for in :attr:`min_size`, and
        #: (B,) the fewest nodes each tree can still be finished in.
        self.reserved = torch.ones(B, T + 1, dtype=torch.long, device=device)
        self.min_size = torch.ones(B, dtype=torch.long, device=device)
        self.cost = torch.ones(B, len(tables.kind), dtype=torch.long, device=device)

    _FIELDS = ("need_kind", "need", "unit_kind", "unit", "parent_index", "top_chain", "violated",
               "extra_nodes", "reserved", "min_size", "cost")

    def select(self, rows: torch.Tensor) -> "UnitTracker":
        new = object.__new__(UnitTracker)
        new.tables = self.tables
        for name in self._FIELDS:
            setattr(new, name, getattr(self, name)[rows])
        return new

    def _pull_need(self, t: int, parent_token: torch.Tensor, slot: torch.Tensor) -> None:
        """Set node ``t``'s need from its parent's (and its left sibling's units)."""
        tab, B = self.tables, len(slot)
        rows = torch.arange(B, device=slot.device)
        if t == 0:
            if tab.target is None:
                self.need_kind[:, 0] = FREE
            else:
                self.need_kind[:, 0] = KNOWN
                self.need[:, 0] = tab.target
            return
        p = self.parent_index[:, t]  # (B,)
        parent_known = self.need_kind[rows, p] == KNOWN  # (B,)
        parent_need = self.need[rows, p]  # (B, D)
        kind = tab.parent_kind[parent_token]  # (B,)
        right = slot == 1
        left_fixed = right & (self.unit_kind[:, t - 1] == FIXED)
        left_solved = right & (self.unit_kind[:, t - 1] == SOLVED)
        left_units = self.unit[:, t - 1]  # (B, D)

        need = torch.zeros_like(parent_need)  # dimensionless unless set below
        state = torch.full_like(slot, FREE)
        state[kind == DIMENSIONLESS] = KNOWN
        scale = (kind == SCALE) & parent_known
        state[scale] = KNOWN
        need[scale] = parent_need[scale] / tab.factor[parent_token[scale]].unsqueeze(1)
        # + and −: both sides the parent's units, or each other's
        same = kind == SAME
        same_known = same & parent_known
        state[same_known] = KNOWN
        need[same_known] = parent_need[same_known]
        same_linked = same & ~parent_known
        state[same_linked & ~left_fixed] = LINKED
        state[same_linked & left_fixed] = KNOWN
        need[same_linked & left_fixed] = left_units[same_linked & left_fixed]
        # × and ÷ under a known need: the right factor completes the left one
        product = ((kind == MUL) | (kind == DIV)) & parent_known
        state[product & ~left_fixed & ~left_solved] = LINKED
        mul_done = product & left_fixed & (kind == MUL)
        div_done = product & left_fixed & (kind == DIV)
        state[mul_done | div_done] = KNOWN
        need[mul_done] = parent_need[mul_done] - left_units[mul_done]
        need[div_done] = left_units[div_done] - parent_need[div_done]
        state[product & left_solved] = FREE
        # pow: a dimensionless exponent; a dimensionless base unless the units are free
        power = kind == POW
        state[power & (right | (self.need_kind[rows, p] != FREE))] = KNOWN
        self.need_kind[:, t], self.need[:, t] = state, need

    def restrict(self, t: int, parent_token: torch.Tensor, slot: torch.Tensor,
                 max_length: int, allowed: torch.Tensor) -> None:
        """Clear (in place) the tokens of ``allowed`` (B, V) that cannot meet node ``t``'s need
        within ``max_length`` nodes.

        A token is kept if the fewest nodes its subtree needs, with the fewest the
        other open slots need (:attr:`min_size`), fit. Rows left with no token keep
        their mask (the rule yields) and are marked :attr:`violated`; a violated
        tree gets only terminals from then on, where the other rules allow one, so
        that it closes (the scorer rejects it).
        """
        self._pull_need(t, parent_token, slot)
        # A tree that broke the constraint will be rejected: close it as soon as possible.
        closing = self.violated.unsqueeze(1) & (self.tables.arity == 0).unsqueeze(0)  # (B, V)
        closes = (allowed & closing).any(dim=1, keepdim=True)  # (B, 1)
        allowed &= ~closes | closing
        known = (self.need_kind[:, t] == KNOWN).unsqueeze(1)  # (B, 1)
        unconstrained = (1 + self.tables.arity).unsqueeze(0)  # (1, V): a bare subtree's size
        cost = torch.where(known, self._costs(self.need[:, t], self.top_chain[:, t]),
                           unconstrained)  # (B, V)
        meets = allowed & (cost < _UNREACHABLE)
        fewest = torch.where(meets, cost, _UNREACHABLE).min(dim=1).values  # (B,)
        raise_by = (fewest.clamp(max=max_length + 1) - self.reserved[:, t]).clamp(min=0)
        self.reserved[:, t] += raise_by
        self.min_size += raise_by
        room = max_length - (self.min_size - self.reserved[:, t])  # (B,) nodes for node t
        meets &= cost <= room.unsqueeze(1)
        # the left factor of a product with a known need: priced with the right factor it leaves
        priced = known.expand_as(cost).clone()  # (B, V)
        price = cost.clone()
        if t > 0:
            linked, pair_cost = self._left_factor_costs(t, parent_token, slot)
            pair_room = room + self.reserved[:, t + 1]  # node t + 1 is the right factor
            fixing = linked.unsqueeze(1) & _fixes_units(self.tables.kind).unsqueeze(0)
            meets &= ~fixing | (pair_cost <= pair_room.unsqueeze(1))
            priced |= linked.unsqueeze(1)
            price = torch.where(linked.unsqueeze(1), pair_cost, price)
            settling, settle_cost = self._right_factor_costs(t, parent_token, slot)
            meets &= ~settling.unsqueeze(1) | (settle_cost < _UNREACHABLE)
            priced |= settling.unsqueeze(1)
            price = torch.where(settling.unsqueeze(1), settle_cost, price)
        dead = ~meets.any(dim=1)  # (B,)
        self.violated |= dead
        allowed.copy_(torch.where(dead.unsqueeze(1), allowed, meets))
        self.cost = cost.clamp(max=max_length + 1)
        price = price.clamp(max=max_length + 1)
        fewest = torch.where(allowed, price, _UNREACHABLE).min(dim=1, keepdim=True).values
        self.extra_nodes = torch.where(priced & allowed, (price - fewest).clamp(0, _MAX_EXTRA),
                                       0).to(torch.get_default_dtype())

    def _costs(self, need: torch.Tensor, on_top_chain: torch.Tensor) -> torch.Tensor:
        """Fewest nodes (B, V) of a subtree with units ``need`` (B, D) rooted at each token."""
        tab = self.tables
        total, product, quotient = tab.reach.lookup(need)  # (B,) each
        dimensionless = (need.abs() < EXPONENT_TOLERANCE).all(dim=1, keepdim=True)  # (B, 1)
        matches = ((need.unsqueeze(1) - tab.exponents.unsqueeze(0)).abs()
                   < EXPONENT_TOLERANCE).all(dim=2)  # (B, V)
        factor = on_top_chain.unsqueeze(1) & tab.dimensional_constant  # (B, 1)
        cost = torch.full(matches.shape, _UNREACHABLE, dtype=torch.long, device=need.device)
        kind = tab.kind.unsqueeze(0).expand_as(cost)
        cost[tab.is_variable.expand_as(cost) & matches] = 1
        cost[(kind == CONSTANT) & (dimensionless | factor)] = 1
        # the literal 1, a function of a dimensionless argument, a power of dimensionless terms
        # (an operator's argument is never a lone constant: the constant-subtree rule)
        argument = tab.reach.dimensionless_argument
        plain = (kind == DIMENSIONLESS) & (tab.arity > 0).unsqueeze(0)
        cost = torch.where(plain & dimensionless, 1 + tab.arity.unsqueeze(0) * argument, cost)
        cost = torch.where((kind == DIMENSIONLESS) & (tab.arity == 0).unsqueeze(0)
                           & dimensionless, 1, cost)
        cost = torch.where((kind == POW) & dimensionless, 2 + argument, cost)
        # on the top chain, the overall factor times (or over) anything: c·x, x/c
        by_factor = torch.where(factor, 3, _UNREACHABLE)  # (B, 1)
        cost = torch.where(kind == MUL, torch.minimum(product.unsqueeze(1), by_factor), cost)
        cost = torch.where(kind == DIV, torch.minimum(quotient.unsqueeze(1), by_factor), cost)
        cost = torch.where(kind == SAME, 2 * total.unsqueeze(1) + 1, cost)
        for f in tab.scale_factors:  # the child of a token that scales units by f needs need/f
            child, _, _ = tab.reach.lookup(need / f)
            child = torch.where(dimensionless.squeeze(1), argument, child)
            scaled = (kind == SCALE) & (tab.factor[:-1] == f).unsqueeze(0)
            cost = torch.where(scaled, child.unsqueeze(1) + 1, cost)
        return cost

    def _factor_of_known_product(self, t: int, parent_token: torch.Tensor, slot: torch.Tensor
                                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The parent's kind (B,), whether node ``t`` is a factor of a ``*`` or ``/`` with a
        known need whose units wait on its sibling (B,), and that product's need (B, D)."""
        rows = torch.arange(len(slot), device=slot.device)
        p = self.parent_index[:, t]
        kind = self.tables.parent_kind[parent_token]
        under = (((kind == MUL) | (kind == DIV)) & (self.need_kind[:, t] == LINKED)
                 & (self.need_kind[rows, p] == KNOWN))
        return kind, under, self.need[rows, p]

    def _own_costs(self) -> torch.Tensor:
        """Fewest nodes (1, V) of a subtree rooted at each token whose units it fixes
        itself: 1 for a variable or a constant, a function and its argument."""
        tab = self.tables
        if tab.own_costs is None:  # the same for every tree and step: computed once per fit
            own = self._costs(torch.zeros(1, tab.D, dtype=torch.float64, device=tab.kind.device),
                              torch.zeros(1, dtype=torch.bool, device=tab.kind.device))
            tab.own_costs = torch.where(tab.is_variable.unsqueeze(0), 1, own)
        return tab.own_costs

    def _left_factor_costs(self, t: int, parent_token: torch.Tensor,
                           slot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Which rows (B,) are at the left factor of a product with a known need, and there
        the fewest nodes (B, V) of the pair it starts: this factor and its right sibling.

        A factor whose token fixes its units (a variable, a constant, a function)
        fixes the right factor's need, so the pair costs the factor's fewest nodes
        plus the right factor's. A factor whose units stay open (an operator) costs
        at least its own bare size and one node for the right factor, and together
        no fewer than the product's fewest nodes below its ``*`` or ``/``. Without
        this the left factor is unconstrained, and an untrained policy puts a
        function there as often as a variable: the right factor must then carry
        all the units and the tree runs into the length cap.
        """
        tab = self.tables
        kind, under, u = self._factor_of_known_product(t, parent_token, slot)
        linked = under & (slot == 0)
        pair = torch.zeros(len(slot), len(tab.kind), dtype=torch.long, device=slot.device)
        if not bool(linked.any()):
            return linked, pair
        u = u[linked]  # (b, D): the product's need
        is_mul = kind[linked] == MUL  # (b,)
        sign = torch.where(is_mul, 1.0, -1.0).to(u.dtype).unsqueeze(1)  # (b, 1)
        # right need: u − left for ×, left − u for ÷, i.e. sign·(u − left)
        right_need = sign.unsqueeze(2) * (u.unsqueeze(1) - tab.exponents.unsqueeze(0))  # (b, V, D)
        right_cost, _, _ = tab.reach.lookup(right_need)  # (b, V)
        # the overall factor (a constant on the top chain) leaves its sibling free
        factor = (self.top_chain[:, t] & tab.dimensional_constant)[linked].unsqueeze(1)
        right_cost = torch.where(factor & tab.is_constant.unsqueeze(0), 1, right_cost)
        own = self._own_costs()
        fixing = _fixes_units(tab.kind).unsqueeze(0)  # (1, V)
        _, product, quotient = tab.reach.lookup(u)  # (b,): fewest below the * or /
        below = torch.where(is_mul, product, quotient) - 1
        below = torch.where(factor.squeeze(1), 2, below)  # c·x: the factor deeper on the chain
        bare = torch.maximum(2 + tab.arity.unsqueeze(0), below.unsqueeze(1))  # (b, V)
        pair[linked] = torch.where(fixing, own + right_cost, bare).clamp(max=_UNREACHABLE)
        return linked, pair

    def _right_factor_costs(self, t: int, parent_token: torch.Tensor,
                            slot: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Which rows (B,) are at the right factor of a product with a known need whose left
        factor's token left its units open, and there a price (B, V) of each token.

        A token that fixes its own units settles the left factor's need (its subtree
        is written later); it costs its own fewest nodes plus the fewest the left
        factor then needs, and it is out if the left factor cannot have those units.
        A token that leaves its units open too leaves the pair to the final check,
        which many such pairs fail: it costs its bare size, the left factor's, and
        :data:`_OPEN_PAIR_EXTRA` nodes more. Only that much: a ratio of two sums
        (I.18.4's centre of mass) is such a pair, and must stay within reach.
        """
        tab = self.tables
        kind, under, u = self._factor_of_known_product(t, parent_token, slot)
        settling = under & (slot == 1) & (self.unit_kind[:, t - 1] == UNKNOWN)
        price = torch.zeros(len(slot), len(tab.kind), dtype=torch.long, device=slot.device)
        if not bool(settling.any()):
            return settling, price
        u = u[settling]  # (b, D): the product's need
        sign = torch.where(kind[settling] == MUL, -1.0, 1.0).to(u.dtype).view(-1, 1, 1)
        left_need = u.unsqueeze(1) + sign * tab.exponents.unsqueeze(0)  # (b, V, D)
        left_cost, _, _ = tab.reach.lookup(left_need)  # (b, V)
        own = self._own_costs()
        fixing = _fixes_units(tab.kind).unsqueeze(0)  # (1, V)
        open_price = 1 + tab.arity.unsqueeze(0) + self.reserved[:, t - 1][settling].unsqueeze(1) \
            + _OPEN_PAIR_EXTRA
        price[settling] = torch.where(fixing, (own + left_cost).clamp(max=_UNREACHABLE),
                                      open_price)
        return settling, price

    def advance(self, t: int, tokens: torch.Tensor, parent_token: torch.Tensor,
                slot: torch.Tensor, child_columns: torch.Tensor) -> None:
        """Record node ``t``'s units after its token, settle its left sibling, place its children.

        ``child_columns`` (B, 2) are the BFS columns of its children (the sink
        for absent ones).
        """
        tab = self.tables
        rows = torch.arange(len(tokens), device=tokens.device)
        kind = tab.kind[tokens]  # (B,)
        need_kind = self.need_kind[:, t]
        solved = (kind == CONSTANT) & self.top_chain[:, t] & tab.dimensional_constant
        by_token = ((kind == VARIABLE) | (kind == DIMENSIONLESS) | (kind == CONSTANT)
                    | ((kind == POW) & (need_kind == LINKED)))
        fixed = ~solved & ((need_kind == KNOWN) | by_token)
        units = torch.where((need_kind == KNOWN).unsqueeze(1), self.need[:, t],
                            tab.exponents[tokens])  # (B, D): 0 for constants and functions
        self.unit_kind[:, t] = torch.where(solved, SOLVED, torch.where(fixed, FIXED, UNKNOWN))
        self.unit[:, t] = units
        if t > 0:
            self._settle_left_sibling(t, rows, tab.parent_kind[parent_token], slot)
        # node t's subtree now counts for its token's fewest nodes, shared by its children
        size = self.cost.gather(1, tokens.unsqueeze(1)).squeeze(1)  # (B,)
        self.min_size += size - self.reserved[rows, t]
        self.reserved[rows, t] = size
        left = ((size - 1) // 2).clamp(min=1)
        shares = torch.stack([torch.where(tab.arity[tokens] == 1, size - 1, left),
                              size - 1 - left], dim=1).clamp(min=1)  # (B, 2)
        self.reserved.scatter_(1, child_columns, shares)
        self.parent_index.scatter_(1, child_columns, t)
        chain = self.top_chain[:, t] & ((kind == MUL) | (kind == DIV))
        self.top_chain.scatter_(1, child_columns, chain.unsqueeze(1).expand(-1, 2))

    def _settle_left_sibling(self, t: int, rows: torch.Tensor, parent_kind: torch.Tensor,
                             slot: torch.Tensor) -> None:
        """A LINKED left sibling whose units its token left open takes them from node ``t``."""
        left = t - 1
        open_left = ((slot == 1) & (self.need_kind[:, left] == LINKED)
                     & (self.unit_kind[:, left] == UNKNOWN))
        if not bool(open_left.any()):
            return
        p = self.parent_index[:, t]
        parent_need = self.need[rows, p]
        parent_known = self.need_kind[rows, p] == KNOWN
        units, kind = self.unit[:, t], self.unit_kind[:, t]
        need = torch.where((parent_kind == MUL).unsqueeze(1), parent_need - units,
                           torch.where((parent_kind == DIV).unsqueeze(1), parent_need + units,
                                       units))
        settle = open_left & (kind == FIXED) & (parent_known | (parent_kind == SAME))
        self.need_kind[settle, left] = KNOWN
        self.need[settle, left] = need[settle]
        self.unit_kind[settle, left] = FIXED
        self.unit[settle, left] = need[settle]
        self.need_kind[open_left & (kind == SOLVED), left] = FREE
