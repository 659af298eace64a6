"""Budgets and interruption: max_time, max_evaluations, and Ctrl-C (a real SIGINT) during fit.

A Ctrl-C during any phase of an epoch (sampling, constant fitting, scoring, the
policy update) stops the search and keeps the best formula found so far; the
progress bar is closed either way.
"""

import dataclasses
import inspect
import json
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import joblib
import numpy as np
import pytest
from budgets import TINY_MODEL

import sympy
import torch
from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                   register_optimizer_step_pre_hook)

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.search import checkpoint
from cadsr_sklearn.scoring import constant_fitter as constants
from cadsr_sklearn.reporting import progress
from cadsr_sklearn.search.refinement import pruning
from cadsr_sklearn.sampling import sampler
from cadsr_sklearn.search.refinement import stage as refinement
from cadsr_sklearn.scoring import scorer as scoring
from cadsr_sklearn.search.refinement import snapping
from cadsr_sklearn.search import training
from cadsr_sklearn.search.refinement.baselines import baseline_expressions
from cadsr_sklearn.search.refinement.pruning import prune
from cadsr_sklearn.front.uncertainty import constant_uncertainty

# the paper's loop (no leaves, no edits): one batch of 64 and one scorer call an epoch, which
# the max_evaluations cases count and the Ctrl-C cases interrupt
FAST = dict(TINY_MODEL, batch_size=64, linear_terms=0, unary_edits=0)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hard():
    """Noisy data: no early stop by ``tol`` within these budgets."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 200)
    return X, y


# ------------------------------------------------------------------ budgets
class _EpochClock:
    """The clock of the search and of the work after it, moved only at the end of each
    epoch, by the seconds the test gives: the max_time rule without timing anything."""

    def __init__(self, epoch_seconds):
        self.now, self._epoch_seconds = 1024.0, iter(epoch_seconds)

    def perf_counter(self) -> float:
        return self.now

    def epoch_ended(self) -> None:
        self.now += next(self._epoch_seconds)


@pytest.fixture
def epoch_clock(monkeypatch):
    hooks = []

    def install(epoch_seconds) -> _EpochClock:
        clock = _EpochClock(epoch_seconds)
        for module in (training, refinement, pruning, snapping):  # the loop, then the answer
            monkeypatch.setattr(module, "time", SimpleNamespace(perf_counter=clock.perf_counter))
        steps = []

        def after_step(optimizer, args, kwargs):
            # torch's hook on every optimizer's step: the policy update, an epoch's last work
            steps.append(True)
            if len(steps) % FAST["steps_per_epoch"] == 0:
                clock.epoch_ended()

        hooks.append(register_optimizer_step_post_hook(after_step))
        return clock

    yield install
    for hook in hooks:
        hook.remove()


@pytest.mark.parametrize("epoch_seconds, times", [
    # another 0.25 s epoch would end at 2.0 s: the search stops at 1.75 s
    ([0.25] * 20, [0.25 * k for k in range(1, 8)]),
    # after a 1 s epoch at 1.5 s, another like it would overrun: it stops there
    ([0.25, 0.25, 1.0] + [0.25] * 20, [0.25, 0.5, 1.5]),
    # an epoch longer than the one before it overruns, by less than itself
    ([0.25] * 6 + [1.0] + [0.25] * 20, [0.25 * k for k in range(1, 7)] + [2.5]),
], ids=["steady", "a slow epoch", "a slower epoch than the last"])
def test_max_time_stops_before_an_epoch_like_the_last_would_overrun(hard, epoch_clock,
                                                                    epoch_seconds, times):
    X, y = hard
    epoch_clock(epoch_seconds)
    # more epochs than the clock allows: a clock that never moves fails here, not hangs
    model = CADSRRegressor(n_epochs=30, max_time=2.0, **FAST).fit(X, y)
    assert model.stop_reason_ == "max_time"
    assert [h["time"] for h in model.history_] == times  # the search's own clock


@pytest.mark.parametrize("budget, expected", [(192, 192), (200, 256), (1, 64)])
def test_max_evaluations_exactly_or_within_one_batch(hard, budget, expected):
    X, y = hard
    model = CADSRRegressor(n_epochs=1000, max_evaluations=budget, **FAST).fit(X, y)
    assert model.stop_reason_ == "max_evaluations"
    assert model.n_evaluations_ == expected  # batches of 64: the first batch that reaches it
    assert budget <= model.n_evaluations_ < budget + FAST["batch_size"]
    assert model.history_[-1]["evaluations"] == model.n_evaluations_


def test_max_evaluations_stops_the_proposers_after_the_policy(hard):
    """With the default proposers (linear leaves, unary edits) the count passes the budget
    by one proposal at most: once a batch reaches it, no proposer after the policy runs."""
    X, y = hard
    params = dict(FAST, linear_terms=3, unary_edits=2)
    model = CADSRRegressor(n_epochs=1000, max_evaluations=192, **params).fit(X, y)
    assert model.stop_reason_ == "max_evaluations"
    before, last = model.history_[-2]["evaluations"], model.history_[-1]
    assert before < 192 <= model.n_evaluations_
    if before + last["proposed_policy"] >= 192:  # the policy's batch reached it
        assert last["proposed_linear"] == last["proposed_unary_edit"] == 0
    elif before + last["proposed_policy"] + last["proposed_linear"] >= 192:  # the leaves did
        assert last["proposed_unary_edit"] == 0
    assert model.n_evaluations_ - 192 < max(64, last["proposed_linear"],
                                            last["proposed_unary_edit"])
    # without the stop, the epoch would have gone on to the other proposers
    assert any(h["proposed_linear"] > 0 and h["proposed_unary_edit"] > 0
               for h in model.history_[:-1])


def test_max_evaluations_stops_the_genetic_generations(hard):
    """No generation starts once the budget is spent: the count passes it by at most one
    generation's children (here 64)."""
    X, y = hard
    params = dict(FAST, genetic_generations=20, genetic_population=64)
    model = CADSRRegressor(n_epochs=1000, max_evaluations=300, **params).fit(X, y)
    assert model.stop_reason_ == "max_evaluations"
    assert 300 <= model.n_evaluations_ < 300 + 64


