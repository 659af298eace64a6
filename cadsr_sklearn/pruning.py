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
fraction of one epoch. Edits the sampler's constraints would reject are not
tried, so the answer stays in the language the policy writes. After an exact
fit (the ``tol`` stop), edits that lose exactness are not taken, whatever the
reward (a bounded one, such as the BIC with σ² = Var(y), could trade it for a
node).
"""

from __future__ import annotations

import math
import time
from typing import Callable, Iterator, Sequence

from .expression import Expression

__all__ = ["prune"]


def prune(
    best,
    score: Callable[[list[Expression]], list],
    admits: Callable[[list[tuple[int, ...]]], Sequence[bool]] | None = None,
    max_loss: float = math.inf,
    deadline: float | None = None,
):
    """Greedily apply the node-removing edit that most raises the reward.

    Parameters
    ----------
    best : Candidate
        τ*, with ``expression``, ``reward`` and ``loss``.
    score : callable
        Maps a list of expressions to candidates (fits constants, scores the
        reward), as the search's scorer does.
    admits : callable, optional
        Maps BFS token sequences to whether the sampler could have drawn them
        (:meth:`Constraints.admits <cadsr_sklearn.constraints.Constraints.admits>`);
        edits it rejects (``exp(log(x))``, too many constants, …) are not tried.
    max_loss : float, default=inf
        Edits whose training loss exceeds this are not taken. After an exact
        fit (``tol``) it keeps the answer exact whatever the reward.
    deadline : float, optional
        :func:`time.perf_counter` time after which no new round starts.

    Returns
    -------
    Candidate
        τ* itself if no edit helps, else the best expression reached.
    """
    current = best
    while deadline is None or time.perf_counter() < deadline:
        edits = list(_single_edits(current.expression))
        if admits is not None and edits:
            edits = [e for e, ok in zip(edits, admits([e.tokens for e in edits])) if ok]
        candidates = [c for c in score(edits) if c.loss <= max_loss] if edits else []
        if not candidates:
            return current
        leader = max(candidates, key=lambda c: c.reward)
        if not leader.reward > current.reward:
            return current
        current = leader
    return current


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
