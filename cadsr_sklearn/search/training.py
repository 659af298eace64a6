"""Appendix Algorithm 4 of the paper: the CADSR epoch loop.

Each epoch (appendix Algorithm 4; equation numbers as typeset in the paper):

1. θ_old ← θ; every ``G`` epochs θ_ref ← θ.
2. Sample B unique expressions (appendix Algorithm 1), fit their constants
   (Levenberg–Marquardt) and score them with the reward (BIC, eq. 10) and
   the criterion that judges the answer (the description length by default).
   Beyond the paper, the search's other proposers add theirs
   (:mod:`cadsr_sklearn.search.proposers`: the genetic stage, seeded by the batch).
3. Keep the top α % of the proposals and merge it with the replay buffer of the
   historically best expressions (deduplicated by key).
4. Map rewards to ranks, eq. (11): f(τ) = λ·ReLU(1 − #{τ' : R(τ') > R(τ)} / (αB/100)).
5. Take ``C`` Adam steps on the GRPO objective, eq. (13): the clipped ratio
   against the sampling policy θ_old, minus β·KL to the reference policy, plus
   the entropy bonus λ_H·H.
6. Update the best expression τ* (the highest criterion seen), the hall of
   fame and the replay buffer (the highest rewards).

The loop's own state (:class:`LoopState`: optimizer, θ_ref, replay buffer,
τ*, hall of fame, counters) is left as the last epoch made it, so that a search
can be continued (``warm_start``) or written to a checkpoint and resumed, and
runs on as if never stopped; :func:`run_loop` returns τ* and the hall of fame
as the loop scored them, and :mod:`cadsr_sklearn.search.refinement.stage` makes the answer
out of them (the whole table's scores, the baselines, pruning and snapping).

The loop knows nothing about scikit-learn: :mod:`cadsr_sklearn.estimator`
validates input and builds the pieces (the :class:`~cadsr_sklearn.scoring.scorer.Scorer`
among them); this module runs the search.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable

import numpy as np
import torch

from ..expressions.library import Library
from ..sampling.policy import Policy
from .rank_mapping import rank_weights
from ..sampling.sampler import (Batch, Sampler, masked_entropy, masked_kl, masked_log_softmax,
                                token_log_probs)
from ..scoring.scorer import Candidate, HallOfFame, Scorer
from ..settings import TrainingSettings
from .proposers import Proposal, Proposer

__all__ = ["POLICY_UPDATES", "CallProgress", "LoopState", "SearchResult", "SearchParts",
           "EpochRecord", "ProposerCounts", "UpdateDiagnostics", "run_loop"]

#: The policy updates: GRPO (eq. 13, the paper), or the plain rank-weighted risk-seeking
#: policy gradient of eq. (12), one step per epoch (the "Drop GRPO" ablation).
POLICY_UPDATES = ("grpo", "risk_seeking")


@dataclass(frozen=True)
class UpdateDiagnostics:
    """What the policy update's last step measured (CleanRL's diagnostics)."""

    approx_kl: float  # k3 estimate of KL(θ_old ‖ θ)
    clip_fraction: float  # share of tokens whose ratio left [1 − ε, 1 + ε]
    kl_ref: float  # KL(θ ‖ θ_ref) per token, eq. (13)
    entropy: float  # per token
    loss: float  # the step's loss


@dataclass
class EpochRecord:
    """One epoch of appendix Algorithm 4, as ``history_`` shows it (:meth:`row`)."""

    epoch: int
    best_reward: float  # τ*'s
    best_criterion: float
    best_loss: float
    best_complexity: int
    batch_mean_reward: float  # over the batch's finite rewards
    n_unique: int  # distinct formulas among the batch's B
    invalid_fraction: float  # of the batch: not finite
    units_rejected_fraction: float  # of the batch: rejected by the dimensional check
    evaluations: int  # formulas scored so far, over every call
    time: float  # seconds into the call when the epoch ended
    time_sampling: float
    time_scoring: float
    time_update: float
    update: UpdateDiagnostics | None = None  # None when nothing was there to learn from
    # per proposer of the search (its origin): what it gave, and what reached the top α %
    proposers: dict[str, "ProposerCounts"] = field(default_factory=dict)
    island: int | None = None  # the island that ran it (search.islands); None: one search

    def row(self) -> dict:
        """The record as a row of ``history_``: its numbers, the update's among them, and
        per proposer ``proposed_<origin>``, ``top_<origin>`` and ``time_<origin>``; with
        islands, the ``island`` first."""
        row = {} if self.island is None else {"island": self.island}
        row |= {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("update", "proposers", "island")}
        for origin, counts in self.proposers.items():
            row |= {f"proposed_{origin}": counts.proposed, f"top_{origin}": counts.top,
                    f"time_{origin}": counts.seconds}
        return row | (asdict(self.update) if self.update is not None else {})


@dataclass(frozen=True)
class ProposerCounts:
    """One proposer's share of an epoch (:mod:`cadsr_sklearn.search.proposers`)."""

    proposed: int = 0  # candidates it scored, those it kept out of the selection included
    top: int = 0  # of them, in the top α % that trained the policy
    seconds: float = 0.0  # spent proposing them, their scoring included


