"""Hard constraints on sampling: which tokens a partial tree may take next.

Trees grow breadth-first, one node per step for a whole batch at once.
:class:`TreeState` holds what the rules need about every partial tree — how
many nodes are already committed, the place, parent and slot of the node being
generated, whether a trigonometric operator sits above it, how many constants
were used — and :class:`Constraints` turns that state into a boolean mask
(B, V), ``True`` = allowed.  Masked logits become −inf before sampling
(DSO's split: soft priors that only reweigh the allowed tokens live in
:mod:`cadsr_sklearn.sampling.priors`).

Each rule is a small vectorised function ``rule(constraints, state, allowed)``
that clears the entries it bans; each can be switched off.

* length      — a token of arity ``a`` only if ``committed + a ≤ max_length``,
                so every tree completes within ``max_length`` (always on);
* min_length  — the last open slot may not close the tree short of
                ``min_length`` nodes while some operator is still allowed;
* constants   — at most ``max_constants`` ``c`` tokens;
* constant-only subtrees — a unary's child is not ``c``/``1``; a binary's right
                child is not ``c``/``1`` when its left sibling is (in BFS order
                the left sibling is the previous token); the root is not ``c``/``1``.
                Without a ``c`` token this also bans ``1 + 1``: lifting it there
                (so that 2 can be written) was measured and did not pay, since the
                search then builds constants such as ``1 + exp(-1)`` instead of laws
                (see the tuning guide);
* inverse     — a child is not its parent's inverse (exp∘log, sqrt∘square, …);
* trig        — no trigonometric operator below another one;
* nesting     — the user's ``nested_constraints`` (PySR's): at most ``n`` of an
                inner operator on any path below an outer one, counted per node
                from its ancestors. A limit given for a pair of trigonometric
                operators replaces the trig rule's ban for that pair (the other
                pairs stay banned);
* required    — the user's ``required_features``: each must appear in every tree.
                A token is banned when, after it, the open slots and the nodes
                left under ``max_length`` could no longer hold every required
                feature still missing (which also bans closing the tree early);
* units       — with the data's physical units, every formula is dimensionally
                consistent (:mod:`cadsr_sklearn.units.masks`).

A variable is never banned before ``required`` except by ``min_length``, which
yields when no operator is left, and ``required`` never bans a missing required
feature while the tree can still hold the others; ``units`` comes after them and
yields where it would leave no token: so every mask allows at least one token
(see :func:`required_features_rule`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

from ..expressions.library import OPERATOR_ALIASES, Library
from ..expressions.positions import child_position
from ..units.masks import UnitTables, UnitTracker
from ..units.rule import UnitsRule

__all__ = ["TreeState", "Constraints", "ForcedStep", "NestingLimit", "nesting_limits"]


@dataclass(frozen=True)
class NestingLimit:
    """At most ``limit`` ``inner`` operators on any path below an ``outer`` one.

    ``outer == inner`` limits self-nesting: ``exp`` with limit 1 allows
    ``exp(exp(x))``, not ``exp(exp(exp(x)))`` (PySR's ``nested_constraints``).
    """

    outer: str  # operator names, PySR's aliases resolved
    inner: str
    limit: int


def nesting_limits(nested_constraints: Mapping[str, Mapping[str, int]] | None,
                   operators: Sequence[str]) -> tuple[NestingLimit, ...]:
    """The limits of ``nested_constraints`` (``{outer: {inner: n}}``), checked against
    the names of a search's ``operators``: ValueError for an unknown operator, a
    limit that is not an integer ≥ 0, or a value of the wrong shape."""
    if nested_constraints is None:
        return ()

    def canonical(name, where: str) -> str:
        name_ = OPERATOR_ALIASES.get(name, name) if isinstance(name, str) else name
        if name_ not in operators:
            raise ValueError(f"nested_constraints names {name!r} {where}, which is not one "
                             f"of the operators {list(operators)}.")
        return name_

    if not isinstance(nested_constraints, Mapping):
        raise ValueError("nested_constraints must be a dict such as {'sin': {'cos': 0}}, "
                         f"got {nested_constraints!r}.")
    limits: dict[tuple[str, str], int] = {}
    for outer, inner_limits in nested_constraints.items():
        outer_name = canonical(outer, "as an outer operator")
        if not isinstance(inner_limits, Mapping):
            raise ValueError(f"nested_constraints[{outer!r}] must be a dict of inner operator "
                             f"→ limit, such as {{'cos': 0}}, got {inner_limits!r}.")
        for inner, limit in inner_limits.items():
            inner_name = canonical(inner, f"below {outer!r}")
            if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
                raise ValueError(f"nested_constraints[{outer!r}][{inner!r}] must be an "
                                 f"integer ≥ 0, got {limit!r}.")
            limits[outer_name, inner_name] = int(limit)
    return tuple(NestingLimit(o, i, n) for (o, i), n in limits.items())


@dataclass(frozen=True)
class ForcedStep:
    """One node of trees replayed through the rules (:meth:`Constraints.force`)."""

    t: int  # the node's BFS position
    state: "TreeState"  # the trees before node t's token is taken
    mask: torch.Tensor  # (n, V) bool: what the rules allow at node t
    token: torch.Tensor  # (n,) the token given there (a terminal where the tree has ended)
    live: torch.Tensor  # (n,) bool: the tree has a node t

    @property
    def allowed(self) -> torch.Tensor:
        """(n,) bool: the rules allow the token given."""
        return self.mask.gather(1, self.token.unsqueeze(1)).squeeze(1)


class TreeState:
    """Partial BFS trees of a batch, advanced one node per step.

    Per-node arrays have ``max_length + 1`` columns; the last is a sink for the
    children that do not exist (terminals, a unary's right slot).

    Attributes
    ----------
    t : int
        Index of the node being generated (same for every row).
    n_nodes : LongTensor (B,)
        Committed nodes: 1 + sum of the arities generated so far.  A tree is
        complete when ``n_nodes == t``.
    n_constants : LongTensor (B,)
    prev_token : LongTensor (B,)
        Token of node ``t - 1`` (``start_token`` at ``t = 0``).
    depth, horizontal : Tensor (B, T+1)
        Dual index (d, h) of each node, known once its parent is generated.
    parent : LongTensor (B, T+1)
        Parent token of each node; ``V`` (no token) for the root.
    slot : LongTensor (B, T+1)
        0 = left/only child, 1 = right child.
    trig_above : BoolTensor (B, T+1)
        Whether a trigonometric operator is an ancestor of the node.
    units : UnitTracker or None
        Each node's required and known physical units, when the search has units.
    missing : BoolTensor (B, V) or None
        The required features' tokens not yet in the tree (None without any).
    nesting : LongTensor (B, T+1, P) or None
        For each of the P nesting limits: how many of its inner operator lie
        between the node and its limit's topmost outer ancestor, −1 when it has
        no such ancestor (None without limits).
    """

    def __init__(self, batch_size: int, max_length: int, library: Library,
                 device: torch.device | str = "cpu", start_token: int | None = None,
                 unit_tables: UnitTables | None = None,
                 required: torch.Tensor | None = None, nesting_outer: torch.Tensor | None = None,
                 nesting_inner: torch.Tensor | None = None) -> None:
        B, T, V = batch_size, max_length, len(library)
        self.library, self.max_length = library, max_length
        self.arities = torch.as_tensor(library.arities, device=device)  # (V,)
        is_trig = torch.zeros(V, dtype=torch.bool, device=device)
        is_trig[torch.as_tensor(library.trig_ids, dtype=torch.long, device=device)] = True
        self.is_trig = is_trig
        self.const_id = library.const_id
        self._slots = torch.arange(2, device=device).unsqueeze(0)  # (1, 2)
        self.t = 0
        self.n_nodes = torch.ones(B, dtype=torch.long, device=device)
        self.n_constants = torch.zeros(B, dtype=torch.long, device=device)
        self.prev_token = torch.full((B,), V if start_token is None else start_token,
                                     dtype=torch.long, device=device)
        self.depth = torch.zeros(B, T + 1, dtype=torch.long, device=device)
        self.depth[:, 0] = 1
        self.horizontal = torch.zeros(B, T + 1, device=device)
        self.horizontal[:, 0] = 0.5
        self.parent = torch.full((B, T + 1), V, dtype=torch.long, device=device)
        self.slot = torch.zeros(B, T + 1, dtype=torch.long, device=device)
        self.trig_above = torch.zeros(B, T + 1, dtype=torch.bool, device=device)
        self.units = None if unit_tables is None else UnitTracker(unit_tables, B, T)
        # required (V,) bool: the required features' tokens
        self.missing = None if required is None else required.expand(B, V).clone()
        # (V, P) bool each: token v is nesting limit p's outer / inner operator
        self.nesting_outer, self.nesting_inner, self.nesting = nesting_outer, nesting_inner, None
        if nesting_outer is not None:
            P = nesting_outer.shape[1]
            self.nesting = torch.full((B, T + 1, P), -1, dtype=torch.long, device=device)

    def __len__(self) -> int:
        return self.n_nodes.shape[0]

    @property
    def done(self) -> torch.Tensor:
        """(B,) bool: the tree has no open slot left."""
        return self.n_nodes == self.t

    def advance(self, tokens: torch.Tensor) -> None:
        """Append node ``t`` = ``tokens`` (B,) to every tree and place its children."""
        t, sink = self.t, self.max_length
        arity = self.arities[tokens]  # (B,)
        d, h = self.depth[:, t], self.horizontal[:, t]
        trig = self.trig_above[:, t] | self.is_trig[tokens]
        # BFS: node t's children are numbered from n_nodes (= 1 + arities before t);
        # absent children (terminals, a unary's right slot) go to the sink column.
        first = self.n_nodes.unsqueeze(1) + self._slots  # (B, 2)
        col = torch.where(arity.unsqueeze(1) > self._slots, first, sink)
        if self.units is not None:
            self.units.advance(t, tokens, self.parent[:, t], self.slot[:, t], col)
        child_depth, child_h = child_position(d.unsqueeze(1), h.unsqueeze(1), self._slots)
        child_depth = child_depth.expand(-1, 2)  # (B, 2)
        self.depth.scatter_(1, col, child_depth)
        self.horizontal.scatter_(1, col, child_h)
        self.parent.scatter_(1, col, tokens.unsqueeze(1).expand(-1, 2))
        self.slot.scatter_(1, col, self._slots.expand_as(col))
        self.trig_above.scatter_(1, col, trig.unsqueeze(1).expand(-1, 2))
        if self.missing is not None:
            self.missing.scatter_(1, tokens.unsqueeze(1), False)
        if self.nesting is not None:
            here = self.nesting[:, t]  # (B, P)
            # Below the topmost outer ancestor, count the inner operators; the first
            # outer operator starts the count at 0 (it is not "below" itself).
            below = torch.where(here >= 0, here + self.nesting_inner[tokens],
                                torch.where(self.nesting_outer[tokens], 0, -1))  # (B, P)
            P = here.shape[1]
            self.nesting.scatter_(1, col.unsqueeze(2).expand(-1, -1, P),
                                  below.unsqueeze(1).expand(-1, 2, -1))
        self.n_nodes = self.n_nodes + arity
        if self.const_id is not None:
            self.n_constants = self.n_constants + (tokens == self.const_id)
        self.prev_token = tokens
        self.t += 1

    def left_sibling(self) -> torch.Tensor:
        """(B,) token of node ``t``'s left sibling, V (no token) for a root or left child.

        In BFS order a right child comes right after its left sibling.
        """
        none = torch.full_like(self.prev_token, len(self.arities))
        return torch.where(self.slot[:, self.t] == 1, self.prev_token, none)

    def select(self, rows: torch.Tensor) -> "TreeState":
        """A state holding only the given rows (e.g. the trees still growing)."""
        new = object.__new__(TreeState)
        new.__dict__.update(self.__dict__)
        for name in ("n_nodes", "n_constants", "prev_token", "depth", "horizontal",
                     "parent", "slot", "trig_above"):
            setattr(new, name, getattr(self, name)[rows])
        if self.units is not None:
            new.units = self.units.select(rows)
        for name in ("missing", "nesting"):  # None when the rule is off
            if getattr(self, name) is not None:
                setattr(new, name, getattr(self, name)[rows])
        return new


# --------------------------------------------------------------------- rules
# Each rule clears (in place) the entries of ``allowed`` (B, V) that it bans.

def length_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """Every committed node must fit: n_nodes + arity ≤ max_length (terminals always fit)."""
    allowed &= (s.n_nodes.unsqueeze(1) + c.arities) <= c.max_length


def max_constants_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """At most ``max_constants`` ``c`` tokens per tree."""
    allowed[:, c.library.const_id] &= s.n_constants < c.max_constants


def constant_subtree_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """No subtree made only of ``c``/``1``: it is a constant that the fit could absorb."""
    t = s.t
    parent = s.parent[:, t]
    if t == 0:
        bad = torch.ones_like(parent, dtype=torch.bool)  # the root alone would be constant
    else:
        only_child = c.arities_ext[parent] == 1
        right_of_constant = (s.slot[:, t] == 1) & c.is_constant_like[s.prev_token]
        bad = only_child | right_of_constant
    allowed &= ~(bad.unsqueeze(1) & c.is_constant_like)


def inverse_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """A child is not its parent's inverse (exp(log(·)), sqrt(square(·)), …)."""
    allowed &= ~c.inverse_table[s.parent[:, s.t]]


def trig_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """No trigonometric operator anywhere below another one."""
    allowed &= ~(s.trig_above[:, s.t].unsqueeze(1) & c.is_trig)


def units_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """Only tokens that can give node ``t`` the units it needs (yields where none can)."""
    c.units.restrict(s, c.max_length, allowed)


def nesting_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """At most ``limit`` inner operators on any path below an outer one (``nested_constraints``)."""
    full = s.nesting[:, s.t] >= c.nesting_limit  # (B, P): limit p reached at node t
    # (B, 1, P) & (1, V, P) -> (B, V): token v is the inner operator of a full limit
    allowed &= ~(full.unsqueeze(1) & c.nesting_inner.unsqueeze(0)).any(dim=2)


def required_features_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """Every required feature ends up in the tree (``required_features``).

    After token v at node t the tree has ``open`` slots still to fill and
    ``room`` nodes left under ``max_length``. Each slot can become a leaf, and
    each binary operator adds one leaf for two nodes, so at most ``open +
    room // 2`` leaves are still to come (``open`` without binary operators):
    v is banned when fewer than the required features then missing, or when v
    closes the tree (``open = 0``) with one still missing.

    Never empty while the state is feasible (the sampler keeps it so): a missing
    required feature at node t is feasible whenever the state before it is, and
    no rule before it bans a variable (the units rule, which does, runs after it
    and yields rather than empty the mask; ``min_length`` runs last, and bans
    terminals only where an operator, then feasible, is left). The bound assumes
    some binary operator is allowed at every slot: :class:`Constraints` refuses
    nesting limits that cap every binary operator when two or more features
    are required.
    """
    n_after = s.n_nodes.unsqueeze(1) + c.arities  # (B, V) committed nodes after v
    open_after = n_after - (s.t + 1)  # (B, V)
    leaves = open_after + (c.max_length - n_after) // 2 if c.has_binary else open_after
    missing_after = s.missing.sum(dim=1, keepdim=True) - s.missing.long()  # (B, V)
    allowed &= (missing_after == 0) | ((open_after >= 1) & (leaves >= missing_after))


def min_length_rule(c: "Constraints", s: TreeState, allowed: torch.Tensor) -> None:
    """Ban terminals in the last open slot while the tree has < min_length nodes.

    Runs last: it yields (allows terminals) where the other rules left no operator.
    """
    t = s.t
    short = (s.n_nodes == t + 1) & (t + 1 < c.min_length)  # (B,)
    operator_left = (allowed & ~c.is_terminal).any(dim=1)
    allowed &= ~((short & operator_left).unsqueeze(1) & c.is_terminal)


Rule = Callable[["Constraints", TreeState, torch.Tensor], None]


class Constraints:
    """Hard sampling constraints for one library.

    Parameters
    ----------
    library : Library
    max_length : int
        Most nodes in a tree (the paper's "max depth 32" is a node count).
    max_constants : int or None
        Most ``c`` tokens in a tree; None switches it off. A search's is its
        ``max_constants`` held to its rows (:func:`~.scorer.fittable_constants`).
    min_length : int, default 2
        Fewest nodes, honoured while some operator fits; 1 switches it off.
    no_constant_subtrees, no_inverse, no_nested_trig : bool, default True
        Switch the corresponding rule.
    units : UnitsRule or None, default None
        The physical units of the data (:class:`~cadsr_sklearn.units.rule.UnitsRule`):
        every formula dimensionally consistent.
    nested_constraints : mapping of str to (mapping of str to int), optional
        ``{outer: {inner: n}}``: at most ``n`` ``inner`` operators on any path
        below an ``outer`` one (PySR's ``nested_constraints``; operator names
        of this library, PySR's binary aliases accepted). With
        ``no_nested_trig``, a pair of trigonometric operators given here takes
        its limit from here instead of the ban.
    required_features : sequence of int, optional
        Columns of ``X`` that every tree must contain.
    """

    def __init__(
        self,
        library: Library,
        *,
        max_length: int,
        max_constants: int | None,
        min_length: int = 2,
        no_constant_subtrees: bool = True,
        no_inverse: bool = True,
        no_nested_trig: bool = True,
        units: UnitsRule | None = None,
        nested_constraints: Mapping[str, Mapping[str, int]] | None = None,
        required_features: Sequence[int] = (),
    ) -> None:
        if not isinstance(max_length, (int, np.integer)) or max_length < 1:
            raise ValueError(f"max_length must be an integer ≥ 1, got {max_length!r}.")
        if not isinstance(min_length, (int, np.integer)) or not 1 <= min_length <= max_length:
            raise ValueError(
                f"min_length must be an integer in [1, max_length={max_length}], "
                f"got {min_length!r}."
            )
        if max_constants is not None and (
            not isinstance(max_constants, (int, np.integer)) or max_constants < 0
        ):
            raise ValueError(
                f"max_constants must be None or an integer ≥ 0, got {max_constants!r}."
            )
        self.library = library
        self.max_length, self.min_length = int(max_length), int(min_length)
        self.max_constants = None if max_constants is None else int(max_constants)
        self.no_constant_subtrees = bool(no_constant_subtrees)
        self.no_inverse = bool(no_inverse)
        self.no_nested_trig = bool(no_nested_trig)
        self.units = units

        self.nesting_limits = self._nesting_limits(nested_constraints)
        self.required_features = self._required_features(required_features)

        rules: list[Rule] = [length_rule]
        if self.max_constants is not None and library.const_id is not None:
            rules.append(max_constants_rule)
        if self.no_constant_subtrees and len(library.constant_like_ids):
            rules.append(constant_subtree_rule)
        if self.no_inverse and library.inverse_pairs:
            rules.append(inverse_rule)
        if self.no_nested_trig and len(library.trig_ids) and not self._trig_in_nesting:
            rules.append(trig_rule)
        if self.nesting_limits:
            rules.append(nesting_rule)
        if self.required_features:
            rules.append(required_features_rule)  # after every rule that bans operators
        if units is not None:
            # after the required features: where the units leave none of the tokens those
            # allow, the units rule yields (the tree is marked and rejected by the final
            # check), so no rule empties a mask and a required feature is never dropped
            rules.append(units_rule)
        if self.min_length > 1:
            rules.append(min_length_rule)  # must stay last
        self.rules = rules
        self._device: torch.device | None = None
        self.to("cpu")

    def _nesting_limits(self, nested_constraints) -> tuple[NestingLimit, ...]:
        """The checked limits of ``nested_constraints``, with the trig rule's bans folded in
        when the user gave a limit for a pair of trigonometric operators."""
        lib = self.library
        limits = nesting_limits(nested_constraints,
                                [lib.names[i] for i in (*lib.binary_ids, *lib.unary_ids)])
        trig = [lib.names[i] for i in lib.trig_ids]
        given = {(limit.outer, limit.inner) for limit in limits}
        self._trig_in_nesting = self.no_nested_trig and any(
            o in trig and i in trig for o, i in given)
        if self._trig_in_nesting:
            # The user's limits on trig pairs replace the blanket ban for those pairs only.
            limits += tuple(NestingLimit(o, i, 0) for o in trig for i in trig
                            if (o, i) not in given)
        return limits

    def _required_features(self, required_features: Sequence[int]) -> tuple[int, ...]:
        """The checked feature columns every tree must hold."""
        lib = self.library
        required = tuple(int(f) for f in required_features)
        bad = [f for f in required if not 0 <= f < lib.n_features]
        if bad:
            raise ValueError(f"required_features {bad} are not columns of X "
                             f"(0..{lib.n_features - 1}).")
        if len(set(required)) != len(required):
            raise ValueError(f"required_features lists a feature more than once: {list(required)}.")
        m = len(required)
        if m > 1 and not len(lib.binary_ids):
            raise ValueError(f"{m} required features cannot all fit in one tree without a "
                             "binary operator: a tree of unary operators has one leaf.")
        if 2 * m - 1 > self.max_length:
            raise ValueError(f"{m} required features need trees of at least {2 * m - 1} nodes "
                             f"(a binary operator joins two), but max_length is "
                             f"{self.max_length}.")
        capped = {limit.inner for limit in self.nesting_limits}
        if m > 1 and all(lib.names[b] in capped for b in lib.binary_ids):
            raise ValueError(
                f"nested_constraints limits every binary operator below some operator, so a "
                f"tree could run out of places for the {m} required features; leave one "
                "binary operator unlimited, or require fewer features.")
        return required

    def to(self, device: torch.device | str) -> "Constraints":
        """Move the lookup tables to ``device`` (the sampler does this for you)."""
        device = torch.device(device)
        if device == self._device:
            return self
        lib, V = self.library, len(self.library)
        self.arities = torch.as_tensor(lib.arities, device=device)  # (V,)
        # Parent-indexed tables have a row V for "no parent" (the root).
        self.arities_ext = torch.cat([self.arities, self.arities.new_zeros(1)])  # (V+1,)
        def flag(ids) -> torch.Tensor:  # (V,) bool: token id is in ids
            out = torch.zeros(V, dtype=torch.bool, device=device)
            out[torch.as_tensor(np.asarray(ids, dtype=np.int64), device=device)] = True
            return out

        self.is_terminal = self.arities == 0
        self.is_constant_like = flag(lib.constant_like_ids)
        self.is_trig = flag(lib.trig_ids)
        inverse = torch.zeros(V + 1, V, dtype=torch.bool, device=device)
        for parent, child in lib.inverse_pairs:
            inverse[parent, child] = True
        self.inverse_table = inverse
        self.unit_tables = None if self.units is None else self.units.tables(lib, device)
        self.has_binary = bool(len(lib.binary_ids))
        P = len(self.nesting_limits)
        self.nesting_outer = torch.zeros(V, P, dtype=torch.bool, device=device)  # (V, P)
        self.nesting_inner = torch.zeros(V, P, dtype=torch.bool, device=device)  # (V, P)
        for p, limit in enumerate(self.nesting_limits):
            self.nesting_outer[lib.index(limit.outer), p] = True
            self.nesting_inner[lib.index(limit.inner), p] = True
        self.nesting_limit = torch.tensor([limit.limit for limit in self.nesting_limits],
                                          dtype=torch.long, device=device)  # (P,)
        self.is_required = flag(lib.variable_ids[list(self.required_features)])  # (V,)
        self._device = device
        return self

    def __repr__(self) -> str:
        names = ", ".join(r.__name__ for r in self.rules)
        return f"Constraints(max_length={self.max_length}, rules=[{names}])"

    def new_state(self, batch_size: int, start_token: int | None = None,
                  device: torch.device | str = "cpu") -> TreeState:
        """Empty trees (only the root's place is known)."""
        self.to(device)
        return TreeState(batch_size, self.max_length, self.library, device, start_token,
                         self.unit_tables,
                         required=self.is_required if self.required_features else None,
                         nesting_outer=self.nesting_outer if self.nesting_limits else None,
                         nesting_inner=self.nesting_inner if self.nesting_limits else None)

    def force(self, tokens: torch.Tensor, lengths: torch.Tensor,
              start_token: int | None = None,
              rules: Sequence[Rule] | None = None) -> Iterator[ForcedStep]:
        """Replay the rules node by node over given trees, as if each were being sampled.

        ``tokens`` (n, T) holds BFS token ids (anything past ``lengths`` (n,)). Each step
        yields, before node ``t``'s token is taken, the state, the mask of the rules and
        the token; a tree that has ended takes a terminal there, so that its state stays
        consistent. The one way trees made outside the sampler meet the rules: forced
        re-scoring (:meth:`~cadsr_sklearn.sampling.sampler.Sampler.teacher_force`), pruning's
        edits (:meth:`admits`) and a user's guesses. ``rules``: those to replay (by default
        all of them).
        """
        state = self.new_state(len(tokens), start_token, tokens.device)
        filler = int(self.library.variable_ids[0])
        for t in range(int(lengths.max()) if len(lengths) else 0):
            live = lengths > t
            token = torch.where(live, tokens[:, t], filler)
            yield ForcedStep(t, state, self.mask(state, rules), token, live)
            state.advance(token)

    def admits(self, token_lists: Sequence[Sequence[int]], *,
               as_answers: bool = False) -> np.ndarray:
        """Whether each complete BFS token sequence obeys every rule: bool (n,).

        The rules are replayed node by node (:meth:`force`); for expressions built
        outside the sampler (pruning). ``as_answers``: judged as answers, not as draws,
        without the rules that only spare the sampler draws (a constant-only subtree, which
        a constant fit absorbs; a tree shorter than ``min_length``): ``y = c`` is the
        answer every other must beat (the baselines).
        """
        rules = [r for r in self.rules
                 if not (as_answers and r in (constant_subtree_rule, min_length_rule))]
        n = len(token_lists)
        ok = np.array([0 < len(seq) <= self.max_length for seq in token_lists], dtype=bool)
        if not ok.any():
            return ok
        device = self._device
        lengths = torch.tensor([len(seq) if fits else 0 for seq, fits in zip(token_lists, ok)],
                               device=device)
        tokens = torch.zeros(n, self.max_length, dtype=torch.long, device=device)
        for i, seq in enumerate(token_lists):
            if ok[i]:
                tokens[i, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
        allowed_so_far = torch.as_tensor(ok, device=device)
        for step in self.force(tokens, lengths, rules=rules):
            allowed_so_far &= step.allowed | ~step.live
        return allowed_so_far.cpu().numpy()

    def mask(self, state: TreeState, rules: Sequence[Rule] | None = None) -> torch.Tensor:
        """Allowed tokens for node ``state.t`` of every tree by ``rules`` (by default all
        of them): bool (B, V)."""
        if state.t >= self.max_length:
            raise ValueError(f"No node {state.t} in trees of at most {self.max_length} nodes.")
        allowed = torch.ones(len(state), len(self.library), dtype=torch.bool,
                             device=state.n_nodes.device)
        for rule in self.rules if rules is None else rules:
            rule(self, state, allowed)
        return allowed