# -------------------------------------------------- Ctrl-C in every phase
def _interrupt_on_call(monkeypatch, owner, name, call):
    original = getattr(owner, name)
    calls = {"n": 0}

    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)


@pytest.fixture
def interrupt_policy_update():
    """Ctrl-C in the policy update of epoch ``call``, at its first GRPO step: torch's hook
    on every optimizer's step (the policy's, after the epoch's batch was scored)."""
    hooks = []

    def install(call):
        steps = []

        def interrupt(optimizer, args, kwargs):
            steps.append(True)
            if len(steps) == (call - 1) * FAST["steps_per_epoch"] + 1:
                raise KeyboardInterrupt

        hooks.append(register_optimizer_step_pre_hook(interrupt))

    yield install
    for hook in hooks:
        hook.remove()


@pytest.mark.parametrize(
    "owner, name",
    [
        (sampler.Sampler, "sample_unique"),  # sampling
        (constants.ConstantFitter, "fit"),  # Levenberg–Marquardt
        (scoring.Scorer, "__call__"),  # constants + rewards
        (None, None),  # GRPO steps: torch's hook on the optimizer's step
    ],
    ids=["sampling", "constant fitting", "scoring", "policy update"],
)
def test_ctrl_c_in_any_phase_keeps_the_best_and_closes_the_bar(hard, monkeypatch,
                                                               interrupt_policy_update,
                                                               owner, name):
    X, y = hard
    closed = []
    original_close = progress.Progress.close
    monkeypatch.setattr(
        progress.Progress, "close",
        lambda self, front=None: (closed.append(True), original_close(self, front))
    )
    if owner is None:
        interrupt_policy_update(call=3)
    else:
        _interrupt_on_call(monkeypatch, owner, name, call=3)
    model = CADSRRegressor(n_epochs=100, verbose=1, **FAST).fit(X, y)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert model.n_epochs_ == 2 and len(model.history_) == 2
    assert np.all(np.isfinite(model.predict(X)))
    assert closed == [True]