@dataclass
class CallProgress:
    """How much of one call's budget (``n_epochs``, ``max_time``, ``max_evaluations``) is spent.

    A new call (a first fit, or a warm-started one) starts from zero; a search
    resumed from a checkpoint goes on with the interrupted call's counts.
    """

    epochs: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    last_epoch_seconds: float = 0.0  # the max_time rule stops when another would overrun


@dataclass
class LoopState:
    """What appendix Algorithm 4 carries from one epoch to the next.

    With the search's pieces (policy, sampler, scorer and their random
    generators) it is everything a checkpoint holds: a search continued from it
    runs the epochs an uninterrupted one would have run.
    """

    ref_policy: Policy  # θ_ref
    optimizer: torch.optim.Optimizer | None = None  # Adam on θ, made when the loop first runs
    replay: list[Candidate] = field(default_factory=list)  # the best αB/100 so far
    best: Candidate | None = None  # τ*, as the loop found it (before pruning and snapping)
    hall_of_fame: HallOfFame = field(default_factory=HallOfFame)
    history: list[EpochRecord] = field(default_factory=list)
    n_epochs: int = 0  # over every call: the G schedule and the patience rule count these
    n_evaluations: int = 0
    last_improvement: int = 0  # epoch of the last new τ*
    call: CallProgress = field(default_factory=CallProgress)

    @classmethod
    def start(cls, policy: Policy) -> "LoopState":
        """The state before the first epoch: θ_ref a frozen copy of θ."""
        return cls(copy.deepcopy(policy).requires_grad_(False))

    def new_call(self, config: TrainingSettings) -> None:
        """Start a call's budget afresh (warm start), with the call's learning rate."""
        self.call = CallProgress()
        for group in self.optimizer.param_groups if self.optimizer is not None else ():
            group["lr"] = config.learning_rate


@dataclass
class SearchResult:
    best: Candidate | None
    hall_of_fame: HallOfFame
    unsnapped: Candidate | None = None  # τ* before snapping (after pruning)
    # every snapped formula's fit before snapping, by the snapped one's key: where the
    # intervals of the constants snapping fixed come from
    snapped_from: dict = field(default_factory=dict)
    history: list[EpochRecord] = field(default_factory=list)
    n_epochs: int = 0
    n_evaluations: int = 0
    stop_reason: str = ""
    interrupted: bool = False
    found_by: str | None = None  # the proposer that first wrote τ* (search.proposers)
    started: float = 0.0  # perf_counter() at the call's start, less a resumed call's elapsed time


def grpo_loss(
    policy: Policy,
    batch: Batch,
    weights: torch.Tensor,
    old_log_probs: torch.Tensor,
    ref_log_dist: torch.Tensor,
    config: TrainingSettings,
) -> tuple[torch.Tensor, "UpdateDiagnostics"]:
    """Negative of eq. (13) minus the entropy bonus, with its diagnostics.

    ``weights`` are the rank-mapped rewards f(τ_i) (N,); ``old_log_probs`` the
    per-token log-probabilities under θ_old (N, T); ``ref_log_dist`` the masked
    log-distributions under θ_ref (N, T, V).
    """
    scale = 100.0 / (config.alpha * config.batch_size)  # the paper's 100/(αB)
    valid = batch.valid  # (N, T)
    log_dist = masked_log_softmax(policy, batch)  # (N, T, V)
    log_probs = token_log_probs(log_dist, batch)  # (N, T)
    ratio = torch.exp(log_probs - old_log_probs)  # g(τ_i, j), the ratio inside Ĵ
    clipped = ratio.clamp(1.0 - config.epsilon, 1.0 + config.epsilon)
    f = weights.unsqueeze(-1)  # (N, 1)
    surrogate = torch.minimum(f * ratio, f * clipped) * valid  # f ≥ 0, so min(g, clip g)·f
    kl_ref = masked_kl(log_dist, ref_log_dist, batch.masks)  # eq. (13): KL[p_θ ‖ p_ref]
    entropy = masked_entropy(log_dist, batch.masks)
    objective = scale * (surrogate.sum() - config.beta * kl_ref.sum())
    entropy_bonus = scale * entropy.sum()
    loss = -objective - config.entropy_coef * entropy_bonus

    n_tokens = valid.sum().clamp(min=1)
    with torch.no_grad():
        log_ratio = (log_probs - old_log_probs) * valid
        diagnostics = UpdateDiagnostics(
            # k3 estimator of KL(θ_old ‖ θ), as in CleanRL
            approx_kl=float(((ratio - 1.0) * valid - log_ratio).sum() / n_tokens),
            clip_fraction=float(
                (((ratio - 1.0).abs() > config.epsilon) * valid).sum() / n_tokens
            ),
            kl_ref=float(kl_ref.sum() / n_tokens),
            entropy=float(entropy.sum() / n_tokens),
            loss=float(loss),
        )
    return loss, diagnostics


