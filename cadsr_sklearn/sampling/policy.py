"""The policy: a small decoder-only transformer over BFS token sequences.

At step ``t`` the model reads the previous token (a START token at ``t = 0``)
and the place of the node it is about to generate, and outputs logits over the
library's tokens for that node.  Concretely, position ``t`` of the input is::

    x_t = Embed(token_{t-1}) + PE(node t)        # token_{-1} = START

With ``parent_sibling=True`` it also reads the tokens of the node's parent and
left sibling (DSO's observations; "none" for the root and for left children),
each through its own embedding, added to ``x_t``: with one layer and one head,
the parent several BFS steps back is otherwise hard to find.

where ``PE`` is the paper's dual-indexed encoding DPE(d, h) of node ``t``
(eq. 3–6; its place is known from its parent before it is generated; the root
is (1, 1/2)) or, for the "Drop DPE" ablation, the 1-D sinusoid of the BFS
index ``t``.  The same place is used when sampling and when re-scoring.

Frequency-domain attention (paper eq. 7–9).  A fixed orthonormal DCT-II
matrix ``C`` (E × E) acts along the EMBEDDING axis of every position
independently: ``Ĥ = H C[:M]ᵀ`` keeps the ``M`` lowest-frequency coefficients of
each node's E-dim vector, the decoder layers run in those M dims, and
``Ĥ C[:M]`` (the inverse transform with the cut frequencies zero-padded) maps
back to E dims before the output layer.  The paper's equation writes the DCT
over the N sequence positions; that reading would mix later nodes into the
representation of earlier ones, so a teacher-forced prefix would see its own
future.  Transforming the embedding axis keeps the model causal, and it is what
the authors' code does.  ``attention="standard"`` runs the same decoder in E
dims without the transform.

Two equivalent ways to run the model:

* :meth:`Policy.forward` — teacher-forced, causal, whole sequences (training);
* :meth:`Policy.init_cache` + :meth:`Policy.step` — one node at a time with a
  key/value cache (sampling), so a batch of length-T trees costs O(T) steps.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..expressions.positions import dual_indexed_encoding, sequence_encoding

__all__ = ["Policy", "KVCache", "FeedForward", "dct_matrix", "ATTENTIONS", "POSITION_ENCODINGS"]

ATTENTIONS = ("dct", "standard")
POSITION_ENCODINGS = ("dpe", "1d")


def dct_matrix(n: int) -> torch.Tensor:
    """Orthonormal DCT-II matrix ``C[k, m] = α_k cos(π (m + ½) k / n)`` (paper eq. 7)."""
    k = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    m = torch.arange(n, dtype=torch.float64).unsqueeze(0)
    c = torch.cos(math.pi * (m + 0.5) * k / n) * math.sqrt(2.0 / n)
    c[0] /= math.sqrt(2.0)
    return c.to(torch.get_default_dtype())


@dataclass
class KVCache:
    """Keys and values of the nodes generated so far, one (b, H, T, d) pair per layer."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]

    def select(self, rows: torch.Tensor) -> "KVCache":
        """Keep only the given batch rows (drop finished trees)."""
        return KVCache([k[rows] for k in self.keys], [v[rows] for v in self.values])


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention in the attention width W (M for "dct")."""

    def __init__(self, width: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def _split(self, x: torch.Tensor):
        b, t, w = x.shape  # (B, T, 3W) -> three (B, H, T, W/H)
        q, k, v = x.view(b, t, 3, self.n_heads, w // (3 * self.n_heads)).permute(2, 0, 3, 1, 4)
        return q, k, v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, w = x.shape
        q, k, v = self._split(self.qkv(x))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, W/H)
        return self.proj(y.transpose(1, 2).reshape(b, t, w))

    def step(self, x: torch.Tensor, t: int, keys: torch.Tensor, values: torch.Tensor):
        """One new position per row: store its key/value at ``t``, attend to ``0..t``."""
        b, _, w = x.shape  # (b, 1, W)
        q, k, v = self._split(self.qkv(x))
        keys[:, :, t : t + 1] = k
        values[:, :, t : t + 1] = v
        y = F.scaled_dot_product_attention(q, keys[:, :, : t + 1], values[:, :, : t + 1])
        return self.proj(y.transpose(1, 2).reshape(b, 1, w))


class _FeedForwardFunction(torch.autograd.Function):
    """relu(x W₁ᵀ + b₁) W₂ᵀ + b₂ and its gradients, each product the fast way round.

    The block is narrow and wide (W = 8 → F = 2048 → 8). On the CPU the BLAS runs a
    product that sums over the F units or the n rows into 8 columns (y = h W₂ᵀ,
    ∂x = ∂h W₁, ∂W₁ = ∂hᵀ x) two to six times slower than its transpose (W₂ hᵀ)ᵀ,
    (W₁ᵀ ∂hᵀ)ᵀ, (xᵀ ∂h)ᵀ, which autograd's Linear does not use. The same sums; their
    terms may be added in another order (the last bits), as between a batch of one
    size and another.
    """

    @staticmethod
    def forward(ctx, x, w1, b1, w2, b2):  # x: (n, W), w1: (F, W), w2: (W, F)
        h = torch.addmm(b1, x, w1.t()).relu_()  # (n, F)
        y = torch.addmm(b2.unsqueeze(1), w2, h.t()).t()  # (W, n) -> (n, W)
        ctx.save_for_backward(x, w1, w2, h)
        return y

    @staticmethod
    def backward(ctx, grad_y):  # grad_y: (n, W)
        x, w1, w2, h = ctx.saved_tensors
        grad_w2 = grad_y.t() @ h  # (W, F)
        grad_h = grad_y @ w2  # (n, F)
        # 0 where h = 0, in place: one (n, F) buffer fewer to allocate (and fault in) a step
        torch.ops.aten.threshold_backward.grad_input(grad_h, h, 0, grad_input=grad_h)
        grad_x = (w1.t() @ grad_h.t()).t() if ctx.needs_input_grad[0] else None  # (n, W)
        grad_w1 = (x.t() @ grad_h).t().contiguous()  # (F, W)
        return grad_x, grad_w1, grad_h.sum(0), grad_w2, grad_y.sum(0)


class FeedForward(nn.Sequential):
    """The position-wise block Linear(W, F) → ReLU → Linear(F, W), computed by
    :class:`_FeedForwardFunction` (its parameters keep ``nn.Sequential``'s names)."""

    def __init__(self, width: int, ff_dim: int) -> None:
        super().__init__(nn.Linear(width, ff_dim), nn.ReLU(inplace=True), nn.Linear(ff_dim, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., W)
        first, _, second = self
        rows = x.reshape(-1, x.shape[-1])  # (n, W)
        y = _FeedForwardFunction.apply(rows, first.weight, first.bias, second.weight, second.bias)
        return y.reshape(x.shape)


class Block(nn.Module):
    """Pre-norm decoder layer: x + Attn(LN(x)), then x + FF(LN(x))."""

    def __init__(self, width: int, n_heads: int, ff_dim: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, n_heads)
        self.ln2 = nn.LayerNorm(width)
        self.ff = FeedForward(width, ff_dim)

    def forward(self, x: torch.Tensor, nodes: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        if nodes is None:
            return x + self.ff(self.ln2(x))
        # The feed-forward block is position-wise and costs most of the update, so it
        # runs on real nodes only (B, T) -> (n_nodes,); padding keeps the residual.
        update = torch.zeros_like(x)
        update[nodes] = self.ff(self.ln2(x[nodes]))
        return x + update

    def step(self, x: torch.Tensor, t: int, keys: torch.Tensor, values: torch.Tensor):
        x = x + self.attn.step(self.ln1(x), t, keys, values)
        return x + self.ff(self.ln2(x))


class Policy(nn.Module):
    """Decoder-only transformer p(token_t | token_<t) over BFS expression trees.

    Parameters
    ----------
    n_tokens : int
        Library size V; the model also knows one START token (id ``V``), never emitted.
    max_length : int
        Longest sequence T the key/value cache holds.
    embedding_dim : int
        E, width of the token embedding and position encoding.
    dct_dim : int
        M ≤ E, DCT coefficients kept for attention (``attention="dct"`` only).
    n_layers, n_heads, ff_dim : int
        Decoder layers, attention heads (must divide the attention width: M for
        "dct", E for "standard") and feed-forward width.
    attention : {"dct", "standard"}
    position_encoding : {"dpe", "1d"}
    embedding_std : float
        Standard deviation of the initial token embeddings. At 0.02 a token's
        vector has norm ≈ 0.02·√E, some 30 times weaker than the position
        encoding's ≈ √(E/2); 1/√2 makes them equal.
    parent_sibling : bool
        Add embeddings of the parent's and the left sibling's tokens to the input.
        Not in the paper.

    None has a default here: each is the estimator's parameter of the same name,
    where its default is set (:class:`~cadsr_sklearn.settings.PolicySettings`).
    """

    def __init__(
        self,
        n_tokens: int,
        *,
        max_length: int,
        embedding_dim: int,
        dct_dim: int,
        n_layers: int,
        n_heads: int,
        ff_dim: int,
        attention: str,
        position_encoding: str,
        embedding_std: float,
        parent_sibling: bool,
    ) -> None:
        super().__init__()
        if attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {attention!r}.")
        if position_encoding not in POSITION_ENCODINGS:
            raise ValueError(
                f"position_encoding must be one of {POSITION_ENCODINGS}, got {position_encoding!r}."
            )
        sizes = dict(n_tokens=n_tokens, max_length=max_length, embedding_dim=embedding_dim,
                     dct_dim=dct_dim, n_layers=n_layers, n_heads=n_heads, ff_dim=ff_dim)
        for name, value in sizes.items():
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        n_tokens, max_length, embedding_dim, dct_dim, n_layers, n_heads, ff_dim = (
            int(v) for v in sizes.values())
        width = self.check_widths(embedding_dim, dct_dim, n_heads, attention)
        self.n_tokens, self.max_length = n_tokens, max_length
        self.embedding_dim, self.width = embedding_dim, width
        self.n_heads, self.attention, self.position_encoding = n_heads, attention, position_encoding

        if not embedding_std > 0:
            raise ValueError(f"embedding_std must be positive, got {embedding_std!r}.")
        self.embedding_std, self.parent_sibling = float(embedding_std), bool(parent_sibling)

        self.embed = nn.Embedding(n_tokens + 1, embedding_dim)  # = a linear map of the one-hot
        # Id n_tokens (START) also stands for "no parent" / "no left sibling".
        self.embed_parent = nn.Embedding(n_tokens + 1, embedding_dim) if parent_sibling else None
        self.embed_sibling = nn.Embedding(n_tokens + 1, embedding_dim) if parent_sibling else None
        self.blocks = nn.ModuleList(Block(width, n_heads, ff_dim) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(embedding_dim, n_tokens)  # logits over the library, never START
        # Rows of C are frequencies; keep the M lowest.  Fixed, so a buffer, not a parameter.
        self.register_buffer("dct", dct_matrix(embedding_dim)[:width], persistent=False)  # (M, E)
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        # Small weights: the untrained policy starts close to uniform over allowed tokens.
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=self.embedding_std)

    @staticmethod
    def check_widths(embedding_dim: int, dct_dim: int, n_heads: int, attention: str) -> int:
        """The attention width (M for "dct", else E); ValueError if the heads cannot split it."""
        if attention == "dct" and dct_dim > embedding_dim:
            raise ValueError(
                f"dct_dim={dct_dim} must not exceed embedding_dim={embedding_dim}: "
                "the DCT keeps the dct_dim lowest of embedding_dim frequencies."
            )
        width = dct_dim if attention == "dct" else embedding_dim
        if width % n_heads:
            raise ValueError(
                f"n_heads={n_heads} must divide the attention width {width} "
                f"({'dct_dim' if attention == 'dct' else 'embedding_dim'})."
            )
        return width

    @property
    def start_token(self) -> int:
        return self.n_tokens

    @property
    def device(self) -> torch.device:
        return self.head.weight.device

    def shift_right(self, tokens: torch.Tensor) -> torch.Tensor:
        """Model input for BFS targets ``tokens`` (B, T): START, then tokens[:, :-1].

        Negative ids (padding) become START; by causality they only affect
        positions past the end of their tree.
        """
        start = torch.full_like(tokens[:, :1], self.start_token)
        prev = tokens[:, :-1].masked_fill(tokens[:, :-1] < 0, self.start_token)
        return torch.cat([start, prev], dim=1)

    def _input(self, prev, depth, horizontal, index, parent, sibling) -> torch.Tensor:
        if self.position_encoding == "dpe":
            pos = dual_indexed_encoding(depth, horizontal, self.embedding_dim)
        else:
            pos = sequence_encoding(index, self.embedding_dim)
        x = self.embed(prev) + pos  # (..., E)
        if self.parent_sibling:
            if parent is None or sibling is None:
                raise ValueError("This policy reads each node's parent and left sibling "
                                 "(parent_sibling=True): pass parent and sibling.")
            x = x + self.embed_parent(parent) + self.embed_sibling(sibling)
        return x @ self.dct.T if self.attention == "dct" else x  # (..., M)

    def _output(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln_f(x)
        if self.attention == "dct":
            x = x @ self.dct  # inverse DCT; the cut frequencies are zero
        return self.head(x)  # (..., V)

    def forward(
        self,
        tokens_in: torch.Tensor,
        depth: torch.Tensor,
        horizontal: torch.Tensor,
        nodes: torch.Tensor | None = None,
        parent: torch.Tensor | None = None,
        sibling: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Teacher-forced logits.

        Parameters
        ----------
        tokens_in : LongTensor (B, T)
            ``tokens_in[:, 0]`` is START, ``tokens_in[:, t]`` the token of node
            ``t - 1`` (see :meth:`shift_right`).
        depth, horizontal : Tensor (B, T)
            Place (d, h) of node ``t``, the node predicted at position ``t``.
        nodes : BoolTensor (B, T), optional
            Positions that hold a node. When given, padding positions skip the
            feed-forward blocks (their logits are then meaningless); positions
            that hold a node are unaffected, by causality.
        parent, sibling : LongTensor (B, T), optional
            Tokens of node ``t``'s parent and left sibling (START id for none);
            required when the policy reads them (``parent_sibling=True``).

        Returns
        -------
        logits : Tensor (B, T, V)
            ``logits[:, t]`` scores node ``t`` given nodes ``< t``.
        """
        T = tokens_in.shape[1]
        index = torch.arange(T, device=tokens_in.device).expand_as(tokens_in)
        x = self._input(tokens_in, depth, horizontal, index, parent, sibling)  # (B, T, W)
        for block in self.blocks:
            x = block(x, nodes)
        return self._output(x)

    def init_cache(self, batch_size: int) -> KVCache:
        """Empty key/value cache for :meth:`step`, on the parameters' device."""
        hd = self.width // self.n_heads
        shape = (batch_size, self.n_heads, self.max_length, hd)
        dtype = self.head.weight.dtype
        make = lambda: torch.zeros(shape, device=self.device, dtype=dtype)  # noqa: E731
        return KVCache([make() for _ in self.blocks], [make() for _ in self.blocks])

    def step(
        self,
        prev_token: torch.Tensor,
        depth: torch.Tensor,
        horizontal: torch.Tensor,
        t: int,
        cache: KVCache,
        parent: torch.Tensor | None = None,
        sibling: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits (b, V) for node ``t`` of every row; writes its keys/values at slot ``t``.

        ``prev_token`` (b,) is START at ``t = 0``; ``depth``/``horizontal`` (b,)
        are the place of node ``t``, ``parent``/``sibling`` (b,) its parent's and
        left sibling's tokens.  Same numbers as :meth:`forward`'s row ``t``.
        """
        if t >= self.max_length:
            raise ValueError(f"step t={t} is past the cache length {self.max_length}.")
        index = torch.full_like(prev_token, t)
        x = self._input(prev_token, depth, horizontal, index, parent, sibling).unsqueeze(1)
        for block, k, v in zip(self.blocks, cache.keys, cache.values):  # x: (b, 1, W)
            x = block.step(x, t, k, v)
        return self._output(x.squeeze(1))
