"""Fault injection: a Ctrl-C (a real SIGINT) at evenly spaced moments of a fit.

SQLite tests recovery by injecting its fault at every point, not at the points someone
thought of; this does the same for Ctrl-C. For each size of table, a child process times
one uninterrupted fit (after a first one that compiles the kernels), then runs the same
fit ``--moments`` times, each time sending its own process SIGINT at the next of the
moments spaced evenly over that time. Every fit must return a model:

- its ``predict`` finite on the training rows;
- the formula it shows (SymPy, in the features' names) predicting what ``predict`` does;
- its formula file and its pickle loading back to a model that predicts the same.

Modes: ``fresh`` (a new search), ``warm_start`` (a continued search, Ctrl-C in the
continuation) and ``checkpoint`` (a fit saved as it goes is interrupted, then resumed from
its checkpoint to its end; both must give a model). A SIGINT that lands after the fit
returned (the run was faster than the one timed) is counted as missed, not as a pass.

    python perf/inject_interrupts.py --rows 300 3000 30000 --moments 24
    python perf/inject_interrupts.py --smoke
    python perf/inject_interrupts.py --islands 2 --rows 300 3000 --moments 12

With ``--islands K`` each fit is a search of K islands on a local Dask cluster (kept by the
child between fits), exchanging every 2 epochs: the Ctrl-C lands in the head while the islands
settle, run a round, are gathered or joined, or in the refinement after them. There the
search has a formula to keep once the head has joined a first round.

prints one line per moment that failed and a table of outcomes per size and mode; with
``--json PATH`` it also writes every outcome. Exit status 1 when any fit failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

MODES = ("fresh", "warm_start", "checkpoint")
_NEVER = 1e6  # seconds: a SIGINT that no fit here waits for

#: A fit of 8 epochs of 128 formulas: seconds at 30 000 rows, with a refit of its front on
#: every row (a row batch), a subsample of the rows (3000) or a screen only (300).
FIT = dict(n_epochs=8, batch_size=128, ff_dim=32, steps_per_epoch=2, max_length=20,
           device="cpu", random_state=0, verbose=0)
#: With islands: rounds of 2 epochs, so that a fit has four.
MIGRATION_EVERY = 2


@dataclass
class Outcome:
    """What one interrupted fit gave."""

    rows: int
    mode: str
    moment: float  # seconds after the fit's start the SIGINT was sent
    share: float  # the moment as a share of the timed fit
    hit: bool  # the SIGINT landed inside the fit (not after it returned)
    ok: bool
    early: bool  # KeyboardInterrupt left fit before its first epoch's update (allowed)
    interrupted: bool | None = None  # the model's interrupted_
    failure: str = ""  # the exception or failed check, with its last frames


def _data(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A law with constants on three features, 1 % noise: fronts with several rows."""
    rng = np.random.default_rng(rows)
    X = rng.uniform(0.5, 2.0, size=(rows, 3))
    y = 1.7 * X[:, 0] * X[:, 1] + np.sin(2.3 * X[:, 2])
    return X, y + 0.01 * np.std(y) * rng.normal(size=rows)


class _SigintAt:
    """Send this process SIGINT ``seconds`` from now, unless :meth:`cancel` comes first."""

    def __init__(self, seconds: float):
        self._lock = threading.Lock()
        self._armed = True
        self.sent, self.sent_at = False, math.inf
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._armed:
                self.sent, self.sent_at = True, time.perf_counter()
                os.kill(os.getpid(), signal.SIGINT)

    def cancel(self) -> None:
        with self._lock:
            self._armed = False
        self._timer.cancel()


def _check(model, X: np.ndarray, workdir: Path) -> str:
    """'' if the model predicts finite values that its shown formula, its formula file and its
    pickle all reproduce; else what failed."""
    import sympy

    from cadsr_sklearn import CADSRRegressor

    predicted = model.predict(X)
    if not np.all(np.isfinite(predicted)):
        return "predict is not finite"
    names = list(model.feature_names_in_) if hasattr(model, "feature_names_in_") else [
        f"x{i}" for i in range(X.shape[1])]
    shown = sympy.lambdify([sympy.Symbol(n) for n in names], model.sympy(), "numpy")
    with np.errstate(all="ignore"):
        by_formula = np.broadcast_to(np.asarray(shown(*X.T), dtype=float), predicted.shape)
    if not np.allclose(by_formula, predicted, rtol=1e-6, atol=1e-9 * np.abs(predicted).max()):
        return f"the shown formula {model.sympy()} does not predict what predict does"
    path = workdir / "model.json"
    model.save_formula(path)
    if not np.allclose(CADSRRegressor.load_formula(path).predict(X), predicted, rtol=1e-9, atol=0):
        return "the formula file predicts otherwise"
    if not np.array_equal(pickle.loads(pickle.dumps(model)).predict(X), predicted):
        return "the pickle predicts otherwise"
    return ""