def risk_seeking_loss(
    policy: Policy, batch: Batch, weights: torch.Tensor, config: TrainingSettings
) -> tuple[torch.Tensor, "UpdateDiagnostics"]:
    """The "Drop GRPO" ablation: the rank-weighted risk-seeking gradient, eq. (12)."""
    scale = 100.0 / (config.alpha * config.batch_size)
    log_dist = masked_log_softmax(policy, batch)
    log_probs = token_log_probs(log_dist, batch)
    entropy = masked_entropy(log_dist, batch.masks)
    objective = scale * (weights * log_probs.sum(-1)).sum()
    loss = -objective - config.entropy_coef * scale * entropy.sum()
    n_tokens = batch.valid.sum().clamp(min=1)
    return loss, UpdateDiagnostics(approx_kl=0.0, clip_fraction=0.0, kl_ref=0.0,
                                   entropy=float(entropy.detach().sum() / n_tokens),
                                   loss=float(loss.detach()))


@dataclass
class SearchParts:
    """What one run of the loop needs: its pieces and its state between epochs
    (:class:`~cadsr_sklearn.search.build.Search` adds what the estimator keeps)."""

    library: Library
    policy: Policy
    sampler: Sampler
    scorer: Scorer  # fits and scores the loop's formulas (on a batch of rows for a large table)
    final_scorer: Scorer  # the same on all rows: the answer's (the scorer itself without a batch)
    config: TrainingSettings
    generator: torch.Generator  # every draw of the sampler
    # where each epoch's candidates come from, the policy's sampler first
    proposers: list[Proposer]
    exact_loss: float  # training MSE at or below which τ* is exact: the "tol" stop
    state: LoopState


def run_loop(search: SearchParts,
               on_epoch: Callable[["EpochRecord", Any], None] | None = None,
               on_stop: Callable[[Any], None] | None = None) -> SearchResult:
    """Run appendix Algorithm 4 from ``search.state`` until a stopping rule fires; Ctrl-C
    stops it cleanly.

    The state is updated in place, epoch by epoch, and is left as the last
    epoch made it, so a search can be continued or checkpointed; the result
    is the loop's τ* and hall of fame as scored in the loop, which
    :func:`.stage.refine` makes the answer. ``search.exact_loss`` is the
    training MSE at or below which τ* is an exact fit: the search stops there
    ("tol"). ``on_epoch(record, search)`` is called after every epoch with its
    record of ``history``; ``on_stop(search)`` once a stopping rule has fired
    (not after Ctrl-C).
    """
    state, config = search.state, search.config
    start = time.perf_counter() - state.call.seconds  # a resumed call keeps its elapsed time
    if state.optimizer is None:
        # On the budget's clock, as the first call's setup: the first Adam of a process
        # imports torch._dynamo, which takes seconds on a slow machine.
        state.optimizer = torch.optim.Adam(search.policy.parameters(), lr=config.learning_rate)
    interrupted = False
    try:
        while not (stop := _stop_reason(config, state, search.exact_loss,
                                        search.scorer.reward.n_samples)):
            record = _epoch(search)
            now = time.perf_counter()
            state.call.last_epoch_seconds = now - start - state.call.seconds
            state.call.seconds = now - start
            record.time = state.call.seconds
            state.history.append(record)
            if on_epoch is not None:
                on_epoch(record, search)
        if on_stop is not None:
            on_stop(search)
    except KeyboardInterrupt:
        interrupted, stop = True, "interrupted"
    # the result's own hall of fame: the refinement edits it, not the loop's
    return SearchResult(best=state.best, hall_of_fame=state.hall_of_fame.copy(),
                        history=list(state.history),
                        n_epochs=state.n_epochs, n_evaluations=state.n_evaluations,
                        stop_reason=stop, interrupted=interrupted, started=start,
                        found_by=None if state.best is None else state.best.origin)


