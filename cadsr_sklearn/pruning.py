"""Pruning τ*: a greedy local search on the reward around the best expression.

Sampled formulas often carry dead weight that fits as well without it: a
subtree that evaluates to zero (``2.718**x - exp(x)``), a factor LM sets to one,
a term another constant can absorb. The BIC already prefers the shorter form —
same fit, fewer nodes — but the policy may never happen to sample it, and an
exact fit stops the search at once (``tol``). So after the search, τ* is
improved the way the reward itself would choose:

1. Every single edit that removes nodes is tried: a subtree (two or more nodes)
   is replaced by one of its children, by the constant token ``c``, or by the
   literal ``1`` (when the library has them).
2. Each edited expression has its constants refitted (Levenberg–Marquardt, from
   fresh starting values) and is scored with the same reward as the search.
3. The edit that raises the reward most is kept; repeat until none does.

Every kept edit removes at least one node, so the search ends after at most
``len(τ*)`` rounds. It scores a few hundred expressions for a 30-node τ*, a
fraction of one epoch. An exact fit stays exact: dropping the fit bonus of
an exact fit costs far more reward than any node saves.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence

from .expression import Expression

__all__ = ["prune"]


def prune(
    best,
    score: Callable[[list[Expression]], list],
    max_constants: int | None = None,
):
    """Greedily apply the node-removing edit that most raises the reward.

    Parameters
    ----------
    best : Candidate
        τ*, with ``expression`` and ``reward``.
    score : callable
        Maps a list of expressions to candidates (fits constants, scores the
        reward), as the search's scorer does.
    max_constants : int or None
        Edits that would hold more ``c`` tokens than this are not tried.

    Returns
    -------
    Candidate
        τ* itself if no edit helps, else the best expression reached.
    """
    current = best
    while True:
        edits = [e for e in _single_edits(current.expression)
                 if max_constants is None or e.n_constants <= max_constants]
        if not edits:
            return current
        leader = max(score(edits), key=lambda c: c.reward)
        if not leader.reward > current.reward:
            return current
        current = leader


def _single_edits(expression: Expression) -> Iterator[Expression]:
    """Expressions one edit away: a subtree replaced by a child, ``c`` or ``1``."""
    library = expression.library
    prefix = expression.prefix()
    leaves = [t for t in (library.const_id, library.one_id) if t is not None]
    seen = {tuple(prefix)}
    for start in range(len(prefix)):
        end = _subtree_end(prefix, start, library._arity_list)
        if end - start < 2:
            continue
        replacements = [prefix[a:b] for a, b in _child_spans(prefix, start, end, library._arity_list)]
        replacements += [[leaf] for leaf in leaves]
        for replacement in replacements:
            edited = prefix[:start] + replacement + prefix[end:]
            if tuple(edited) not in seen:
                seen.add(tuple(edited))
                yield Expression.from_prefix(edited, library)


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