class _FirstUpdate:
    """When the fit's first epoch updated its policy (torch's hook after every optimizer
    step), or with islands when the head joined their first round (their updates run on
    the workers): from then on the search has a formula to keep, and a Ctrl-C must not
    lose it."""

    def __init__(self):
        self.steps, self.at = 0, math.inf

    def __call__(self, optimizer, args, kwargs) -> None:
        self.steps += 1
        if self.steps == FIT["steps_per_epoch"]:
            self.at = time.perf_counter()

    @contextmanager
    def watching(self):
        """The hook on the optimizer, and on the head's join of the islands' rounds."""
        from torch.optim.optimizer import register_optimizer_step_post_hook

        from cadsr_sklearn.search import islands

        join = islands._join

        def joined(search, reports, *args, **kwargs):
            join(search, reports, *args, **kwargs)
            if reports and self.at == math.inf:
                self.at = time.perf_counter()

        hook = register_optimizer_step_post_hook(self)
        islands._join = joined
        try:
            yield self
        finally:
            hook.remove()
            islands._join = join


@dataclass
class _Run:
    """One fit with a SIGINT at a moment of it."""

    estimator: object
    model: object | None  # what fit returned; None where it raised
    hit: bool  # the SIGINT was sent before fit returned
    early: bool  # KeyboardInterrupt left fit before its first policy update (allowed)
    failure: str
    seconds: float = math.inf  # how long fit ran


def _interrupted_fit(make, X, y, seconds: float) -> _Run:
    """``make().fit(X, y)`` with a SIGINT ``seconds`` after its start. A KeyboardInterrupt
    that leaves ``fit`` before its first epoch updated the policy is what the docs promise
    (nothing to keep yet); after that it is a failure, as is any other exception. One that
    comes once ``fit``'s own work is done (its last step, setting ``guesses_``, ran: the
    SIGINT landed in scikit-learn's wrapper on the way out) is a Ctrl-C after the fit, as
    on the next line of the caller's program: the fitted estimator is the model."""
    estimator, model, first = make(), None, _FirstUpdate()
    before = estimator.__dict__.get("guesses_")  # a new list once this fit has finished
    watching = first.watching()
    watching.__enter__()
    started = time.perf_counter()
    alarm = _SigintAt(seconds)
    try:
        model = estimator.fit(X, y)
        alarm.cancel()
    except KeyboardInterrupt:
        alarm.cancel()
        if model is None and estimator.__dict__.get("guesses_") is not before:
            model = estimator  # on the way out of a finished fit
        if model is None:
            if alarm.sent_at > first.at:  # it escaped fit with a formula found
                return _Run(estimator, None, True, False, "KeyboardInterrupt escaped fit:\n"
                            + traceback.format_exc(limit=-6))
            return _Run(estimator, None, True, True, "")
    except Exception:  # noqa: BLE001 - any other escape is the failure being looked for
        alarm.cancel()
        return _Run(estimator, None, alarm.sent, False, traceback.format_exc(limit=-8))
    finally:
        watching.__exit__(None, None, None)
    return _Run(estimator, model, alarm.sent, False, "", time.perf_counter() - started)


def _child(rows: int, moments: dict[str, int], n_islands: int = 1) -> list[Outcome]:
    """Run in the child: for each mode, time the fit, then interrupt it at each moment."""
    # Python's own Ctrl-C handler, even where the child was started with SIGINT ignored (a
    # background job of a shell without job control)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    warnings.simplefilter("ignore")  # the interrupt's own warnings are not failures
    X, y = _data(rows)
    workdir = Path(tempfile.mkdtemp(prefix="cadsr-inject-"))
    fit = FIT if n_islands == 1 else dict(FIT, n_islands=n_islands,
                                          migration_every=MIGRATION_EVERY)
    return [o for mode, n in moments.items() for o in _mode(rows, mode, n, X, y, workdir, fit)]


