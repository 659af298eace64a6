"""Batched breadth-first sampling of expression trees, and teacher-forced re-scoring.

:class:`Sampler` grows a whole batch of trees at once, one BFS node per step
(appendix Algorithm 1): the policy scores node ``t`` of every growing tree from
its key/value cache, the constraint mask sets banned logits to −inf, a token is
drawn from the masked softmax, and the trees that closed drop out of the batch.
The result is a :class:`Batch` — tokens, places, masks and the per-token
log-probability and entropy of the masked distribution.

The training step re-scores a batch with :func:`masked_log_softmax` under the
same (or newer) weights.  Under the same weights it reproduces the sampling-time
log-probabilities (float32 round-off), because both use the same places, the
same masks and the same model.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from typing import NamedTuple, Sequence

import numpy as np
import torch

from .constraints import Constraints
from ..expressions.expression import Expression, is_complete
from ..expressions.library import Library
from .policy import Policy
from .priors import Priors

__all__ = [
    "PAD",
    "Batch",
    "Sampler",
    "masked_log_softmax",
    "token_log_probs",
    "masked_entropy",
    "masked_kl",
    "log_probs_under",
]

#: Token id stored past the end of a tree in :attr:`Batch.tokens`.
PAD = -1


@dataclass(eq=False, repr=False)
class Batch:
    """Sampled (or teacher-forced) trees, padded to T = max_length.

    Attributes
    ----------
    tokens : LongTensor (B, T)
        BFS token ids; :data:`PAD` (−1) past ``lengths``.
    lengths : LongTensor (B,)
        Nodes per tree.
    depth : LongTensor (B, T)
        Depth d of each node (root 1); 0 at padding.
    horizontal : Tensor (B, T)
        Horizontal place h of each node (root 1/2); 0 at padding.
    parent, sibling : LongTensor (B, T)
        Token of each node's parent and left sibling; V (no token) for the root,
        a left or only child, and padding.
    masks : BoolTensor (B, T, V)
        Allowed tokens at each node; all False at padding.
    priors : Tensor (B, T, V)
        Log-prior added to the policy's logits at each node (:mod:`~cadsr_sklearn.sampling.priors`);
        0 where no prior is on and at padding.
    log_probs : Tensor (B, T)
        log p(token) under the masked distribution when sampled; 0 at padding.
    entropies : Tensor (B, T)
        Entropy of the masked distribution; 0 at padding.
    broken : BoolTensor (B,)
        The tree's units masks had to yield somewhere (:mod:`~cadsr_sklearn.units.masks`):
        it is not dimensionally consistent and the scorer will reject it. Always
        False without units.
    """

    tokens: torch.Tensor
    lengths: torch.Tensor
    depth: torch.Tensor
    horizontal: torch.Tensor
    parent: torch.Tensor
    sibling: torch.Tensor
    masks: torch.Tensor
    priors: torch.Tensor
    log_probs: torch.Tensor
    entropies: torch.Tensor
    broken: torch.Tensor

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def __repr__(self) -> str:
        B, T = self.tokens.shape
        return f"Batch(size={B}, max_length={T}, device={self.tokens.device})"

    def __getitem__(self, index) -> "Batch":
        """Rows selected by an index tensor or array, a list of ints or bools, or a slice.

        An int selects one row and keeps the batch axis.
        """
        if isinstance(index, numbers.Integral):
            index = [int(index)]
        if not isinstance(index, (slice, torch.Tensor)):
            index = np.asarray(index)
            index = torch.as_tensor(index if index.size else index.astype(np.int64))
        return Batch(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @staticmethod
    def concat(batches: Sequence["Batch"]) -> "Batch":
        """Stack batches with the same T and V along the batch axis."""
        if not batches:
            raise ValueError("concat needs at least one batch.")
        return Batch(**{f.name: torch.cat([getattr(b, f.name) for b in batches])
                        for f in fields(Batch)})

    def to(self, device: torch.device | str) -> "Batch":
        return Batch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    @property
    def valid(self) -> torch.Tensor:
        """(B, T) bool: position holds a node (not padding)."""
        T = self.tokens.shape[1]
        return torch.arange(T, device=self.tokens.device) < self.lengths.unsqueeze(1)

    def token_lists(self) -> list[tuple[int, ...]]:
        """Each tree's BFS token ids, unpadded."""
        rows = self.tokens.tolist()
        return [tuple(r[:n]) for r, n in zip(rows, self.lengths.tolist())]

    def keys(self) -> list[tuple[int, ...]]:
        """Canonical key of each tree (same as :attr:`Expression.key`)."""
        return self.token_lists()

    def expressions(self, library: Library) -> list[Expression]:
        return [Expression(tokens, library) for tokens in self.token_lists()]


