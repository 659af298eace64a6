"""Pruning τ*: a greedy local search on the criterion around the best expression.

Sampled formulas often carry dead weight that fits as well without it: a
subtree that evaluates to zero (``2.718**x - exp(x)``), a factor LM sets to one,
a term another constant can absorb. The BIC already prefers the shorter form —
same fit, fewer nodes — but the policy may never happen to sample it, and an
exact fit stops the search at once (``tol``). So after the search, τ* is
improved the way the criterion that chose it would choose (the description
length by default, or the reward; see :mod:`cadsr_sklearn.scoring.scorer`):

1. Every edit that removes nodes is tried: a subtree (two or more nodes) is
   replaced by one of its children, by the constant token ``c``, or by the
   literal ``1`` (when the library has them) — alone, or after swapping one
   operator for another of the same arity, with the removal at the swapped
   node or one of its children. The swap lets a phase shift go:
   ``cos(u - 1.5708)`` becomes ``sin(u - c)``, LM sets c = 0, and the
   subtraction is removed, leaving ``sin(u)``.
2. Each edited expression has its constants refitted (Levenberg–Marquardt,
   first from the values τ* held for the constants the edit kept, a new ``c``
   at 1, then from fresh starting values) and is scored like every candidate
   of the search.
3. The edit that raises the criterion most is kept; repeat until none does.

Every kept edit removes at least one node, so the search ends after at most
``len(τ*)`` rounds. A round refits a few hundred expressions for a 15-node τ*
(about a thousand for 30 nodes), each from two starts: about an epoch's
constant fitting. Edits the sampler's constraints would reject are not
tried, so the answer stays in the language the policy writes. After an exact
fit (the ``tol`` stop), edits that lose exactness are not taken, whatever the
criterion (a bounded one, such as the BIC with σ² = Var(y), could trade it for
a node).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Iterator, Sequence

from ...expressions.expression import Expression
from ...scoring.scorer import Candidate

__all__ = ["prune"]

_CHUNK = 64  # edits scored between two looks at the clock


def prune(
    best: Candidate,
    score: Callable[[list[Expression]], list[Candidate]],
    admits: Callable[[list[tuple[int, ...]]], Sequence[bool]] | None = None,
    max_loss: float = math.inf,
    deadline: float | None = None,
) -> Candidate:
    """Greedily apply the node-removing edit that most raises the criterion.

    Parameters
    ----------
    best : Candidate
        τ*, with ``expression``, ``criterion`` and ``loss``.
    score : callable
        Maps a list of expressions to candidates (fits constants, scores the
        reward). The search passes its scorer's ``refit``, which starts each fit
        from the constants the edit kept.
    admits : callable, optional
        Maps BFS token sequences to whether the sampler could have drawn them
        (:meth:`Constraints.admits <cadsr_sklearn.sampling.constraints.Constraints.admits>`);
        edits it rejects (``exp(log(x))``, too many constants, …) are not tried.
    max_loss : float, default=inf
        Edits whose training loss exceeds this are not taken. After an exact
        fit (``tol``) it keeps the answer exact whatever the criterion.
    deadline : float, optional
        :func:`time.perf_counter` time after which no more edits are scored;
        the best one scored so far is still taken.

    Returns
    -------
    Candidate
        τ* itself if no edit helps, else the best expression reached.
    """
    current = best
    while True:
        edits = list(_edits(current.expression))
        if admits is not None and edits:
            edits = [e for e, ok in zip(edits, admits([e.tokens for e in edits])) if ok]
        leader, out_of_time = current, False
        # In chunks, so that a deadline is overrun by one chunk at most, not one round.
        for i in range(0, len(edits), _CHUNK):
            if deadline is not None and time.perf_counter() >= deadline:
                out_of_time = True
                break
            for cand in score(edits[i:i + _CHUNK]):
                if cand.loss <= max_loss and cand.criterion > leader.criterion:
                    leader = cand
        if leader is current or out_of_time:
            return leader
        current = leader


def _edits(expression: Expression) -> Iterator[Expression]:
    """Distinct expressions one removal, or one operator swap and one removal, away.

    Each carries the constants of τ* that the edit kept (a new ``c`` holds 1), so
    that its refit can start from them.
    """
    library = expression.library
    prefix = expression.prefix()
    values = iter(expression.prefix_constants().tolist())
    held = [next(values) if t == library.const_id else None for t in prefix]  # per position
    seen = {tuple(prefix)}
    arity = library.arity_by_id
    variants = [(prefix, range(len(prefix)))]
    for i, swapped in _swaps(prefix, library):
        # A swap pays off only with a removal at the swapped node or just below it.
        end = _subtree_end(prefix, i, arity)
        variants.append((swapped, [i] + [a for a, _ in _child_spans(prefix, i, end, arity)]))
    for variant, starts in variants:
        for edited, kept in _removals(variant, held, library, starts):
            if tuple(edited) not in seen:
                seen.add(tuple(edited))
                constants = [v for t, v in zip(edited, kept) if t == library.const_id]
                yield Expression.from_prefix(edited, library, constants)


def _removals(prefix: list[int], held: list, library, starts: Sequence[int]):
    """(preorder sequence, per-position constants) with the subtree at one of ``starts``
    replaced by a child, ``c`` or ``1``."""
    arity = library.arity_by_id
    leaves = [t for t in (library.const_id, library.one_id) if t is not None]
    for start in starts:
        end = _subtree_end(prefix, start, arity)
        if end - start < 2:
            continue
        for a, b in _child_spans(prefix, start, end, arity):
            yield (prefix[:start] + prefix[a:b] + prefix[end:],
                   held[:start] + held[a:b] + held[end:])
        for leaf in leaves:
            value = 1.0 if leaf == library.const_id else None
            yield prefix[:start] + [leaf] + prefix[end:], held[:start] + [value] + held[end:]


def _swaps(prefix: list[int], library) -> Iterator[tuple[int, list[int]]]:
    """(position, preorder sequence) with that operator replaced by another of its arity."""
    same_arity = {1: [int(t) for t in library.unary_ids], 2: [int(t) for t in library.binary_ids]}
    for i, token in enumerate(prefix):
        for other in same_arity.get(library.arity_by_id[token], ()):
            if other != token:
                yield i, prefix[:i] + [other] + prefix[i + 1:]


def _subtree_end(prefix: Sequence[int], start: int, arity: Sequence[int]) -> int:
    """One past the last preorder position of the subtree rooted at ``start``."""
    end, open_slots = start, 1
    while open_slots:
        open_slots += arity[prefix[end]] - 1
        end += 1
    return end


def _child_spans(prefix: Sequence[int], start: int, end: int, arity: Sequence[int]):
    """Preorder spans (a, b) of the children of the node at ``start``."""
    a = start + 1
    while a < end:
        b = _subtree_end(prefix, a, arity)
        yield a, b
        a = b