def _mode(rows: int, mode: str, moments: int, X, y, workdir: Path,
          fit: dict = FIT) -> list[Outcome]:
    from cadsr_sklearn import CADSRRegressor

    checkpoint = workdir / "search.ckpt"

    def make(**extra):
        return CADSRRegressor(**{**fit, **extra})

    if mode == "warm_start":  # the model a warm start continues
        base = pickle.dumps(make(warm_start=True).fit(X, y))
        fresh = lambda: pickle.loads(base)  # noqa: E731
    elif mode == "checkpoint":
        fresh = lambda: make(checkpoint=str(checkpoint))  # noqa: E731
    else:
        fresh = make
    fresh().fit(X, y)  # compiles the kernels: not timed
    _clear(checkpoint)
    whole = min(_timed(fresh, X, y, checkpoint) for _ in range(2))  # the faster: most land
    outcomes = []
    for i in range(1, moments + 1):
        share = i / (moments + 1)
        run = _interrupted_fit(fresh, X, y, share * whole)
        if not run.hit:  # the fit ran faster than timed (a busy machine, then less busy)
            whole = min(whole, run.seconds)
        failure = run.failure or _outcome_failure(run, mode, X, workdir)
        if not failure and mode == "checkpoint":  # resumed from the checkpoint to its end
            resumed = _interrupted_fit(fresh, X, y, _NEVER)
            failure = resumed.failure or _outcome_failure(resumed, mode, X, workdir)
            failure = failure and "resumed: " + failure
        _clear(checkpoint)
        outcomes.append(Outcome(rows, mode, share * whole, share, run.hit, not failure,
                                run.early, None if run.model is None
                                else bool(run.model.interrupted_), failure or ""))
    return outcomes


def _timed(make, X, y, checkpoint: Path) -> float:
    """Seconds of an uninterrupted ``make().fit(X, y)``, from a fresh checkpoint."""
    started = time.perf_counter()
    make().fit(X, y)
    seconds = time.perf_counter() - started
    _clear(checkpoint)
    return seconds


def _outcome_failure(run: _Run, mode: str, X, workdir: Path) -> str:
    """What is wrong with the model ``run`` left: the one it returned, or after an early
    Ctrl-C in a warm start, the model it continued (still whole, and still continuable)."""
    if run.model is not None:
        return _safe_check(run.model, X, workdir)
    if mode == "warm_start":
        if getattr(run.estimator, "search_state_", None) is None:
            return "an early Ctrl-C in a warm start lost the search it continued"
        return _safe_check(run.estimator, X, workdir)
    return ""


def _safe_check(model, X, workdir) -> str:
    try:
        return _check(model, X, workdir)
    except Exception:  # noqa: BLE001
        return "check raised:\n" + traceback.format_exc(limit=-8)


def _clear(checkpoint: Path) -> None:
    for path in checkpoint.parent.glob(checkpoint.name + "*"):
        path.unlink()


def run(rows: int, moments: dict[str, int], timeout: float = 1800,
        n_islands: int = 1) -> list[Outcome]:
    """The outcomes of interrupted fits on ``rows`` rows, ``moments[mode]`` of each mode,
    in one child process; of searches of ``n_islands`` islands."""
    command = [sys.executable, __file__, "--child", str(rows), str(n_islands),
               *(f"{mode}:{n}" for mode, n in moments.items())]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the child for {rows} rows failed:\n{done.stderr[-4000:]}")
    return [Outcome(**json.loads(line)) for line in lines]


def table(outcomes: list[Outcome]) -> str:
    """The outcomes by size and mode, as a Markdown table."""
    lines = ["| rows | mode | moments | landed in fit | before 1st update | interrupted_ | "
             "failed |", "|---:|---|---:|---:|---:|---:|---:|"]
    groups = sorted({(o.rows, o.mode) for o in outcomes}, key=lambda g: (g[0], MODES.index(g[1])))
    for rows, mode in groups:
        group = [o for o in outcomes if (o.rows, o.mode) == (rows, mode)]
        lines.append(f"| {rows} | {mode} | {len(group)} | {sum(o.hit for o in group)} | "
                     f"{sum(o.early for o in group)} | {sum(bool(o.interrupted) for o in group)} | "
                     f"{sum(not o.ok for o in group)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[300, 3000, 30_000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--moments", type=int, default=24)
    parser.add_argument("--smoke", action="store_true", help="300 rows, 3 moments, fresh only")
    parser.add_argument("--islands", type=int, default=1, metavar="K",
                        help="searches of K islands on a local Dask cluster (default 1)")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        rows, n_islands, *modes = args.child
        moments = {mode: int(n) for mode, n in (m.split(":") for m in modes)}
        for outcome in _child(int(rows), moments, int(n_islands)):
            print(json.dumps(asdict(outcome)), flush=True)
        return 0
    if args.smoke:
        args.rows, args.modes, args.moments = [300], ["fresh"], 3
    outcomes = [o for rows in args.rows
                for o in run(rows, {mode: args.moments for mode in args.modes},
                             n_islands=args.islands)]
    for o in outcomes:
        if not o.ok:
            print(f"FAILED {o.rows} rows, {o.mode}, at {o.share:.0%} ({o.moment:.2f} s):\n"
                  f"{o.failure}\n")
    print(table(outcomes))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return int(any(not o.ok for o in outcomes))


if __name__ == "__main__":
    sys.exit(main())