def _epoch(search: SearchParts) -> "EpochRecord":
    """One epoch of appendix Algorithm 4 on ``search.state``; its record of ``history``."""
    state, policy, sampler, config = search.state, search.policy, search.sampler, search.config
    epoch = state.n_epochs
    # 1. θ_old ← θ; every G epochs θ_ref ← θ. θ_old needs no copy: it is
    # the policy this epoch samples from, and the batch keeps its log-probs.
    if epoch % config.ref_update_every == 0:
        state.ref_policy.load_state_dict(policy.state_dict())

    # 2. sample B unique expressions, fit constants, score; then the other proposers
    # (the genetic stage), each seeing the proposals before it
    proposals: list[Proposal] = []
    for proposer in search.proposers:
        if proposer.active(config) and not (proposals and _budget_spent(config, state, proposals)):
            proposal = proposer.propose(search, proposals)
            for cand in proposal.scored:  # before the next proposer refits any of them
                if cand.origin is None:  # the first proposer to write a formula
                    cand.origin = proposal.origin
            proposals.append(proposal)
    proposed_at = time.perf_counter()
    for proposal in proposals:
        state.n_evaluations += proposal.evaluations
        state.call.evaluations += proposal.evaluations
    sampled, batch = proposals[0], proposals[0].batch  # the policy's, always first
    candidates = [c for p in proposals for c in p.candidates]
    rewards = np.array([c.reward for c in candidates])

    # 3. top α% of the proposals ∪ replay buffer, deduplicated by key
    top = top_distinct(candidates, rewards, config.n_top)
    top_keys = {candidates[i].expression.key for i in top}
    replay = [c for c in state.replay if c.expression.key not in top_keys]
    n_sampled = len(sampled.candidates)
    top_sampled = [i for i in top if i < n_sampled]  # trained on as sampled
    forced = [candidates[i] for i in top if i >= n_sampled] + replay  # teacher-forced
    members = [candidates[i] for i in top_sampled] + forced
    for proposal in proposals:
        state.hall_of_fame.update(proposal.scored)
    # τ*: the highest criterion of the epoch, which on a small table need not be among
    # the rewards' top α % (the BIC ranks an interpolant above the law there); set before
    # the update, so that a Ctrl-C during it keeps what the epoch found
    scored = [c for p in proposals for c in p.scored]
    leader = max(scored, key=lambda c: c.criterion, default=None)
    if leader is not None and math.isfinite(leader.criterion) and (
            state.best is None or leader.criterion > state.best.criterion):
        state.best = leader
        state.last_improvement = epoch

    diagnostics = None
    if members:
        # 4. eq. (11): rank-based reward mapping over the merged set
        merged_rewards = np.array([c.reward for c in members])
        weights = rank_weights(merged_rewards, config.alpha, config.batch_size, config.lam)
        train_batch = Batch.concat(
            [batch[top_sampled], sampler.teacher_force([c.expression.tokens for c in forced])]
            if forced
            else [batch[top_sampled]]
        )
        w = torch.as_tensor(weights, dtype=torch.get_default_dtype(),
                            device=train_batch.tokens.device)

        # 5. C gradient steps on eq. (13) (or one step of the risk-seeking ablation)
        diagnostics = _policy_update(policy, state.ref_policy, state.optimizer, train_batch, w,
                                     config)

        # 6. replay buffer: top αB/100 of the merged set by reward; the sampler keeps the
        # batch's own places and masks of the trees that enter it
        order = np.argsort(-merged_rewards, kind="stable")
        replay = [members[i] for i in order[: config.n_top]]
        entering = [top_sampled[i] for i in order[: config.n_top] if i < len(top_sampled)]
        if entering:
            sampler.keep_structure(batch[entering])
    state.replay = replay

    state.n_epochs = epoch + 1
    state.call.epochs += 1
    best = state.best
    batch_rewards = rewards[:n_sampled]
    return EpochRecord(
        epoch=epoch,
        best_reward=best.reward if best else -math.inf,
        best_criterion=best.criterion if best else -math.inf,
        best_loss=best.loss if best else math.inf,
        best_complexity=best.complexity if best else 0,
        batch_mean_reward=(float(np.mean(batch_rewards[np.isfinite(batch_rewards)]))
                           if np.isfinite(batch_rewards).any() else -math.inf),
        n_unique=len(set(batch.keys())),
        invalid_fraction=float(np.mean(~np.isfinite(batch_rewards))),
        units_rejected_fraction=(sum(c.rejected_for_units for c in sampled.candidates)
                                 / n_sampled),
        evaluations=state.n_evaluations,
        time=0.0,  # the call's clock, set by the loop
        time_sampling=sampled.sampling_seconds,
        time_scoring=sampled.seconds - sampled.sampling_seconds,
        time_update=time.perf_counter() - proposed_at,
        update=diagnostics,
        proposers=_proposer_counts(search, proposals, [candidates[i] for i in top]),
    )


