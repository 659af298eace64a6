"""One search as islands: k whole CADSR searches side by side, exchanging their best formulas.

PySR's populations and migration, Bingo's archipelago: each island is a search of its own
(:class:`~cadsr_sklearn.search.build.Search`: policy, optimizer, replay buffer, hall of
fame, seeds derived from ``random_state`` and its index, :func:`island_seeds`), living on a
Dask worker of its own between rounds. Only elites travel. A round:

1. every live island runs up to M (``migration_every``) epochs of appendix Algorithm 4,
   under its own stopping rules and what is left of the shared wall-clock budget;
2. it sends back the round's epochs, its replay buffer and the front of its hall of fame
   (:class:`RoundReport`);
3. the head joins them (:func:`run_islands`): the hall of fame of all, τ* (the highest
   criterion of all), and the elites, the best αB/100 distinct formulas by reward;
4. each island receives the elites it does not hold: they join its hall of fame and
   replace at most ``migrant_share`` (half) of its replay buffer, the weaker part, so that
   its next update is teacher-forced on them as on its own replay (PySR's migration,
   :func:`welcome`).

The rounds are synchronous, at epoch boundaries, so that the same ``random_state`` and
number of islands give the same formula whatever the timing, on an epoch budget. The head
keeps what it was sent: a worker that dies takes its island with it (reported, the
search goes on with the others), never what the island had found.

:class:`IslandWorkers` is the engine: a Dask client (of a scheduler's address, of
``joblib.parallel_config(backend="dask")``, or of a local cluster of one process per
island, started by the first fit that needs it and kept for the next), and the islands
placed one per worker.
"""

from __future__ import annotations

import atexit
import logging
import math
import signal
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterator

import numpy as np

from ..expressions.parallel import resolve_n_jobs
from ..scoring.scorer import Candidate
from ..user_warning import warn_user
from .training import EpochRecord, SearchResult, run_loop

__all__ = ["Archipelago", "IslandWorkers", "RoundReport", "build_archipelago", "island_seeds",
           "island_settings", "islands_loop", "run_islands", "scored_candidates", "welcome",
           "elites_of", "close_local_clusters"]