def test_ctrl_c_while_the_front_is_refitted_after_the_search_keeps_the_best(monkeypatch):
    # The refit of the front after the last epoch (refinement.refine) is outside the
    # loop's try. 400 rows screened on 64: the front holds screened fits for it to refit.
    # Within the epochs, only the scoring of a batch (Scorer.__call__) refits on all rows
    # (its leaders'); a refit on all rows no batch asked for is the front's, after the search.
    after_the_search, scoring_a_batch = [], []
    score, refit = scoring.Scorer.__call__, scoring.Scorer.refit_on_all_rows

    def scored(self, expressions):
        scoring_a_batch.append(True)
        try:
            return score(self, expressions)
        finally:
            scoring_a_batch.pop()

    def interrupted_after_the_search(self, candidates):
        if not scoring_a_batch:
            after_the_search.append(True)
            raise KeyboardInterrupt
        return refit(self, candidates)  # the batch leaders' refits within the epochs

    monkeypatch.setattr(scoring.Scorer, "__call__", scored)
    monkeypatch.setattr(scoring.Scorer, "refit_on_all_rows", interrupted_after_the_search)
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 400)
    model = CADSRRegressor(n_epochs=2, const_screen_samples=64, warm_start=True, **FAST).fit(X, y)
    assert after_the_search == [True]
    assert model.interrupted_ and model.stop_reason_ == "interrupted" and model.n_epochs_ == 2
    # τ* as the loop left it, neither pruned nor snapped, and a usable model
    search = checkpoint.loads(model.search_state_, torch.device("cpu")).search
    assert model.best_expression_.key == search.state.best.expression.key
    assert model.unsnapped_expression_.key == model.best_expression_.key
    y_pred, y_std = model.predict(X, return_std=True)
    assert np.all(np.isfinite(y_pred)) and np.all(np.isfinite(y_std))
    # the standard errors of each formula are those of the rows its constants were
    # fitted on: the 64 screening rows for the fits the refit did not reach
    state = search.state
    members = {c.expression.key: c for c in [*state.hall_of_fame.by_complexity.values(),
                                             state.best]}
    # the baselines, scored after the loop, were fitted on all rows
    lines = [row for row in model.pareto_front_ if row.expression.key not in members]
    assert [row.expression.tokens for row in lines] == [
        e.tokens for e in baseline_expressions(model.best_expression_.library)[2:]]
    assert [len(row.uncertainty.standard_errors) for row in lines] == [2]
    assert all(row.constants.uncertainty.dof == 400 - 2 for row in lines)
    fits = [(row, members[row.expression.key]) for row in model.pareto_front_
            if row not in lines]
    assert [member.screened for _, member in fits] == [True, True, False]
    for row, member in fits:
        rows = member.fitted_rows
        assert len(rows) == (64 if member.screened else 400)
        np.testing.assert_array_equal(
            row.uncertainty.standard_errors,
            constant_uncertainty(row.expression, X, y, rows=rows).standard_errors)
        assert row.constants.uncertainty.dof == len(rows) - len(row.constants.names)


def test_ctrl_c_while_the_front_is_fitted_on_every_row_keeps_the_loops_fits(monkeypatch):
    # 3000 rows: the loop fits constants on 1000 of them (screened on 256), the answer's
    # scorer on all 3000. A Ctrl-C in the answer's first fit after the loop drops that
    # stage whole: the front is the loop's own fits, each knowing the rows it was fitted on.
    interrupted, refit = [], scoring.Scorer.refit

    def refit_interrupted_once(self, expressions, fresh_starts=True):
        if len(self.fitter.rows_) == 3000 and not interrupted:  # the answer's scorer
            interrupted.append(True)
            raise KeyboardInterrupt
        return refit(self, expressions, fresh_starts)

    monkeypatch.setattr(scoring.Scorer, "refit", refit_interrupted_once)
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(3000, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 3000)
    model = CADSRRegressor(n_epochs=2, warm_start=True, **FAST).fit(X, y)
    assert interrupted == [True] and model.interrupted_ and model.n_epochs_ == 2
    state = checkpoint.loads(model.search_state_, torch.device("cpu")).search.state
    members = {c.expression.key: c for c in [*state.hall_of_fame.by_complexity.values(),
                                             state.best]}
    fits = [(row, members[row.expression.key]) for row in model.pareto_front_
            if row.expression.key in members and row.expression.n_fitted]
    assert fits and {len(member.fitted_rows) for _, member in fits} <= {256, 1000}
    for row, member in fits:
        np.testing.assert_array_equal(
            row.uncertainty.standard_errors,
            constant_uncertainty(row.expression, X, y, rows=member.fitted_rows).standard_errors)
    y_pred, y_std = model.predict(X, return_std=True)
    assert np.all(np.isfinite(y_pred)) and np.all(np.isfinite(y_std))


