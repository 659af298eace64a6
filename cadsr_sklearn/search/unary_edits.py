"""Unary edits of the best formulas: every one-node change of a unary operator, proposed
each epoch.

A law such as ``asin(n*sin(theta2))`` or ``n_rho*mom*tanh(mom*B/(kb*T))`` is one node away
from a formula the search writes early and keeps: ``n*sin(theta2)`` and
``n_rho*mom**2*B/(kb*T)`` are its first-order approximations, and they fit well enough
that the policy's risk-seeking update holds on to them. Writing the operator above them
is a single edit, but the policy must write the whole tree again to make it, and the
genetic stage's insertion mutation hits that one place and that one operator among many
at random. Each epoch (:class:`UnaryEdits`) takes instead every edit of one unary node
of the ``unary_edits`` formulas of highest reward among τ*, the replay buffer and the
epoch's samples, leaving out τ* where an edit wrote it (edits of edits grow chains of
operators that fit the noise):

- each unary operator of the library above each sub-tree that holds a feature;
- each unary node replaced by each other unary operator;
- each unary node removed (its argument in its place).

An edit the sampler could not have written (length, the hard constraints, the units) is
left out; the others are fitted and scored by the search's scorer and its cache, as the
policy's samples are, so that a formula that stays among the best costs its edits once
(and ``n_evaluations`` counts only what is scored). Every edit scored can become τ* or join
the hall of fame, and from there the answer; none enters the selection that trains the
policy. Measured (``docs/experiments/genetic.md``, "Unary edits"): edits selected beside the
policy's samples when they beat the formula they came from gained the laws above but lost
more: on noisy data an edit of a long formula that fits a little more noise also beats it,
and the policy trained on such edits learned to write chains of unary operators.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Iterator

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..scoring.scorer import Candidate
from ..settings import TrainingSettings
from .genetic import subtree_end
from .proposers import UNARY_EDIT, Proposal

if TYPE_CHECKING:  # the loop's record of a search; it imports the proposers
    from .training import SearchParts

__all__ = ["UnaryEdits", "unary_edits"]


def unary_edits(prefix: list[int], library: Library) -> Iterator[list[int]]:
    """Each one-node unary edit of the preorder tree ``prefix`` (preorder too), once:
    ``u`` above ``u(x)`` is ``u`` above ``x``."""
    arity, unary = library.arity_by_id, [int(u) for u in library.unary_ids]
    is_feature = set(int(v) for v in library.variable_ids)
    seen: set[tuple[int, ...]] = set()

    def edits() -> Iterator[list[int]]:
        for i, token in enumerate(prefix):
            end = subtree_end(prefix, i, arity)
            if any(t in is_feature for t in prefix[i:end]):
                for u in unary:  # u above the sub-tree at i
                    yield prefix[:i] + [u] + prefix[i:]
            if arity[token] == 1:
                for u in unary:  # another operator in its place
                    if u != token:
                        yield prefix[:i] + [u] + prefix[i + 1:]
                yield prefix[:i] + prefix[i + 1:]  # removed: its argument in its place

    for edit in edits():
        if tuple(edit) not in seen:
            seen.add(tuple(edit))
            yield edit


class UnaryEdits:
    """The unary-edit proposer (see the module's docstring)."""

    origin = UNARY_EDIT

    def __init__(self, library: Library) -> None:
        self.library = library

    def active(self, config: TrainingSettings) -> bool:
        return config.unary_edits > 0 and len(self.library.unary_ids) > 0

    def propose(self, search: "SearchParts", earlier: list[Proposal]) -> Proposal:
        start = time.perf_counter()
        sources = self._sources(search, earlier, search.config.unary_edits)
        edits = self._admitted_edits(search, sources)
        # n_evaluations counts what is scored: the edits of a formula that stays among the
        # best are in the scorer's cache from an earlier epoch
        new = sum(e.key not in search.scorer.cache for e in edits)
        candidates = search.scorer(edits) if edits else []
        # kept out of the selection: the policy is not trained on them (see the module's
        # docstring); an edit reaches the answer as τ* or through the hall of fame
        return Proposal(self.origin, [], also_scored=candidates, evaluations=new,
                        seconds=time.perf_counter() - start)

    @staticmethod
    def _sources(search: "SearchParts", earlier: list[Proposal], n: int) -> list[Candidate]:
        """The ``n`` best distinct formulas so far that no edit wrote: τ*, the replay
        buffer's and this epoch's, by reward. The best change slowly, so their edits are
        mostly in the scorer's cache already."""
        best = search.state.best
        pool = sorted([c for p in earlier for c in p.candidates] + search.state.replay
                      + ([best] if best is not None else []), key=lambda c: -c.reward)
        # an edit that became τ* is not edited again: edits of edits grew chains of
        # operators on large tables (tanh(tanh(tanh(v))) at 100 000 rows), one node a
        # time, each fitting a little more of the noise
        pool = [c for c in pool if c.origin != UNARY_EDIT]
        sources: dict[tuple, Candidate] = {}
        for cand in pool:
            if len(sources) == n or not math.isfinite(cand.reward):
                break
            sources.setdefault(cand.expression.key, cand)
        return list(sources.values())

    def _admitted_edits(self, search: "SearchParts", sources: list[Candidate]
                        ) -> list[Expression]:
        """The distinct edits of ``sources`` the sampler could have written, not among the
        sources."""
        lib, seen = self.library, {s.expression.key for s in sources}
        constraints = search.sampler.constraints
        edits = []
        for source in sources:
            for prefix in unary_edits(source.expression.prefix(), lib):
                if len(prefix) > constraints.max_length:
                    continue
                edit = Expression.from_prefix(prefix, lib)
                if edit.key not in seen:
                    seen.add(edit.key)
                    edits.append(edit)
        if not edits:
            return []
        admitted = constraints.admits([e.tokens for e in edits])
        keep = [j for j, ok in enumerate(admitted)
                if ok and (constraints.units is None or constraints.units.consistent(edits[j]))]
        return [edits[j] for j in keep]