#: The Dask settings of the workers of a local cluster (and advised for a cluster of your
#: own): no statistical profiler, which samples the running task's stack a hundred times a
#: second and made an island's epochs 35-45 % slower than the same epochs of one search.
WORKER_CONFIG = {"distributed.worker.profile.enabled": False,
                 "distributed.nanny.pre-spawn-environ": {
                     "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}}

#: Seconds between two looks at whether the workers of the running islands are alive.
_POLL_SECONDS = 0.25
#: Seconds to connect to a scheduler before saying it cannot be reached.
_CONNECT_TIMEOUT = 30


def island_seeds(torch_seed: int, numpy_seed: int, index: int) -> tuple[int, int]:
    """The (torch, NumPy) seeds of island ``index``: the search's own for island 0, else
    independent streams derived from them and the index (NumPy's SeedSequence)."""
    if index == 0:
        return torch_seed, numpy_seed
    a, b = np.random.SeedSequence([torch_seed, numpy_seed, index]).generate_state(2)
    return int(a) % (2**31 - 1), int(b) % (2**31 - 1)


@dataclass
class Archipelago:
    """The islands of a search as the head keeps them (pickled with it: a checkpoint or a
    warm start holds every island).

    ``islands[i]`` is island i's whole search as last gathered from its worker (at the
    start, a checkpoint's interval and the stop); ``lost`` the islands whose worker died.
    """

    islands: list  # of Search
    migration_every: int  # M
    migrant_share: float = 0.5  # a checkpoint written before the share was a setting had it
    lost: list[int] = field(default_factory=list)
    stops: dict[int, str] = field(default_factory=dict)  # this call's, of islands that stopped
    evaluations: dict[int, int] = field(default_factory=dict)  # each island's, every call
    epochs: dict[int, int] = field(default_factory=dict)  # each island's, every call
    # the elites each island receives with its next round: kept with the islands, so that
    # a search resumed from a checkpoint goes on as the uninterrupted one would
    migrants: dict[int, list] = field(default_factory=dict)

    @property
    def live(self) -> list[int]:
        return [i for i in range(len(self.islands)) if i not in self.lost]

    @property
    def running(self) -> list[int]:
        """The live islands with budget left in this call."""
        return [i for i in self.live if not self.stops.get(i)]

    def new_call(self) -> None:
        """Every island starts another call's budget (warm start), once :meth:`resume` has
        given it the call's settings. An island lost in an earlier call comes back: its
        search as last gathered, counting on from the epochs and evaluations it last
        reported (what it found since is in the head's hall of fame)."""
        for i in self.lost:
            state = self.islands[i].state
            state.n_epochs = self.epochs.get(i, state.n_epochs)
            state.n_evaluations = self.evaluations.get(i, state.n_evaluations)
            state.last_improvement = state.n_epochs  # its patience starts afresh
        self.lost.clear()
        for island in self.islands:
            island.state.new_call(island.config)

    def resume(self, settings) -> None:
        """Every island goes on with its interrupted call (a checkpoint) with ``settings``;
        one whose rule had stopped it stops again at its first round."""
        for index, island in enumerate(self.islands):
            island.resume(island_settings(settings, len(self.islands), index))
        self.migration_every = settings.islands.migration_every
        self.migrant_share = settings.islands.migrant_share
        if self.migrant_share == 0:
            self.migrants.clear()
        self.stops.clear()

    def adopt_data(self, scoring_of: Callable, settings) -> None:
        """Every island goes on with its policy on new data (a warm start):
        ``scoring_of(island's settings)`` its scoring, its candidates rescored there
        (:meth:`Search.adopt_data <cadsr_sklearn.search.build.Search.adopt_data>`); the
        elites on their way, scored on the old data, are dropped."""
        for index, island in enumerate(self.islands):
            island.adopt_data(scoring_of(island_settings(settings, len(self.islands), index)))
        self.migrants.clear()


def island_settings(settings, n_islands: int, index: int):
    """Island ``index``'s settings out of a search's ``settings``: the loop's rules it sets
    for itself (``island_params``, uDSR's portfolio), and its share of the budgets:
    ``max_evaluations`` counts all the islands' evaluations and ``n_jobs`` the threads of
    all (resolved here, on the head); ``n_epochs`` is each island's, ``max_time`` the wall
    clock of all."""
    training = replace(settings.training, **settings.islands.overrides(index))
    if training.max_evaluations is not None:
        share = max(1, math.ceil(training.max_evaluations / n_islands))
        training = replace(training, max_evaluations=share)
    threads = max(1, resolve_n_jobs(settings.n_jobs) // n_islands)
    return replace(settings, training=training, n_jobs=threads)


@dataclass(frozen=True)
class RoundReport:
    """What an island sends the head after a round: all that travels back."""

    records: list[EpochRecord]  # the round's epochs
    elites: list[Candidate]  # its replay buffer, the best αB/100 by reward (none: share 0)
    front: list[Candidate]  # its hall of fame, one formula per complexity
    best: Candidate | None  # its τ*
    n_evaluations: int  # formulas it scored, over every call
    epochs: int  # of this call
    stop: str  # why it stopped for good; "" while it has budget left


# ---------------------------------------------------------------- on a worker
#: The islands this process holds, by key: their state stays here between rounds.
_ISLANDS: dict[str, Any] = {}
#: The islands the head has asked to stop after their current epoch (Ctrl-C on the head).
_INTERRUPTED: set[str] = set()


def _settle(key: str, search) -> None:
    """Keep ``search`` here as island ``key``, its kernels compiled (or loaded from cache)."""
    from .session import compile_kernels

    compile_kernels()
    _ISLANDS[key] = search


def _round(key: str, migrants: list[Candidate], share: float, epochs: int,
           seconds_left: float | None) -> RoundReport:
    """Island ``key``'s round: the ``migrants`` welcomed into at most ``share`` of its
    replay buffer, then up to ``epochs`` epochs within ``seconds_left`` (None: no clock)."""
    from .devices import blas_threads, older_objects_frozen, torch_threads

    search = _ISLANDS[key]
    welcome(search, migrants, share)
    state, config = search.state, search.config
    first = len(state.history)
    search.config = replace(
        config, n_epochs=min(config.n_epochs, state.call.epochs + epochs),
        max_time=None if seconds_left is None else state.call.seconds + seconds_left)
    try:
        on_cpu = next(search.policy.parameters()).device.type == "cpu"
        with torch_threads(1 if on_cpu else None), blas_threads(1), older_objects_frozen():
            result = run_loop(search, on_epoch=partial(_stop_if_asked, key))
    finally:
        search.config = config
    stop = result.stop_reason
    if stop == "n_epochs" and state.call.epochs < config.n_epochs:
        stop = ""  # the round's end, not the island's
    return RoundReport(records=state.history[first:],
                       elites=list(state.replay) if share > 0 else [],  # none travel
                       front=list(state.hall_of_fame.by_complexity.values()),
                       best=state.best, n_evaluations=state.n_evaluations,
                       epochs=state.call.epochs, stop=stop)


def _gathered(key: str):
    """Island ``key``'s whole search, for the head to keep."""
    return _ISLANDS[key]


def _stop_if_asked(key: str, record: EpochRecord, search) -> None:
    """After each epoch of island ``key``: Ctrl-C, as the loop takes it, where the head
    asked the island to stop (:func:`_interrupt`)."""
    if key in _INTERRUPTED:
        _INTERRUPTED.discard(key)
        raise KeyboardInterrupt


def _interrupt(key: str) -> None:
    """Ask island ``key`` to stop after its current epoch: run on the worker's event loop,
    beside the round that runs in its thread."""
    if key in _ISLANDS:
        _INTERRUPTED.add(key)


def _leave(key: str) -> None:
    _ISLANDS.pop(key, None)
    _INTERRUPTED.discard(key)


def _migrant_slots(share: float, n_top: int) -> int:
    """The places of a replay buffer of ``n_top`` that migrants may take: ``share`` of it,
    rounded down (the epsilon keeps 0.29 · 100 from rounding down to 28)."""
    return math.floor(share * n_top + 1e-9)


def welcome(search, migrants: list[Candidate], share: float) -> None:
    """Migrants join ``search``: its hall of fame (and τ* where one is better), and at most
    ``share`` of its replay buffer (``migrant_share``), its weaker part, those it does not
    hold already. A share that leaves no place welcomes none."""
    state, n_top = search.state, search.config.n_top
    slots = _migrant_slots(share, n_top)
    held = {c.expression.key for c in state.replay}
    newcomers = [c for c in migrants if c.expression.key not in held]
    if not newcomers or slots == 0:
        return
    state.hall_of_fame.update(newcomers)
    leader = max(newcomers, key=lambda c: c.criterion)
    if math.isfinite(leader.criterion) and (state.best is None
                                            or leader.criterion > state.best.criterion):
        state.best = leader
    # the island's stronger part is its own; the rest goes to the best of its weaker
    # part and the newcomers, at most ``slots`` of them (a buffer not yet full has room)
    own = state.replay[:n_top - slots]
    contested = state.replay[len(own):] + newcomers
    order = np.argsort([-c.reward for c in contested], kind="stable")
    newcomer = [i >= len(contested) - len(newcomers) for i in range(len(contested))]
    joined, arrived = list(own), 0
    for i in order:
        if len(joined) == n_top:
            break
        if newcomer[i]:
            if arrived == slots:
                continue
            arrived += 1
        joined.append(contested[i])
    order = np.argsort([-c.reward for c in joined], kind="stable")
    state.replay = [joined[i] for i in order]  # by reward, as the loop keeps it


def elites_of(reports: dict[int, RoundReport], n_top: int) -> list[Candidate]:
    """The best ``n_top`` distinct formulas by reward of every island's replay buffer, in
    the islands' order where rewards tie: what migrates."""
    pool = [c for i in sorted(reports) for c in reports[i].elites if math.isfinite(c.reward)]
    order = np.argsort([-c.reward for c in pool], kind="stable")
    seen, elites = set(), []
    for i in order:
        key = pool[i].expression.key
        if key not in seen:
            seen.add(key)
            elites.append(pool[i])
        if len(elites) == n_top:
            break
    return elites


# ---------------------------------------------------------------- on the head
def build_archipelago(new_search: Callable, settings, seeds: tuple[int, int]
                      ) -> Archipelago | None:
    """The islands of a new search with ``settings`` (None for one island): island i built
    by ``new_search(island_seeds(*seeds, i), island_settings(settings, k, i))``, the
    estimator's builder of a seeded search."""
    n_islands = settings.islands.n_islands
    if n_islands == 1:
        return None
    return Archipelago([new_search(island_seeds(*seeds, i),
                                   island_settings(settings, n_islands, i))
                        for i in range(n_islands)], settings.islands.migration_every,
                       settings.islands.migrant_share)


@contextmanager
def islands_loop(search, settings, states_due: Callable[[], bool]
                 ) -> Iterator[tuple[Callable[..., SearchResult], str | None]]:
    """The loop that runs ``search`` and the scheduler it runs on: its own
    (:func:`~cadsr_sklearn.search.training.run_loop`, no scheduler) for one search, else
    its islands' on the workers of ``settings`` (:class:`IslandSettings
    <cadsr_sklearn.settings.IslandSettings>`) for the block's length; ``states_due`` as
    :func:`run_islands` takes it."""
    if search.archipelago is None:
        yield run_loop, None
        return
    with IslandWorkers(settings.scheduler, settings.n_islands) as workers:
        yield partial(run_islands, workers=workers, states_due=states_due), workers.address


def scored_candidates(search) -> list[Candidate]:
    """Every formula ``search`` scored (its scorer's cache), with islands every island's
    as last gathered, each tree once (the first island's fit of it)."""
    scorers = [search.scorer] + ([] if search.archipelago is None else
                                 [island.scorer for island in search.archipelago.islands])
    merged: dict = {}
    for scorer in scorers:
        for key, candidate in scorer.cache.items():
            merged.setdefault(key, candidate)
    return list(merged.values())


def run_islands(search, workers: "IslandWorkers",
                on_epoch: Callable[[EpochRecord, Any], None] | None = None,
                on_stop: Callable[[Any], None] | None = None,
                states_due: Callable[[], bool] = lambda: False) -> SearchResult:
    """Run ``search.archipelago``'s islands on ``workers`` until they stop: the result as
    :func:`~cadsr_sklearn.search.training.run_loop` gives it, over all of them.

    ``search.state`` is the head's: the hall of fame of all, τ*, every island's epochs
    (``EpochRecord.island``), the evaluations of all, the call's wall clock.
    ``on_epoch(record, search)`` after every island's epoch, in the islands' order, once
    its round is in; ``on_stop(search)`` when the search stops by a rule, every island
    gathered first; ``states_due()``: whether to gather the islands now (a checkpoint's
    interval is up). Ctrl-C stops every island after its current epoch; the result keeps
    what their rounds, finished or cut short, sent.
    """
    archipelago, state, config = search.archipelago, search.state, search.config
    start = time.perf_counter() - state.call.seconds

    def seconds_left() -> float | None:
        return None if config.max_time is None else config.max_time - (
            time.perf_counter() - start)

    interrupted, stop = False, ""
    try:
        workers.settle(archipelago)
        while not stop:
            reports = workers.round(archipelago, archipelago.migrants, seconds_left())
            _next_migrants(archipelago, reports)  # before a checkpoint can be written
            if states_due():  # before on_epoch, which writes the checkpoint
                workers.gather(archipelago)
            _join(search, reports, time.perf_counter() - start, on_epoch)
            stop = _stop_reason(search, seconds_left())
        workers.gather(archipelago)
        if on_stop is not None:
            on_stop(search)
    except KeyboardInterrupt:
        interrupted, stop = True, "interrupted"
        try:  # the rounds under way end after their current epoch, and their best is kept
            reports = workers.interrupt(archipelago)
            _next_migrants(archipelago, reports)
            _join(search, reports, time.perf_counter() - start, on_epoch)
            workers.gather(archipelago)  # for the checkpoint and warm start: where they stopped
        except KeyboardInterrupt:  # a second Ctrl-C: what the head holds already
            pass
    state.call.seconds = time.perf_counter() - start
    return SearchResult(best=state.best, hall_of_fame=state.hall_of_fame.copy(),
                        history=list(state.history), n_epochs=state.n_epochs,
                        n_evaluations=state.n_evaluations, stop_reason=stop,
                        interrupted=interrupted, started=start,
                        found_by=None if state.best is None else state.best.origin)


def _next_migrants(archipelago: Archipelago, reports: dict[int, RoundReport]) -> None:
    """The elites of a round (none sent: those of the last) to each live island with its
    next, as many as its replay buffer holds; none where ``migrant_share`` is 0."""
    if archipelago.migrant_share == 0:
        archipelago.migrants = {}  # none travel, those of an earlier setting neither
    elif reports:
        archipelago.migrants = {i: elites_of(reports, archipelago.islands[i].config.n_top)
                                for i in archipelago.live}


def _join(search, reports: dict[int, RoundReport], seconds: float,
          on_epoch: Callable | None) -> None:
    """The islands' round into the head's state, in the islands' order."""
    state, archipelago = search.state, search.archipelago
    call_start = state.n_evaluations - state.call.evaluations
    for i in sorted(reports):
        report = reports[i]
        state.hall_of_fame.update(report.front)
        if report.best is not None and math.isfinite(report.best.criterion) and (
                state.best is None or report.best.criterion > state.best.criterion):
            state.best = report.best
            state.last_improvement = state.n_epochs
        archipelago.evaluations[i] = report.n_evaluations
        if report.records:
            archipelago.epochs[i] = report.records[-1].epoch + 1
        if report.stop:
            archipelago.stops[i] = report.stop
    state.n_evaluations = sum(archipelago.evaluations.values())
    state.call.evaluations = state.n_evaluations - call_start
    state.call.epochs = max((r.epochs for r in reports.values()), default=state.call.epochs)
    state.call.seconds = seconds
    records = [record for i in sorted(reports) for record in reports[i].records]
    for i in sorted(reports):
        for record in reports[i].records:
            record.island = i
    for record in records:  # the whole round first: a checkpoint written by on_epoch holds it
        state.history.append(record)
        state.n_epochs = max(state.n_epochs, record.epoch + 1)  # each island's, as n_epochs
    if on_epoch is not None:
        for record in records:
            on_epoch(record, search)


def _stop_reason(search, left: float | None) -> str:
    """Why every island stops after this round, or "" to go on: τ* is exact (one island's
    exact fit ends the search), every live island has stopped by its own rule (the
    reason most of them give), none is left, or the wall clock is up."""
    best, archipelago = search.state.best, search.archipelago
    if best is not None and best.is_exact(search.exact_loss, search.scorer.reward.n_samples):
        return "tol"
    if not archipelago.live:
        return "islands_lost"
    if not archipelago.running:
        stops = [archipelago.stops[i] for i in archipelago.live]
        return max(sorted(set(stops)), key=stops.count)
    if left is not None and left <= 0:
        return "max_time"
    return ""


class IslandWorkers:
    """The Dask client the islands run on, and the worker of each island.

    Used as a context manager around a fit: on exit it frees the islands' memory on the
    workers and closes a client it connected; the clusters stay (a local one is kept for
    the next fit, :func:`close_local_clusters`).

    Parameters
    ----------
    scheduler : str or None
        A scheduler's address, or None: the client of an active
        ``joblib.parallel_config(backend="dask")``, else a local cluster of
        ``n_islands`` single-threaded processes (started by the first fit that needs it
        and kept for the next).
    n_islands : int
        k, the islands to place.
    """

    def __init__(self, scheduler: Any, n_islands: int) -> None:
        self.scheduler, self.n_islands = scheduler, n_islands
        self.client = None
        self._own_client = False
        self.fit_key = uuid.uuid4().hex  # a fit's islands, apart from other fits' on a worker
        self.workers: dict[int, str] = {}  # island -> worker address
        self._rounds: dict = {}  # island -> future of the round under way
        self._scheduler_lost = False  # it stopped answering: every island is lost

    # -- connecting
    def __enter__(self) -> "IslandWorkers":
        try:
            from dask.distributed import Client
        except ImportError:
            raise ImportError(
                "n_islands > 1 runs the islands on Dask, which is not installed: "
                "pip install 'cadsr-sklearn[distributed]' (or n_islands=1).") from None
        if isinstance(self.scheduler, str):
            try:
                self.client = Client(self.scheduler, timeout=_CONNECT_TIMEOUT,
                                     set_as_default=False)
            except (OSError, TimeoutError) as err:
                raise ValueError(f"scheduler={self.scheduler!r}: cannot reach the Dask "
                                 f"scheduler ({err}).") from None
            self._own_client = True
        else:
            self.client = _joblib_dask_client() or _local_client(self.n_islands)
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.workers:  # every cluster here outlives the fit
                self._leave_all()
        finally:
            if self._own_client:
                self.client.close()

    @property
    def address(self) -> str:
        """The scheduler's address, for another fit to run on the same workers."""
        return self.client.scheduler.address

    def _alive(self) -> set[str]:
        """The addresses of the workers alive: none once the scheduler cannot be reached
        (the client gives up reconnecting after some 10 s), so that the search ends with
        what the head holds."""
        if not self._scheduler_lost:
            try:
                return set(self.client.nthreads())
            except (OSError, TimeoutError):  # distributed's CommClosedError is an OSError
                self._scheduler_lost = True
        return set()

    def _key(self, island: int) -> str:
        return f"{self.fit_key}-{island}"

    # -- the islands
    def settle(self, archipelago: Archipelago) -> None:
        """Each live island to a worker of its own (round-robin where there are more
        islands than workers), with its whole search."""
        addresses = sorted(self._alive())
        if not addresses:
            raise RuntimeError("The Dask cluster has no workers to run the islands on.")
        futures = {}
        for n, i in enumerate(archipelago.live):
            self.workers[i] = addresses[n % len(addresses)]
            # the search (its data with it) goes to its worker as data, not inside a task
            # (Dask warns of a task's "large graph" from some 10 MB, a table of 100 000 rows)
            search = self.client.scatter(archipelago.islands[i], workers=[self.workers[i]],
                                         hash=False)
            futures[i] = self._submit(i, _settle, self._key(i), search)
        self._wait(archipelago, futures)

    def round(self, archipelago: Archipelago, migrants: dict[int, list[Candidate]],
              seconds_left: float | None) -> dict[int, RoundReport]:
        """One round of every live island that has budget left; islands whose worker died
        are reported and dropped."""
        self._rounds = {i: self._submit(i, _round, self._key(i), migrants.get(i, []),
                                        archipelago.migrant_share,
                                        archipelago.migration_every, seconds_left)
                        for i in archipelago.running}
        reports = self._wait(archipelago, self._rounds)
        self._rounds = {}
        return reports

    def interrupt(self, archipelago: Archipelago) -> dict[int, RoundReport]:
        """After Ctrl-C on the head: the rounds under way, each stopped after its current
        epoch; what they send back."""
        rounds, self._rounds = self._rounds, {}
        if not rounds:
            return {}
        alive = self._alive()
        for i in rounds:
            if self.workers[i] in alive:
                self.client.run(_interrupt, self._key(i), workers=[self.workers[i]])
        return self._wait(archipelago, rounds)

    def gather(self, archipelago: Archipelago) -> None:
        """Every live island's whole search, into ``archipelago`` (for a checkpoint or a
        warm start)."""
        futures = {i: self._submit(i, _gathered, self._key(i)) for i in archipelago.live}
        for i, search in self._wait(archipelago, futures).items():
            archipelago.islands[i] = search

    def _submit(self, island: int, function: Callable, *args):
        return self.client.submit(function, *args, workers=[self.workers[island]],
                                  allow_other_workers=False, pure=False,
                                  key=f"cadsr-{function.__name__.strip('_')}-{uuid.uuid4().hex}")

    def _wait(self, archipelago: Archipelago, futures: dict) -> dict[int, Any]:
        """The results of ``futures`` (island -> future), as they come; an island whose
        worker died is lost (reported, dropped from ``archipelago``); Ctrl-C cancels them."""
        results, pending = {}, dict(futures)
        finished = _any_done(pending.values())
        try:
            while pending:
                finished.wait(_POLL_SECONDS)  # one finished, or time to look at the workers
                finished.clear()
                for i, future in list(pending.items()):
                    if future.done():
                        del pending[i]
                        if future.status == "finished":
                            results[i] = future.result()
                        else:
                            self._lose(archipelago, i, self._why_failed(future))
                alive = self._alive() if pending else set()
                for i in [i for i in pending if self.workers[i] not in alive]:
                    pending.pop(i).cancel()
                    self._lose(archipelago, i, "the scheduler cannot be reached"
                               if self._scheduler_lost else "its worker died")
        except BaseException:  # Ctrl-C: what is not a round (kept for interrupt()) is dropped
            for i, future in pending.items():
                if self._rounds.get(i) is not future:
                    future.cancel()
            raise
        return results

    def _why_failed(self, future) -> str:
        if future.status == "cancelled":  # by the client, when it loses the scheduler
            self._alive()
        return "the scheduler cannot be reached" if self._scheduler_lost else _failure(future)

    def _lose(self, archipelago: Archipelago, island: int, why: str) -> None:
        if island in archipelago.lost:
            return
        archipelago.lost.append(island)
        warn_user(f"Island {island} of {len(archipelago.islands)} was lost ({why}, worker "
                  f"{self.workers.get(island)}); the search goes on with the others, and the "
                  "formulas it had sent are kept.", RuntimeWarning)

    def _leave_all(self) -> None:
        """Free the islands' memory on the workers still alive (a few seconds at most:
        a worker still in a round cancelled by Ctrl-C frees it when the round ends)."""
        alive = self._alive()
        left = [self._submit(i, _leave, self._key(i))
                for i, address in self.workers.items() if address in alive]
        deadline = time.monotonic() + 5
        finished = _any_done(left)
        while not all(f.done() for f in left) and time.monotonic() < deadline:
            finished.wait(_POLL_SECONDS)
            finished.clear()


def _any_done(futures) -> threading.Event:
    """An event set whenever one of ``futures`` finishes (or fails, or is cancelled)."""
    event = threading.Event()
    for future in futures:
        future.add_done_callback(lambda _: event.set())
    return event


#: The local clusters that fits with islands started, by their number of workers, each with
#: its client: kept for the next fit (as joblib keeps its loky workers: a cluster takes
#: seconds to start), closed when Python exits or by :func:`close_local_clusters`.
_LOCAL_CLUSTERS: dict[int, tuple] = {}
_LOCAL_LOCK = threading.Lock()


def _local_client(n_workers: int):
    """The client of the kept local cluster of ``n_workers`` processes, started if none is
    running."""
    from dask.distributed import Client, LocalCluster

    with _LOCAL_LOCK:
        kept = _LOCAL_CLUSTERS.pop(n_workers, None)
        if kept is not None and kept[1].status == "running" and kept[0].status.name == "running":
            _LOCAL_CLUSTERS[n_workers] = kept
            return kept[1]
        if kept is not None:
            _close(*kept)
        cluster = _local_cluster(LocalCluster, n_workers)
        if not _LOCAL_CLUSTERS:
            atexit.unregister(close_local_clusters)
            atexit.register(close_local_clusters)
        _LOCAL_CLUSTERS[n_workers] = (cluster, Client(cluster, set_as_default=False))
        return _LOCAL_CLUSTERS[n_workers][1]


def close_local_clusters() -> None:
    """Close the local Dask clusters that fits with islands started and kept for the next
    fit (Python closes them when it exits)."""
    with _LOCAL_LOCK:
        for cluster, client in _LOCAL_CLUSTERS.values():
            _close(cluster, client)
        _LOCAL_CLUSTERS.clear()


def _close(cluster, client) -> None:
    try:
        client.close()
        cluster.close()
    except Exception:  # noqa: BLE001 - a cluster already gone (its processes killed) is closed
        pass


def _local_cluster(LocalCluster, n_workers: int):
    """A local cluster of ``n_workers`` single-threaded processes, or an error that says
    what to do when its processes cannot start."""
    import dask

    try:
        with dask.config.set(WORKER_CONFIG), _sigint_ignored():
            # a free port for the dashboard (8787 may be another cluster's); Dask's own
            # warnings (a task cancelled by Ctrl-C) are not the user's business
            return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                dashboard_address=":0", silence_logs=logging.ERROR)
    except RuntimeError as err:
        raise RuntimeError(
            f"The local Dask cluster for n_islands={n_workers} did not start ({err}). Its "
            "worker processes import the script that started them: in a script, fit under "
            "`if __name__ == \"__main__\":`, or start a cluster yourself (`dask scheduler`, "
            "`dask worker ADDRESS`) and pass scheduler=ADDRESS.") from err


@contextmanager
def _sigint_ignored():
    """SIGINT ignored while the local cluster's processes start, which they inherit: a
    Ctrl-C in a terminal reaches every process of its group, and the head, not its
    workers, is the one to stop the search (it asks the islands to stop after their
    epoch). Only the main thread sets signal handlers; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _failure(future) -> str:
    """Why ``future`` did not finish, in words."""
    try:
        error = future.exception(timeout=1)
    except Exception as err:  # noqa: BLE001 - cancelled, or the scheduler is gone
        error = err
    return f"{type(error).__name__}: {error}" if error is not None else future.status


def _joblib_dask_client():
    """The client of an active ``joblib.parallel_config(backend="dask")``, or None."""
    try:
        from joblib.parallel import get_active_backend
    except ImportError:
        return None
    backend, _ = get_active_backend()
    return getattr(backend, "client", None) if "Dask" in type(backend).__name__ else None

