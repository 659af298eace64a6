"""Budgets and interruption: max_time, max_evaluations, and Ctrl-C (a real SIGINT) during fit.

A Ctrl-C during any phase of an epoch (sampling, constant fitting, scoring, the
policy update) stops the search and keeps the best formula found so far; the
progress bar is closed either way.
"""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import joblib
import numpy as np
import pytest
from budgets import TINY_MODEL

import sympy

from cadsr_sklearn import CADSRRegressor, constants, progress, sampler, scoring, training

FAST = dict(TINY_MODEL, batch_size=64)  # the max_evaluations cases count batches of 64
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hard():
    """Noisy data: no early stop by ``tol`` within these budgets."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 200)
    return X, y


# ------------------------------------------------------------------ budgets
def test_max_time_is_honoured_within_ten_percent_plus_one_epoch(hard):
    X, y = hard
    budget = 2.0
    start = time.perf_counter()
    model = CADSRRegressor(n_epochs=10**6, max_time=budget, **FAST).fit(X, y)
    wall = time.perf_counter() - start
    times = np.array([h["time"] for h in model.history_])
    longest = float(np.max(np.diff(times, prepend=0.0)))
    assert model.stop_reason_ == "max_time"
    assert wall <= 1.1 * budget + longest, (wall, longest)
    assert times[-1] >= budget - longest  # and it used the budget


@pytest.mark.parametrize("budget, expected", [(192, 192), (200, 256), (1, 64)])
def test_max_evaluations_exactly_or_within_one_batch(hard, budget, expected):
    X, y = hard
    model = CADSRRegressor(n_epochs=1000, max_evaluations=budget, **FAST).fit(X, y)
    assert model.stop_reason_ == "max_evaluations"
    assert model.n_evaluations_ == expected  # batches of 64: the first batch that reaches it
    assert budget <= model.n_evaluations_ < budget + FAST["batch_size"]
    assert model.history_[-1]["evaluations"] == model.n_evaluations_


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


@pytest.mark.parametrize(
    "owner, name",
    [
        (sampler.Sampler, "sample_unique"),  # sampling
        (constants.ConstantFitter, "fit"),  # Levenberg–Marquardt
        (scoring.Scorer, "__call__"),  # constants + rewards
        (training, "_policy_update"),  # GRPO steps
    ],
    ids=["sampling", "constant fitting", "scoring", "policy update"],
)
def test_ctrl_c_in_any_phase_keeps_the_best_and_closes_the_bar(hard, monkeypatch, owner, name):
    X, y = hard
    closed = []
    original_close = progress.Progress.close
    monkeypatch.setattr(
        progress.Progress, "close", lambda self: (closed.append(True), original_close(self))
    )
    _interrupt_on_call(monkeypatch, owner, name, call=3)
    model = CADSRRegressor(n_epochs=100, verbose=1, **FAST).fit(X, y)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert model.n_epochs_ == 2 and len(model.history_) == 2
    assert np.all(np.isfinite(model.predict(X)))
    assert closed == [True]


def test_ctrl_c_while_the_front_is_refitted_after_the_search_keeps_the_best(hard, monkeypatch):
    # the refit of the front after the last epoch is outside the loop: Ctrl-C there too
    _interrupt_on_call(monkeypatch, scoring.Scorer, "refit_on_all_rows", call=1)
    X, y = hard
    model = CADSRRegressor(n_epochs=2, const_screen_samples=None, **FAST).fit(X, y)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert model.n_epochs_ == 2
    assert np.all(np.isfinite(model.predict(X)))


def test_progress_bar_ends_on_the_pruned_formula(hard, capsys, monkeypatch):
    # Pruning runs after the last epoch; the bar's last frame must show its result.
    from cadsr_sklearn.expression import Expression
    from cadsr_sklearn.scoring import Candidate

    def pruned(best, *args):
        edited = Expression.from_names(["add", "x0", "x1"], best.expression.library,
                                       order="prefix")
        return Candidate(edited, best.reward, best.loss)

    monkeypatch.setattr(training, "prune", pruned)
    X, y = hard
    CADSRRegressor(n_epochs=2, verbose=1, **FAST).fit(X, y)
    last = capsys.readouterr().err.strip().split("\r")[-1]
    assert "y = x0 + x1" in last


def _state(epochs: int):
    """What the progress bar reads of the loop's state after ``epochs`` epochs of a call."""
    from types import SimpleNamespace

    from cadsr_sklearn.scoring import HallOfFame
    from cadsr_sklearn.training import CallProgress

    return SimpleNamespace(best=None, hall_of_fame=HallOfFame(), call=CallProgress(epochs))


def test_progress_bar_measures_the_budget_used_and_never_goes_back():
    bar = progress.Progress(1000, 10.0, 1, 1.0, ["x0"], np.zeros((1, 1)))
    try:
        shown = []
        # a slow warm-up epoch, then fast ones, then an epoch budget nearly spent
        for epoch, seconds in [(0, 1.0), (1, 1.5), (2, 1.6), (3, 1.6), (899, 5.0), (999, 6.0)]:
            bar.update({"epoch": epoch, "time": seconds}, _state(epoch + 1))
            shown.append(bar.bar.n)
        assert bar.bar.total == 1000
        assert shown == sorted(shown)  # never backwards
        assert shown[0] == 100  # 1 s of 10
        assert shown[-1] == 1000  # the epochs ran out first
    finally:
        bar.close()
    huge = progress.Progress(5, 1e308, 1, 1.0, ["x0"], np.zeros((1, 1)))  # no overflow
    huge.update({"epoch": 0, "time": 0.0}, _state(1))
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
    from cadsr_sklearn.expression import Expression
    from cadsr_sklearn.library import Library

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