def _proposer_counts(search: SearchParts, proposals: list["Proposal"],
                     top: list[Candidate]) -> dict[str, "ProposerCounts"]:
    """Each proposer of the search: what it proposed this epoch, and how much of it reached
    the top α %."""
    counts = {p.origin: ProposerCounts() for p in search.proposers}
    for proposal in proposals:
        keys = {c.expression.key for c in proposal.candidates}
        counts[proposal.origin] = ProposerCounts(
            proposed=len(proposal.scored), top=sum(c.expression.key in keys for c in top),
            seconds=proposal.seconds)
    return counts


def top_distinct(candidates: list[Candidate], rewards: np.ndarray, n_top: int) -> list[int]:
    """Indices of the batch's top ``n_top`` by reward, each tree once, invalid ones left out.

    A collapsed policy can draw fewer than B distinct trees, and the batch is
    then filled with repeats (appendix Algorithm 1). Copies of one tree would
    share the top rank weight, push the others' ranks down and take several
    replay slots, so only the first copy of a key stays in the top set. The
    top α % is taken over the batch's rows first, as sampled, so a batch whose
    best rows are all one tree contributes that one tree (the replay buffer
    still brings the others).
    """
    seen: set = set()
    top = []
    for i in np.argsort(-rewards, kind="stable")[:n_top]:
        key = candidates[i].expression.key
        if np.isfinite(rewards[i]) and key not in seen:
            seen.add(key)
            top.append(int(i))
    return top


def _policy_update(policy, ref_policy, optimizer, batch, weights,
                   config) -> "UpdateDiagnostics":
    if config.policy == "risk_seeking":
        steps = 1
    else:
        steps = config.steps_per_epoch
        # Sampling-time probabilities: the batch was drawn from θ_old, and the
        # replay members were re-scored by teacher forcing under θ_old too.
        old_log_probs = batch.log_probs
        with torch.no_grad():
            ref_log_dist = masked_log_softmax(ref_policy, batch)
    for _ in range(steps):
        if config.policy == "risk_seeking":
            loss, diagnostics = risk_seeking_loss(policy, batch, weights, config)
        else:
            loss, diagnostics = grpo_loss(policy, batch, weights, old_log_probs, ref_log_dist,
                                          config)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return diagnostics


def _budget_spent(config: TrainingSettings, state: LoopState, proposals: list[Proposal]) -> bool:
    """Whether this epoch's proposals so far reach the call's ``max_evaluations``: the
    proposers after the policy then propose nothing, so that the count passes the budget
    by one proposal at most."""
    return (config.max_evaluations is not None and state.call.evaluations
            + sum(p.evaluations for p in proposals) >= config.max_evaluations)


def _stop_reason(config: TrainingSettings, state: LoopState, exact_loss: float,
                 n_rows: float) -> str:
    """Why the loop stops before its next epoch, or "" to go on.

    Checked before every epoch, the first included, so a search continued from
    a checkpoint stops where the uninterrupted one did. The budgets count this
    call (:class:`CallProgress`); patience counts epochs since τ* last changed.
    "tol" needs an exact fit that is one (:meth:`Candidate.is_exact`: residual
    degrees of freedom left), not a tiny loss alone.
    """
    best, call = state.best, state.call
    if best is not None and best.is_exact(exact_loss, n_rows):
        return "tol"
    if config.max_evaluations is not None and call.evaluations >= config.max_evaluations:
        return "max_evaluations"
    # stop when another epoch like the last one would overrun the budget
    if (config.max_time is not None and call.epochs
            and call.seconds + call.last_epoch_seconds >= config.max_time):
        return "max_time"
    stale_epochs = state.n_epochs - 1 - state.last_improvement
    if config.patience is not None and stale_epochs >= config.patience:
        return "patience"
    if call.epochs >= config.n_epochs:
        return "n_epochs"
    return ""
