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
units), and every operator that can produce u from its arguments within the length
left (the fewest nodes a subtree takes to have given units are
:mod:`cadsr_sklearn.units.reach`'s). Every
quantity is a function of the partial tree, so re-scoring a tree rebuilds the
masks it was sampled under. Where no token is left (u is out of reach within
the length) the rule yields, as the length rules do, and the tree is marked;
:func:`~cadsr_sklearn.units.check.check_units`, run on every finished formula before
its constants are fitted, rejects it and the ties the masks left open.

A step's work for every tree of a batch is one call of a compiled kernel
(:func:`_restrict` before the token is drawn, :func:`_advance` after), which loops
over the trees on the CPU whatever the policy's device: as batched tensor
operations the rule cost some 60 small operations a step, more than the policy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ..expressions.library import Library
from ..expressions.opcodes import copy_into, jit
from .check import token_unit_rules
from .quantities import EXPONENT_TOLERANCE, Units
from .reach import UNREACHABLE, ReachCosts, fewest_nodes

__all__ = ["UnitTables", "UnitTracker"]

# Token kinds (UnitRule.kind), as codes
VARIABLE, DIMENSIONLESS, CONSTANT, SAME, MUL, DIV, POW, SCALE = range(8)
_CODES = {"variable": VARIABLE, "dimensionless": DIMENSIONLESS, "constant": CONSTANT,
          "same": SAME, "mul": MUL, "div": DIV, "pow": POW, "scale": SCALE}
# Needs of a node
KNOWN, LINKED, FREE = 0, 1, 2
# What is known of a node's units once its token is chosen
UNKNOWN, FIXED, SOLVED = 0, 1, 2  # SOLVED: the overall factor, or a product with it

_MAX_EXTRA = 8  # nodes beyond the fewest that the units prior still tells apart
#: Nodes the units prior adds for a product whose two factors both leave their units
#: open, which only the final check can judge.
_OPEN_PAIR_EXTRA = 1


class _Tables(NamedTuple):
    """What the compiled kernels read: the tokens' unit facts and the reach tables."""

    kind: np.ndarray  # (V,) UnitRule kind codes
    parent_kind: np.ndarray  # (V+1,): row V for "no parent", a dimensionless context
    factor: np.ndarray  # (V+1,) a scaling operator's factor, 1 elsewhere
    exponents: np.ndarray  # (V, D) a variable's units, 0 for the rest
    arity: np.ndarray  # (V,)
    scale_factors: np.ndarray  # (S,) the library's scaling factors, ascending
    target: np.ndarray  # (D,) the target's units (zeros when it has none)
    has_target: bool
    dimensional_constant: bool  # the overall factor may carry units
    argument: int  # fewest nodes of a dimensionless function argument
    own: np.ndarray  # (V,) fewest nodes of a subtree whose token fixes its own units
    encoded: np.ndarray  # (K,) sorted codes of the tabulated units
    cost: np.ndarray  # (K,) fewest nodes, in the order of `encoded`
    cost_mul: np.ndarray  # (K,) … with * at the top
    cost_div: np.ndarray  # (K,) … with / at the top
    span: np.ndarray  # (D, r) orthonormal basis of the units the variables span
    powers: np.ndarray  # (D,) the code's place values
    untabulated: int  # cost of spanned units the table does not hold


class _State(NamedTuple):
    """The tracker's arrays, row for row with the trees (see :class:`UnitTracker`)."""

    need_kind: np.ndarray  # (B, T+1) KNOWN, LINKED or FREE
    need: np.ndarray  # (B, T+1, D)
    unit_kind: np.ndarray  # (B, T+1) UNKNOWN, FIXED or SOLVED
    unit: np.ndarray  # (B, T+1, D)
    parent_index: np.ndarray  # (B, T+1)
    top_chain: np.ndarray  # (B, T+1) on the chain of * and / from the root
    violated: np.ndarray  # (B,)
    extra_nodes: np.ndarray  # (B, V)
    reserved: np.ndarray  # (B, T+1)
    min_size: np.ndarray  # (B,)
    cost: np.ndarray  # (B, V)


# ------------------------------------------------------------------ compiled kernels

@jit(inline="always")
def _fixes_units(kind):
    """Whether a token's units are fixed by the token alone (a variable, a constant, a
    function's dimensionless value), not by its subtree."""
    return kind == VARIABLE or kind == CONSTANT or kind == DIMENSIONLESS or kind == POW


@jit(inline="always")
def _dimensionless(u):
    """Whether units ``u`` (D,) are those of a pure number."""
    for x in u:
        if not abs(x) < EXPONENT_TOLERANCE:
            return False
    return True


@jit(inline="always")
def _same_units(u, w):
    for i in range(len(u)):
        if not abs(u[i] - w[i]) < EXPONENT_TOLERANCE:
            return False
    return True


@jit()
def _costs(tab, need, on_top_chain, cost, units, work):
    """Fewest nodes ``cost`` (V,) of a subtree with units ``need`` (D,) rooted at each token
    (``units`` (D,) and ``work``: scratch)."""
    total, product, quotient = fewest_nodes(tab, need, work)
    dimensionless = _dimensionless(need)
    factor = on_top_chain and tab.dimensional_constant  # the overall factor may sit here
    argument = tab.argument
    for v in range(len(tab.kind)):
        kind, arity = tab.kind[v], tab.arity[v]
        c = UNREACHABLE
        if kind == VARIABLE:
            if _same_units(need, tab.exponents[v]):
                c = 1
        elif kind == CONSTANT:
            if dimensionless or factor:
                c = 1
        elif kind == DIMENSIONLESS:
            # the literal 1, or a function of a dimensionless argument (an operator's
            # argument is never a lone constant: the constant-subtree rule)
            if dimensionless:
                c = 1 + arity * argument
        elif kind == POW:  # a power of dimensionless terms
            if dimensionless:
                c = 2 + argument
        elif kind == MUL:  # on the top chain, the overall factor times anything: c·x
            c = min(product, 3 if factor else UNREACHABLE)
        elif kind == DIV:  # … or over it: x/c
            c = min(quotient, 3 if factor else UNREACHABLE)
        elif kind == SAME:
            c = 2 * total + 1
        cost[v] = c
    for f in tab.scale_factors:  # the child of a token that scales units by f needs need/f
        for i in range(len(need)):
            units[i] = need[i] / f
        child = argument if dimensionless else fewest_nodes(tab, units, work)[0]
        for v in range(len(tab.kind)):
            if tab.kind[v] == SCALE and tab.factor[v] == f:
                cost[v] = child + 1


@jit(inline="always")
def _known_product(tab, st, b, t, parent_token):
    """Whether node ``t`` of tree ``b`` is a factor of a ``*`` or ``/`` with a known need
    whose units wait on its sibling, and that product's kind and node."""
    p = st.parent_index[b, t]
    kind = tab.parent_kind[parent_token]
    under = ((kind == MUL or kind == DIV) and st.need_kind[b, t] == LINKED
             and st.need_kind[b, p] == KNOWN)
    return under, kind, p


@jit()
def _left_factor_costs(tab, st, b, t, parent_token, slot, pair, units, work):
    """Whether node ``t`` of tree ``b`` is the left factor of a product with a known
    need; there, the fewest nodes ``pair`` (V,) of the pair it starts: this factor and
    its right sibling (``units`` and ``work``: scratch).

    A factor whose token fixes its units (a variable, a constant, a function)
    fixes the right factor's need, so the pair costs the factor's fewest nodes
    plus the right factor's. A factor whose units stay open (an operator) costs
    at least its own bare size and one node for the right factor, and together
    no fewer than the product's fewest nodes below its ``*`` or ``/``. Without
    this the left factor is unconstrained, and an untrained policy puts a
    function there as often as a variable: the right factor must then carry
    all the units and the tree runs into the length cap.
    """
    under, kind, p = _known_product(tab, st, b, t, parent_token)
    if not (under and slot == 0):
        return False
    u = st.need[b, p]  # the product's need
    is_mul = kind == MUL
    sign = 1.0 if is_mul else -1.0  # right need: u − left for ×, left − u for ÷
    factor = st.top_chain[b, t] and tab.dimensional_constant  # leaves its sibling free
    _, product, quotient = fewest_nodes(tab, u, work)
    below = 2 if factor else (product if is_mul else quotient) - 1  # c·x: the factor deeper
    for v in range(len(tab.kind)):
        if _fixes_units(tab.kind[v]):
            if factor and tab.kind[v] == CONSTANT:
                right = 1
            else:
                for i in range(len(u)):
                    units[i] = sign * (u[i] - tab.exponents[v, i])
                right = fewest_nodes(tab, units, work)[0]
            pair[v] = min(tab.own[v] + right, UNREACHABLE)
        else:
            pair[v] = min(max(2 + tab.arity[v], below), UNREACHABLE)
    return True


@jit()
def _right_factor_costs(tab, st, b, t, parent_token, slot, price, units, work):
    """Whether node ``t`` of tree ``b`` is the right factor of a product with a known need
    whose left factor's token left its units open; there, a price ``price`` (V,) of
    each token (``units`` and ``work``: scratch).

    A token that fixes its own units settles the left factor's need (its subtree
    is written later); it costs its own fewest nodes plus the fewest the left
    factor then needs, and it is out if the left factor cannot have those units.
    A token that leaves its units open too leaves the pair to the final check,
    which many such pairs fail: it costs its bare size, the left factor's, and
    :data:`_OPEN_PAIR_EXTRA` nodes more. Only that much: a ratio of two sums
    (I.18.4's centre of mass) is such a pair, and must stay within reach.
    """
    under, kind, p = _known_product(tab, st, b, t, parent_token)
    if not (under and slot == 1 and st.unit_kind[b, t - 1] == UNKNOWN):
        return False
    u = st.need[b, p]  # the product's need
    sign = -1.0 if kind == MUL else 1.0  # the left factor's need: u ∓ this token's units
    for v in range(len(tab.kind)):
        if _fixes_units(tab.kind[v]):
            for i in range(len(u)):
                units[i] = u[i] + sign * tab.exponents[v, i]
            left = fewest_nodes(tab, units, work)[0]
            price[v] = min(tab.own[v] + left, UNREACHABLE)
        else:
            price[v] = 1 + tab.arity[v] + st.reserved[b, t - 1] + _OPEN_PAIR_EXTRA
    return True


@jit(inline="always")
def _pull_need(tab, st, b, t, parent_token, slot):
    """Set node ``t``'s need from its parent's (and its left sibling's units)."""
    if t == 0:
        st.need_kind[b, 0] = KNOWN if tab.has_target else FREE
        if tab.has_target:
            copy_into(st.need[b, 0], tab.target)
        return
    p = st.parent_index[b, t]
    parent_known = st.need_kind[b, p] == KNOWN
    parent_need = st.need[b, p]
    kind = tab.parent_kind[parent_token]
    right = slot == 1
    left_fixed = right and st.unit_kind[b, t - 1] == FIXED
    left_solved = right and st.unit_kind[b, t - 1] == SOLVED
    left_units = st.unit[b, t - 1]
    need = st.need[b, t]
    for i in range(len(need)):  # dimensionless unless set below
        need[i] = 0.0
    state = FREE
    if kind == DIMENSIONLESS:
        state = KNOWN
    elif kind == SCALE:
        if parent_known:
            state = KNOWN
            for i in range(len(need)):
                need[i] = parent_need[i] / tab.factor[parent_token]
    elif kind == SAME:  # + and −: both sides the parent's units, or each other's
        if parent_known:
            state = KNOWN
            copy_into(need, parent_need)
        elif left_fixed:
            state = KNOWN
            copy_into(need, left_units)
        else:
            state = LINKED
    elif kind == MUL or kind == DIV:  # under a known need: the right factor completes the left
        if parent_known:
            if left_fixed:
                state = KNOWN
                for i in range(len(need)):
                    need[i] = (parent_need[i] - left_units[i] if kind == MUL
                               else left_units[i] - parent_need[i])
            elif not left_solved:
                state = LINKED
    elif kind == POW:  # a dimensionless exponent; a dimensionless base unless units are free
        if right or st.need_kind[b, p] != FREE:
            state = KNOWN
    st.need_kind[b, t] = state


@jit()
def _restrict(tab, st, t, parent_token, slot, max_length, allowed):
    """:meth:`UnitTracker.restrict` for every tree ``b`` of the batch."""
    V = len(tab.kind)
    cost = np.empty(V, dtype=np.int64)
    price = np.empty(V, dtype=np.int64)
    pair = np.empty(V, dtype=np.int64)
    meets = np.empty(V, dtype=np.bool_)
    priced = np.empty(V, dtype=np.bool_)
    units, work = np.empty(st.need.shape[2]), np.empty(max(tab.span.shape[1], 1))
    for b in range(allowed.shape[0]):
        _pull_need(tab, st, b, t, parent_token[b], slot[b])
        if st.violated[b]:
            _close(tab, allowed[b])
        known = st.need_kind[b, t] == KNOWN
        if known:
            _costs(tab, st.need[b, t], st.top_chain[b, t], cost, units, work)
        else:
            for v in range(V):
                cost[v] = 1 + tab.arity[v]  # a bare subtree's size
        fewest = UNREACHABLE
        for v in range(V):
            meets[v] = allowed[b, v] and cost[v] < UNREACHABLE
            if meets[v]:
                fewest = min(fewest, cost[v])
        raise_by = max(min(fewest, max_length + 1) - st.reserved[b, t], 0)
        st.reserved[b, t] += raise_by
        st.min_size[b] += raise_by
        room = max_length - (st.min_size[b] - st.reserved[b, t])  # nodes for node t
        for v in range(V):
            meets[v] = meets[v] and cost[v] <= room
            priced[v] = known
            price[v] = cost[v]
        if t > 0:
            # the left factor of a product with a known need: priced with the right factor
            if _left_factor_costs(tab, st, b, t, parent_token[b], slot[b], pair, units, work):
                pair_room = room + st.reserved[b, t + 1]  # node t + 1 is the right factor
                for v in range(V):
                    if _fixes_units(tab.kind[v]):
                        meets[v] = meets[v] and pair[v] <= pair_room
                    priced[v] = True
                    price[v] = pair[v]
            elif _right_factor_costs(tab, st, b, t, parent_token[b], slot[b], pair, units,
                                     work):
                for v in range(V):
                    meets[v] = meets[v] and pair[v] < UNREACHABLE
                    priced[v] = True
                    price[v] = pair[v]
        dead = True
        for v in range(V):
            dead = dead and not meets[v]
        st.violated[b] = st.violated[b] or dead
        for v in range(V):
            if not dead:  # where no token is left the rule yields
                allowed[b, v] = meets[v]
            st.cost[b, v] = min(cost[v], max_length + 1)
            price[v] = min(price[v], max_length + 1)
        _extra_nodes(allowed[b], priced, price, st.extra_nodes[b])


@jit(inline="always")
def _close(tab, allowed):
    """A tree that broke the constraint will be rejected: close it as soon as possible
    (only terminals, where the other rules allow one)."""
    closes = False
    for v in range(len(allowed)):
        closes = closes or (allowed[v] and tab.arity[v] == 0)
    if closes:
        for v in range(len(allowed)):
            allowed[v] = allowed[v] and tab.arity[v] == 0


@jit(inline="always")
def _extra_nodes(allowed, priced, price, extra):
    """The units prior's nodes beyond the fewest an allowed token needs (0 where unpriced)."""
    fewest = UNREACHABLE
    for v in range(len(allowed)):
        if allowed[v]:
            fewest = min(fewest, price[v])
    for v in range(len(allowed)):
        extra[v] = 0
        if priced[v] and allowed[v]:
            extra[v] = min(max(price[v] - fewest, 0), _MAX_EXTRA)


@jit()
def _advance(tab, st, t, tokens, parent_token, slot, child_columns):
    """:meth:`UnitTracker.advance` for every tree ``b`` of the batch."""
    for b in range(len(tokens)):
        token = tokens[b]
        kind = tab.kind[token]
        need_kind = st.need_kind[b, t]
        solved = kind == CONSTANT and st.top_chain[b, t] and tab.dimensional_constant
        by_token = (kind == VARIABLE or kind == DIMENSIONLESS or kind == CONSTANT
                    or (kind == POW and need_kind == LINKED))
        fixed = not solved and (need_kind == KNOWN or by_token)
        st.unit_kind[b, t] = SOLVED if solved else (FIXED if fixed else UNKNOWN)
        # a constant's and a function's value are dimensionless (exponents 0)
        copy_into(st.unit[b, t], st.need[b, t] if need_kind == KNOWN else tab.exponents[token])
        if t > 0:
            _settle_left_sibling(tab, st, b, t, tab.parent_kind[parent_token[b]], slot[b])
        # node t's subtree now counts for its token's fewest nodes, shared by its children
        size = st.cost[b, token]
        st.min_size[b] += size - st.reserved[b, t]
        st.reserved[b, t] = size
        left = max((size - 1) // 2, 1)
        first = size - 1 if tab.arity[token] == 1 else left
        chain = st.top_chain[b, t] and (kind == MUL or kind == DIV)
        for k in range(2):
            column = child_columns[b, k]
            st.reserved[b, column] = max(first if k == 0 else size - 1 - left, 1)
            st.parent_index[b, column] = t
            st.top_chain[b, column] = chain


@jit(inline="always")
def _settle_left_sibling(tab, st, b, t, parent_kind, slot):
    """A LINKED left sibling whose units its token left open takes them from node ``t``."""
    left = t - 1
    if not (slot == 1 and st.need_kind[b, left] == LINKED and st.unit_kind[b, left] == UNKNOWN):
        return
    kind = st.unit_kind[b, t]
    if kind == SOLVED:
        st.need_kind[b, left] = FREE
        return
    p = st.parent_index[b, t]
    if kind == FIXED and (st.need_kind[b, p] == KNOWN or parent_kind == SAME):
        units, parent_need, need = st.unit[b, t], st.need[b, p], st.need[b, left]
        for i in range(len(need)):
            if parent_kind == MUL:
                need[i] = parent_need[i] - units[i]
            elif parent_kind == DIV:
                need[i] = parent_need[i] + units[i]
            else:
                need[i] = units[i]
        st.need_kind[b, left] = KNOWN
        st.unit_kind[b, left] = FIXED
        copy_into(st.unit[b, left], need)


class UnitTables:
    """Per-token unit facts of a library under :class:`~.quantities.Units`.

    The masks are computed on the CPU whatever the policy's device (a step's work is
    a few hundred small loops, not tensor arithmetic); ``device`` is where the
    tracker hands its prior and flags to the sampler.
    """

    def __init__(self, library: Library, units: Units, device: torch.device) -> None:
        rules = token_unit_rules(library)
        D = len(units.base)
        kind = np.array([_CODES[r.kind] for r in rules], dtype=np.int64)  # (V,)
        exponents = np.zeros((len(rules), D))
        for i, r in enumerate(rules):
            if r.feature is not None:
                exponents[i] = units.features[r.feature]
        scale_factors = sorted({r.factor for r in rules if r.kind == "scale"})
        reach = ReachCosts(np.asarray(units.features, dtype=np.float64), tuple(scale_factors))
        self.device, self.D, self.V = torch.device(device), D, len(rules)
        self.kernel = _Tables(
            kind=kind,
            parent_kind=np.append(kind, DIMENSIONLESS),
            factor=np.array([r.factor for r in rules] + [1.0], dtype=np.float64),
            exponents=exponents,
            arity=np.asarray(library.arities, dtype=np.int64),
            scale_factors=np.array(scale_factors, dtype=np.float64),
            target=(np.zeros(D) if units.target is None
                    else np.asarray(units.target, dtype=np.float64)),
            has_target=units.target is not None,
            dimensional_constant=bool(units.dimensional_constant),
            argument=int(reach.dimensionless_argument),
            own=np.zeros(len(rules), dtype=np.int64),
            encoded=reach.encoded, cost=reach.cost[reach.order],
            cost_mul=reach.cost_mul[reach.order], cost_div=reach.cost_div[reach.order],
            span=np.ascontiguousarray(reach.span, dtype=np.float64),
            powers=reach.powers,
            untabulated=int(reach.untabulated))
        # A token that fixes its own units: 1 for a variable or a constant, a function
        # and its argument (the same for every tree and step).
        own = self.kernel.own
        _costs(self.kernel, np.zeros(D), False, own, np.empty(D), np.empty(max(D, 1)))
        own[kind == VARIABLE] = 1
        self._compile()

    def _compile(self) -> None:
        """Compile the step's kernels (or load them from numba's cache) for the argument
        types sampling passes, before a search's clock starts: one step of one tree."""
        V = self.V
        tracker = UnitTracker(self, 1, 2)
        one = np.zeros(1, dtype=np.int64)
        _restrict(self.kernel, tracker.state, 0, one + V, one, 2, np.ones((1, V), dtype=np.bool_))
        _advance(self.kernel, tracker.state, 0, one, one + V, one, np.full((1, 2), 2))


class UnitTracker:
    """The needs and known units of every node of a batch of partial trees (B, T+1).

    Advanced by :class:`~cadsr_sklearn.sampling.constraints.TreeState`, one node per step;
    the last column is the sink of absent children. Its arrays live on the CPU
    (:class:`UnitTables`).
    """

    def __init__(self, tables: UnitTables, batch_size: int, max_length: int) -> None:
        B, T, D, V = batch_size, max_length, tables.D, tables.V
        self.tables = tables
        top_chain = np.zeros((B, T + 1), dtype=np.bool_)
        top_chain[:, 0] = True
        self.state = _State(
            need_kind=np.full((B, T + 1), FREE, dtype=np.int64),
            need=np.zeros((B, T + 1, D)),
            unit_kind=np.full((B, T + 1), UNKNOWN, dtype=np.int64),
            unit=np.zeros((B, T + 1, D)),
            parent_index=np.zeros((B, T + 1), dtype=np.int64),
            top_chain=top_chain,
            violated=np.zeros(B, dtype=np.bool_),
            # how many more nodes than the fewest each allowed token needs to give node t
            # its known units (0 where they are not known), after restrict
            extra_nodes=np.zeros((B, V)),
            # the fewest nodes each node's subtree was counted for in min_size, and the
            # fewest nodes each tree can still be finished in
            reserved=np.ones((B, T + 1), dtype=np.int64),
            min_size=np.ones(B, dtype=np.int64),
            cost=np.ones((B, V), dtype=np.int64))

    @property
    def violated(self) -> torch.Tensor:
        """(B,) a mask had to yield: the tree breaks the constraint somewhere."""
        return _to_device(self.state.violated, self.tables.device)

    @property
    def extra_nodes(self) -> torch.Tensor:
        """(B, V) after :meth:`restrict`: how many more nodes than the fewest each allowed
        token needs to give node t its known units (0 where they are not known)."""
        extra = _to_device(self.state.extra_nodes, self.tables.device)
        return extra.to(torch.get_default_dtype())

    def select(self, rows: torch.Tensor) -> "UnitTracker":
        new = object.__new__(UnitTracker)
        new.tables = self.tables
        index = _to_numpy(rows)
        new.state = _State(*(field[index] for field in self.state))
        return new

    def restrict(self, t: int, parent_token: torch.Tensor, slot: torch.Tensor,
                 max_length: int, allowed: torch.Tensor) -> None:
        """Clear (in place) the tokens of ``allowed`` (B, V) that cannot meet node ``t``'s need
        within ``max_length`` nodes.

        A token is kept if the fewest nodes its subtree needs, with the fewest the
        other open slots need (``min_size``), fit. Rows left with no token keep
        their mask (the rule yields) and are marked :attr:`violated`; a violated
        tree gets only terminals from then on, where the other rules allow one, so
        that it closes (the scorer rejects it).
        """
        shared = allowed.device.type == "cpu" and allowed.is_contiguous()
        mask = allowed.numpy() if shared else allowed.cpu().numpy()
        _restrict(self.tables.kernel, self.state, t, _to_numpy(parent_token), _to_numpy(slot),
                  max_length, mask)
        if not shared:
            allowed.copy_(torch.from_numpy(mask))

    def advance(self, t: int, tokens: torch.Tensor, parent_token: torch.Tensor,
                slot: torch.Tensor, child_columns: torch.Tensor) -> None:
        """Record node ``t``'s units after its token, settle its left sibling, place its children.

        ``child_columns`` (B, 2) are the BFS columns of its children (the sink
        for absent ones).
        """
        _advance(self.tables.kernel, self.state, t, _to_numpy(tokens), _to_numpy(parent_token),
                 _to_numpy(slot), _to_numpy(child_columns))


def _to_numpy(x: torch.Tensor) -> np.ndarray:
    """A contiguous int64 or bool array of a tensor's values, on the CPU."""
    return np.ascontiguousarray(x.cpu().numpy())


def _to_device(x: np.ndarray, device: torch.device) -> torch.Tensor:
    tensor = torch.from_numpy(x)
    return tensor if device.type == "cpu" else tensor.to(device)