def test_a_ctrl_c_drops_the_stage_it_cuts_short_whole(monkeypatch):
    # A Ctrl-C in the snapping of the front's second formula, after τ* was snapped: the
    # answer is τ* unsnapped, and no snapped formula of the stage reaches the front.
    snapped, snap = [], refinement.snap

    def snap_then_interrupt(candidate, *args, **kwargs):
        if snapped:
            raise KeyboardInterrupt
        snapped.append(snap(candidate, *args, **kwargs))
        return snapped[-1]

    monkeypatch.setattr(refinement, "snap", snap_then_interrupt)
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2, size=(200, 2))
    y = 2.7 * X[:, 0] ** 1.3 + 0.8 * X[:, 1] + rng.normal(0, 0.05, 200)  # constants to snap
    model = CADSRRegressor(n_epochs=6, warm_start=True, **FAST).fit(X, y)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    state = checkpoint.loads(model.search_state_, torch.device("cpu")).search.state
    # τ* was snapped (to another formula) before the Ctrl-C: that snap is dropped too
    [tau_snapped] = snapped
    assert tau_snapped.expression.key != state.best.expression.key
    assert model.best_expression_.key == model.unsnapped_expression_.key
    assert model.best_expression_.key == state.best.expression.key
    assert tau_snapped.expression.key not in {row.expression.key for row in model.pareto_front_}


def test_progress_bar_ends_on_the_pruned_formula(hard, capsys, monkeypatch):
    # Pruning runs after the last epoch; the bar's last frame must show its result. The
    # search hands prune its scorer's refit: there, the first edit scored becomes x0 + x1
    # (its real fit, the criterion raised above τ*'s) and no later edit beats it.
    from cadsr_sklearn.expressions.expression import Expression
    from cadsr_sklearn.scoring.scorer import Candidate

    refit, pruning_calls = scoring.Scorer.refit, []

    def refit_when_pruning(self, expressions, *args, **kwargs):
        if inspect.currentframe().f_back.f_code is not prune.__code__:
            return refit(self, expressions, *args, **kwargs)
        pruning_calls.append(True)
        rest = [Candidate(e, reward=-math.inf, loss=math.inf) for e in expressions[1:]]
        if len(pruning_calls) > 1:
            return [Candidate(expressions[0], reward=-math.inf, loss=math.inf), *rest]
        edited = Expression.from_names(["add", "x0", "x1"], expressions[0].library,
                                       order="prefix")
        (fitted,) = refit(self, [edited], *args, **kwargs)
        return [dataclasses.replace(fitted, criterion=1e300), *rest]

    monkeypatch.setattr(scoring.Scorer, "refit", refit_when_pruning)
    X, y = hard
    CADSRRegressor(n_epochs=2, verbose=1, **FAST).fit(X, y)
    assert pruning_calls  # prune scored its edits with the scorer's refit
    last = capsys.readouterr().err.strip().split("\r")[-1]
    assert "y = x0 + x1" in last


def _state(epochs: int):
    """What the progress bar reads of the loop's state after ``epochs`` epochs of a call."""
    from types import SimpleNamespace

    from cadsr_sklearn.scoring.scorer import HallOfFame
    from cadsr_sklearn.search.training import CallProgress

    return SimpleNamespace(best=None, hall_of_fame=HallOfFame(), call=CallProgress(epochs))


def _record(epoch: int, seconds: float):
    """What the progress bar reads of an epoch's record."""
    from types import SimpleNamespace

    return SimpleNamespace(epoch=epoch, time=seconds)


def test_progress_bar_measures_the_budget_used_and_never_goes_back():
    bar = progress.Progress(1000, 10.0, 1, 1.0, ["x0"], np.zeros((1, 1)))
    try:
        shown = []
        # a slow warm-up epoch, then fast ones, then an epoch budget nearly spent
        for epoch, seconds in [(0, 1.0), (1, 1.5), (2, 1.6), (3, 1.6), (899, 5.0), (999, 6.0)]:
            bar.update(_record(epoch, seconds), _state(epoch + 1))
            shown.append(bar.bar.n)
        assert bar.bar.total == 1000
        assert shown == sorted(shown)  # never backwards
        assert shown[0] == 100  # 1 s of 10
        assert shown[-1] == 1000  # the epochs ran out first
    finally:
        bar.close()
    huge = progress.Progress(5, 1e308, 1, 1.0, ["x0"], np.zeros((1, 1)))  # no overflow
    huge.update(_record(0, 0.0), _state(1))
    assert huge.bar.n == 200
    huge.close()