#: Trees whose teacher-forced places, masks and priors a sampler keeps.
_FORCED_KEPT = 4096


class Sampler:
    """Draws constrained expression trees from a policy, breadth-first.

    Parameters
    ----------
    policy : Policy
        Its device is where sampling runs.
    library : Library
    constraints : Constraints
        ``constraints.max_length`` is the padded length T of every batch.
    priors : Priors, optional
        Soft priors added to the logits; none by default.
    """

    def __init__(self, policy: Policy, library: Library, constraints: Constraints,
                 priors: Priors | None = None) -> None:
        if policy.n_tokens != len(library):
            raise ValueError(
                f"The policy scores {policy.n_tokens} tokens but the library has {len(library)}."
            )
        if constraints.library is not library and constraints.library.names != library.names:
            raise ValueError("The constraints were built for another library.")
        if constraints.max_length > policy.max_length:
            raise ValueError(
                f"constraints.max_length ({constraints.max_length}) exceeds the policy's "
                f"max_length ({policy.max_length})."
            )
        self.policy, self.library, self.constraints = policy, library, constraints
        self.priors = priors if priors is not None and priors.active else None
        self._forced: dict[tuple, Batch] = {}  # see teacher_force

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_forced"] = {}  # a cache: not part of a checkpoint
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def device(self) -> torch.device:
        return self.policy.device

    def _empty(self, n: int) -> dict[str, torch.Tensor]:
        T, V, dev = self.constraints.max_length, len(self.library), self.device
        return dict(
            tokens=torch.full((n, T), PAD, dtype=torch.long, device=dev),
            lengths=torch.zeros(n, dtype=torch.long, device=dev),
            depth=torch.zeros(n, T, dtype=torch.long, device=dev),
            horizontal=torch.zeros(n, T, device=dev),
            parent=torch.full((n, T), V, dtype=torch.long, device=dev),
            sibling=torch.full((n, T), V, dtype=torch.long, device=dev),
            masks=torch.zeros(n, T, V, dtype=torch.bool, device=dev),
            priors=torch.zeros(n, T, V, device=dev),
            log_probs=torch.zeros(n, T, device=dev),
            entropies=torch.zeros(n, T, device=dev),
            broken=torch.zeros(n, dtype=torch.bool, device=dev),
        )

    @torch.no_grad()
    def sample(self, n: int, generator: torch.Generator | None = None) -> Batch:
        """Sample ``n`` complete trees (duplicates possible).

        All randomness comes from ``generator`` (the default RNG if None).
        """
        if n < 1:
            raise ValueError(f"n must be ≥ 1, got {n}.")
        policy, dev, units = self.policy, self.device, self.constraints.units
        state = self.constraints.new_state(n, policy.start_token, dev)
        cache = policy.init_cache(n)
        rows = torch.arange(n, device=dev)  # batch row of each growing tree
        out = self._empty(n)
        steps: list[_Step] = []
        for t in range(self.constraints.max_length):
            mask = self.constraints.mask(state)  # (b, V)
            parent, sibling = state.parent[:, t], state.left_sibling()
            logits = policy.step(state.prev_token, state.depth[:, t], state.horizontal[:, t],
                                 t, cache, parent, sibling)  # (b, V)
            prior = self.priors(state) if self.priors is not None else None
            if prior is not None:
                logits = logits + prior
            log_p = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
            probs = log_p.exp()  # (b, V), 0 where banned
            token = _draw(probs, generator)  # (b,)
            entropy = -(probs * log_p.masked_fill(~mask, 0.0)).sum(-1)
            steps.append(_Step(rows, token, log_p.gather(1, token.unsqueeze(1)).squeeze(1),
                               entropy, mask, state.depth[:, t], state.horizontal[:, t], parent,
                               sibling, prior))
            state.advance(token)
            done = state.done
            out["lengths"][rows[done]] = t + 1
            if units is not None:
                out["broken"][rows[done]] = units.broken(state)[done]
            if t + 1 == self.constraints.max_length:
                break
            # Drop closed trees so the model only runs on trees still growing.
            growing = (~done).nonzero().squeeze(1)
            if growing.numel() == 0:
                break
            if growing.numel() < len(rows):
                rows, state, cache = rows[growing], state.select(growing), cache.select(growing)
        # Scatter every step's rows into the padded tensors in one go.
        row = torch.cat([s.rows for s in steps])
        col = torch.cat([torch.full_like(s.rows, t) for t, s in enumerate(steps)])
        for name in _Step._fields[1:]:
            if name != "priors" or self.priors is not None:
                out[name][row, col] = torch.cat([getattr(s, name) for s in steps])
        return Batch(**out)

    def sample_unique(
        self, batch_size: int, oversampling: float = 2, generator: torch.Generator | None = None
    ) -> Batch:
        """Draw ``oversampling · batch_size`` trees and keep the first ``batch_size`` unique.

        When fewer unique trees were drawn, duplicates (in drawing order) fill the
        batch (appendix Algorithm 1). With units, unique trees that broke the
        constraint (:attr:`Batch.broken`, rejected by the scorer) come after the others.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}.")
        if oversampling < 1:
            raise ValueError(f"oversampling must be ≥ 1, got {oversampling}.")
        batch = self.sample(max(batch_size, int(round(oversampling * batch_size))), generator)
        seen: set = set()
        first, broken, rest = [], [], []
        for i, (key, bad) in enumerate(zip(batch.keys(), batch.broken.tolist())):
            (rest if key in seen else broken if bad else first).append(i)
            seen.add(key)
        keep = (first + broken + rest)[:batch_size]
        return batch[torch.as_tensor(keep, dtype=torch.long, device=batch.tokens.device)]

    def teacher_force(self, token_lists: Sequence[Sequence[int]]) -> Batch:
        """Rebuild a :class:`Batch` for given BFS token sequences (replay, hall of fame).

        Places and masks come from the same constraint state machine with the
        tokens forced; log-probabilities and entropies are under the current
        weights.  Raises ValueError for an incomplete or too long tree, or one
        the constraints would not have allowed.

        A tree's places, masks and priors are a function of its tokens alone, so
        they are kept (for the last :data:`_FORCED_KEPT` trees) and only the
        log-probabilities are computed again: the replay buffer is forced every
        epoch, and with units its masks cost as much as a batch's.
        """
        if len(token_lists) == 0:
            raise ValueError("teacher_force needs at least one token sequence.")
        dev = self.device
        keys = [(dev, tuple(int(s) for s in seq)) for seq in token_lists]
        first = {}  # each missing tree's first place in token_lists
        for i, key in enumerate(keys):
            if key not in self._forced:
                first.setdefault(key, i)
        missing = list(first)
        if missing:
            structure = self._force_structure([k[1] for k in missing], list(first.values()))
            for i, key in enumerate(missing):
                self._forced[key] = structure[i]
            while len(self._forced) > _FORCED_KEPT:  # oldest first
                del self._forced[next(iter(self._forced))]
        batch = Batch.concat([self._forced[k] for k in keys])
        with torch.no_grad():
            batch.log_probs, batch.entropies = log_probs_under(self.policy, batch)
        return batch

    def keep_structure(self, batch: Batch) -> None:
        """Keep the places, masks and priors of ``batch``'s trees for :meth:`teacher_force`.

        A sampled batch already holds them (the same function of each tree's tokens that
        forcing computes), so trees that go on to the replay buffer are never forced
        from scratch.
        """
        dev = self.device
        for i, tokens in enumerate(batch.token_lists()):
            key = (dev, tokens)
            if key not in self._forced:
                self._forced[key] = batch[i:i + 1]
        while len(self._forced) > _FORCED_KEPT:  # oldest first
            del self._forced[next(iter(self._forced))]

    def _force_structure(self, token_lists: Sequence[Sequence[int]],
                         positions: Sequence[int]) -> Batch:
        """:meth:`teacher_force` without the log-probabilities: places, masks, priors.
        ``positions`` are the sequences' places in the caller's list (for messages)."""
        T, dev, units = self.constraints.max_length, self.device, self.constraints.units
        n = len(token_lists)
        out = self._empty(n)
        padded = []
        for i, seq in enumerate(token_lists):
            seq = [int(s) for s in seq]
            if len(seq) > T:
                raise ValueError(f"Sequence {positions[i]} has {len(seq)} nodes; max_length "
                                 f"is {T}.")
            known = all(0 <= s < len(self.library) for s in seq)
            if not known or not is_complete(seq, self.library):
                raise ValueError(
                    f"Sequence {positions[i]} {seq} is not one complete BFS tree of this "
                    f"library."
                )
            padded.append(seq + [PAD] * (T - len(seq)))
        tokens = out["tokens"] = torch.tensor(padded, dtype=torch.long, device=dev)
        lengths = out["lengths"] = (tokens != PAD).sum(1)
        none = len(self.library)
        for step in self.constraints.force(tokens, lengths, self.policy.start_token):
            t, state, mask, live = step.t, step.state, step.mask, step.live
            ok = step.allowed | ~live
            if not bool(ok.all()):
                i = int((~ok).nonzero()[0])
                name = self.library.names[int(step.token[i])]
                raise ValueError(
                    f"Sequence {positions[i]}: token {name!r} at BFS position {t} breaks the "
                    f"constraints."
                )
            out["masks"][:, t] = mask & live.unsqueeze(1)
            out["depth"][:, t] = torch.where(live, state.depth[:, t], 0)
            out["horizontal"][:, t] = torch.where(live, state.horizontal[:, t], 0.0)
            out["parent"][:, t] = torch.where(live, state.parent[:, t], none)
            out["sibling"][:, t] = torch.where(live, state.left_sibling(), none)
            last = lengths == t + 1
            if self.priors is not None:
                out["priors"][:, t] = self.priors(state) * live.unsqueeze(1)
            if units is not None:
                out["broken"][last] = units.broken(state)[last]
        return Batch(**out)


class _Step(NamedTuple):
    """One step of sampling: for each tree still growing, what :class:`Batch` keeps at
    this position (fields after ``rows`` named as the batch's)."""

    rows: torch.Tensor  # (b,) batch row of each growing tree
    tokens: torch.Tensor  # (b,) the drawn token
    log_probs: torch.Tensor  # (b,) its log-probability
    entropies: torch.Tensor  # (b,)
    masks: torch.Tensor  # (b, V) admissible tokens
    depth: torch.Tensor  # (b,)
    horizontal: torch.Tensor  # (b,)
    parent: torch.Tensor  # (b,)
    sibling: torch.Tensor  # (b,)
    priors: torch.Tensor | None  # (b, V), or None without priors


def _draw(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One draw per row of ``probs`` (b, V) by inverting the CDF; zero entries never come up.

    Token k is drawn iff cdf[k-1] ≤ u·total < cdf[k], which needs cdf[k] > cdf[k-1],
    i.e. probs[k] > 0.  (One uniform per row: cheaper than Gumbel-max on CPU.)
    """
    cdf = probs.cumsum(dim=-1)  # (b, V)
    gen_device = generator.device if generator is not None else probs.device
    u = torch.rand((probs.shape[0], 1), generator=generator, device=gen_device, dtype=probs.dtype)
    token = (cdf <= u.to(probs.device) * cdf[:, -1:]).sum(dim=-1)  # (b,)
    # u·total can round up to total (p ≈ 2^-24 per row): take the last allowed token.
    overflow = token == probs.shape[1]
    if bool(overflow.any()):
        last = probs.shape[1] - 1 - (probs.flip(-1) > 0).long().argmax(dim=-1)
        token = torch.where(overflow, last, token)
    return token


# ----------------------------------------------------------- re-scoring helpers

def masked_log_softmax(policy: Policy, batch: Batch) -> torch.Tensor:
    """Teacher-forced log-probabilities (B, T, V) of the masked distributions.

    At a node, banned tokens are −inf and the allowed ones sum to probability 1.
    A padding row (no node, nothing allowed) is all 0, like ``Batch.log_probs``
    there, so that ``x * batch.valid`` stays finite.  Differentiable with finite
    gradients: the −inf are filled in after the softmax (their gradient is 0);
    never multiply them by 0 yourself — use :func:`token_log_probs`,
    :func:`masked_entropy` and :func:`masked_kl`, or ``torch.where(mask, log_p, 0)``.
    """
    # Only run the model up to the longest tree; the rest is padding.
    T = batch.tokens.shape[1]
    n = max(int(batch.lengths.max()), 1) if len(batch) else 1
    tokens, depth, horizontal = batch.tokens[:, :n], batch.depth[:, :n], batch.horizontal[:, :n]
    mask = batch.masks[:, :n]
    nodes = batch.valid[:, :n]
    logits = policy(policy.shift_right(tokens), depth, horizontal, nodes,
                    batch.parent[:, :n], batch.sibling[:, :n])  # (B, n, V)
    logits = logits + batch.priors[:, :n]
    live = mask.any(dim=-1, keepdim=True)  # (B, n, 1): the position holds a node
    # Padding rows get every entry in the softmax so that it stays finite.
    log_p = torch.log_softmax(logits.masked_fill(~(mask | ~live), float("-inf")), dim=-1)
    log_p = log_p.masked_fill(~mask & live, float("-inf")).masked_fill(~live, 0.0)
    return torch.nn.functional.pad(log_p, (0, 0, 0, T - n))  # (B, T, V), padding rows 0


def token_log_probs(log_p: torch.Tensor, batch: Batch) -> torch.Tensor:
    """log p of each taken token (B, T) from :func:`masked_log_softmax`; 0 at padding."""
    valid = batch.valid
    index = batch.tokens.clamp(min=0).unsqueeze(-1)
    taken = log_p.masked_fill(~batch.masks, 0.0).gather(-1, index).squeeze(-1)
    return taken.masked_fill(~valid, 0.0)


def masked_entropy(log_p: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy (B, T) of masked distributions; 0 where nothing is allowed (padding)."""
    safe = log_p.masked_fill(~mask, 0.0)
    return -(safe.exp().masked_fill(~mask, 0.0) * safe).sum(-1)


def masked_kl(log_p: torch.Tensor, log_q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """KL(p ‖ q) (B, T) over the allowed tokens; 0 at padding.  NaN-free gradients."""
    lp, lq = log_p.masked_fill(~mask, 0.0), log_q.masked_fill(~mask, 0.0)
    return (lp.exp().masked_fill(~mask, 0.0) * (lp - lq)).sum(-1)


def log_probs_under(policy: Policy, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """(log p of the taken tokens, entropies), both (B, T) with padding 0, under ``policy``."""
    log_p = masked_log_softmax(policy, batch)
    return token_log_probs(log_p, batch), masked_entropy(log_p, batch.masks)