def test_progress_line_fits_an_80_column_terminal_and_shows_the_formula(hard, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    X, y = hard
    CADSRRegressor(n_epochs=2, verbose=1, **FAST).fit(X, y)
    frames = [f for f in capsys.readouterr().err.replace("\n", "\r").split("\r") if f.strip()]
    assert all(len(f) <= 80 for f in frames)
    assert "y = " in frames[-1] and "R2=" in frames[-1]


def test_progress_shows_faithful_constants():
    from cadsr_sklearn.expressions.expression import Expression
    from cadsr_sklearn.expressions.library import Library

    lib = Library(1)
    X = np.linspace(0.5, 2.0, 50)[:, None]
    # 1.0000061**x0 - 0.9999896: four digits would show 1.0**x0 - 1.0, identically 0
    tree = Expression.from_names(["sub", "pow", "c", "x0", "c"], lib, [1.0000061, 0.9999896],
                                 order="prefix")
    shown = progress.Progress(5, None, 0, 1.0, ["x0"], X).formula(tree)
    values = sympy.lambdify(sympy.Symbol("x0"), sympy.sympify(shown))(X[:, 0])
    reference = tree.evaluate(X)
    assert np.max(np.abs(values - reference)) <= 1e-4 * np.max(np.abs(reference))


def test_verbose_2_prints_the_front_as_a_table(hard, capsys):
    X, y = hard
    CADSRRegressor(n_epochs=2, verbose=2, **FAST).fit(X, y)
    err = capsys.readouterr().err
    assert "formula" in err and "R2" in err


def test_ctrl_c_before_the_first_epoch_ends_propagates(hard, monkeypatch):
    # nothing was found yet, so there is nothing to keep: the interrupt goes on to the caller
    X, y = hard
    _interrupt_on_call(monkeypatch, constants.ConstantFitter, "fit", call=1)
    with pytest.raises(KeyboardInterrupt):
        CADSRRegressor(n_epochs=100, **FAST).fit(X, y)


# ------------------------------------------------------------- a real SIGINT
def _default_sigint():
    # A child of a shell's background job may start with SIGINT ignored, and Python
    # keeps it ignored: restore the default so Python installs KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run_and_interrupt(argv, cwd, stderr_path, after_first_epoch_s=1.0, timeout=90):
    """Start ``argv``, wait until its progress bar shows a best formula, send SIGINT."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    with open(stderr_path, "w") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=err, text=True,
                                env=env, preexec_fn=_default_sigint)
        try:
            deadline = time.monotonic() + timeout
            while "R2=" not in Path(stderr_path).read_text():  # the bar after epoch 1
                assert proc.poll() is None, Path(stderr_path).read_text()
                assert time.monotonic() < deadline, "no epoch finished in time"
                time.sleep(0.1)
            time.sleep(after_first_epoch_s)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=timeout)
            stopped_after = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode, out, Path(stderr_path).read_text(), stopped_after


FIT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import joblib, numpy as np
    from cadsr_sklearn import CADSRRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 300)
    model = CADSRRegressor(max_time=120, batch_size=100, ff_dim=64, device="cpu", random_state=0,
                           verbose=1)
    model.fit(X, y)
    joblib.dump(model, sys.argv[1])
    print(json.dumps({"interrupted": model.interrupted_, "stop": model.stop_reason_,
                      "epochs": model.n_epochs_, "formula": str(model.expression_)}))
    """
)


@pytest.mark.slow  # a fresh interpreter: imports torch
def test_sigint_during_fit_keeps_the_best_formula(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(FIT_SCRIPT)
    model_path = tmp_path / "m.joblib"
    code, out, err, stopped_after = _run_and_interrupt(
        [sys.executable, str(script), str(model_path)], tmp_path, tmp_path / "err.txt")
    assert code == 0, err
    report = json.loads(out.strip().splitlines()[-1])
    assert report["interrupted"] and report["stop"] == "interrupted" and report["epochs"] >= 1
    assert stopped_after < 30  # the 120 s budget was cut short
    assert "Traceback" not in err and err.endswith("\n")  # the bar was closed
    model = joblib.load(model_path)
    assert model.interrupted_ and str(model.expression_) == report["formula"]
    assert np.all(np.isfinite(model.predict(np.zeros((3, 2)))))


@pytest.mark.slow  # a fresh interpreter: imports torch
def test_sigint_during_cadsr_fit_saves_the_model(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 300)
    lines = ["a,b,y"] + [f"{a:.17g},{b:.17g},{t:.17g}" for (a, b), t in zip(X, y)]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n")
    argv = [sys.executable, "-m", "cadsr_sklearn", "fit", "data.csv", "--target", "y",
            "--max-time", "60", "--out", "m.joblib", "--device", "cpu", "--batch-size", "100"]
    code, out, err, stopped_after = _run_and_interrupt(argv, tmp_path, tmp_path / "err.txt")
    assert code == 0, err
    assert stopped_after < 30
    assert "Traceback" not in err
    assert re.search(r"interrupted", out), out
    model = joblib.load(tmp_path / "m.joblib")
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    pd = pytest.importorskip("pandas")
    assert np.all(np.isfinite(model.predict(pd.DataFrame(X, columns=["a", "b"]))))
