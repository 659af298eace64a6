"""warm_start, checkpoints and resuming: a search goes on as if it had never stopped."""

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
from budgets import TINY
from torch.optim.optimizer import register_optimizer_step_pre_hook

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.search import checkpoint
from cadsr_sklearn.search.checkpoint import Checkpoint
from cadsr_sklearn.cli import main

# tol=0: no early stop, so that epoch budgets decide where each search ends
SEARCH = dict(TINY, tol=0.0, n_jobs=1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, size=(120, 2))
    y = X[:, 0] ** 2 * np.sin(X[:, 1]) + 0.5 * X[:, 0]
    return X, y


def _rewards(model):
    return [record["best_reward"] for record in model.history_]


# ------------------------------------------------------------------ warm start
def test_warm_start_continues_as_one_longer_fit(data):
    X, y = data
    whole = CADSRRegressor(**{**SEARCH, "n_epochs": 8}).fit(X, y)
    model = CADSRRegressor(**{**SEARCH, "n_epochs": 5}, warm_start=True).fit(X, y)
    assert model.n_epochs_ == 5 and model.search_state_ is not None
    model.set_params(n_epochs=3).fit(X, y)  # n_epochs counts the new call
    assert model.n_epochs_ == 8
    assert [r["epoch"] for r in model.history_] == list(range(8))
    assert _rewards(model) == _rewards(whole)
    assert model.best_expression_.key == whole.best_expression_.key
    np.testing.assert_array_equal(model.predict(X), whole.predict(X))


def test_without_warm_start_nothing_of_the_search_is_kept(data):
    X, y = data
    model = CADSRRegressor(**SEARCH).fit(X, y)
    assert model.search_state_ is None
    again = CADSRRegressor(**SEARCH).fit(X, y).fit(X, y)  # starts over: the same formula
    assert again.n_epochs_ == SEARCH["n_epochs"]
    assert again.best_expression_.key == model.best_expression_.key
    warm = CADSRRegressor(**SEARCH, warm_start=True).fit(X, y)
    assert len(pickle.dumps(warm)) > len(pickle.dumps(model)) + len(warm.search_state_) // 2


def test_warm_start_on_new_rows_rescores_what_it_keeps(data):
    X, y = data
    model = CADSRRegressor(**SEARCH, warm_start=True).fit(X[:60], y[:60])
    model.fit(X, y)
    assert model.n_epochs_ == 2 * SEARCH["n_epochs"]
    # every formula offered is scored on the new data
    for row in model.equations_.to_dict("records"):
        mse = np.mean((row["expression"].evaluate(X) - y) ** 2)
        assert row["loss"] == pytest.approx(mse, rel=1e-9)


@pytest.mark.parametrize("change, message", [
    (dict(max_length=12), "max_length"),
    (dict(unary_operators=("sin",)), "unary_operators"),
])
def test_warm_start_refuses_a_search_of_another_shape(data, change, message):
    X, y = data
    model = CADSRRegressor(**SEARCH, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match=f"{message}.*warm_start=False"):
        model.set_params(**change).fit(X, y)
    with pytest.raises(ValueError, match="2 features, X has 3"):
        CADSRRegressor(**SEARCH, warm_start=True).fit(X, y).fit(np.c_[X, X[:, 0]], y)


# ------------------------------------------------------------------ checkpoints
CHILD = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from torch.optim.optimizer import register_optimizer_step_pre_hook
    from cadsr_sklearn import CADSRRegressor
    from cadsr_sklearn.search import checkpoint
    if len(sys.argv) > 2:  # a crash: killed in the epoch after the checkpoint of epoch k
        kill_after, write = int(sys.argv[2]), checkpoint.write
        written = []

        def counted_write(*args):
            write(*args)
            written.append(True)

        def step_or_die(optimizer, args, kwargs):  # in the policy update, the batch scored
            if len(written) >= kill_after:
                os.kill(os.getpid(), signal.SIGKILL)

        checkpoint.write = counted_write
        register_optimizer_step_pre_hook(step_or_die)  # torch's hook on every optimizer's step
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, size=(120, 2))
    y = X[:, 0] ** 2 * np.sin(X[:, 1]) + 0.5 * X[:, 0]
    model = CADSRRegressor(**{params!r}, checkpoint=sys.argv[1], checkpoint_every=0)
    model.fit(X, y)
    print(model.best_expression_.key, model.n_epochs_, model.history_[-1]["best_reward"])
""")


def test_a_killed_fit_resumes_to_the_formula_of_an_uninterrupted_one(tmp_path):
    # Killed (SIGKILL: no cleanup) halfway through epoch 6, after the checkpoint of
    # epoch 5 was written: the resumed fit redoes epoch 6 and ends as the whole fit.
    n_epochs, kill_after = 12, 5
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(params={**SEARCH, "n_epochs": n_epochs}))
    path = tmp_path / "search.ckpt"
    killed = subprocess.run([sys.executable, str(script), str(path), str(kill_after)],
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert checkpoint.read(path, torch.device("cpu")).search.state.call.epochs == kill_after

    resumed = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                             text=True, check=True).stdout
    whole = subprocess.run([sys.executable, str(script), str(tmp_path / "other.ckpt")],
                           capture_output=True, text=True, check=True).stdout
    assert resumed == whole
    assert f") {n_epochs} " in resumed


def test_a_finished_checkpoint_gives_its_result_again(data, tmp_path):
    X, y = data
    path = tmp_path / "search.ckpt"
    first = CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    again = CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    assert again.n_epochs_ == first.n_epochs_ and len(again.history_) == len(first.history_)
    assert again.best_expression_.key == first.best_expression_.key
    more = CADSRRegressor(**{**SEARCH, "n_epochs": 5}, checkpoint=path).fit(X, y)
    assert more.n_epochs_ == 5  # a larger budget goes on from where it stopped


def test_ctrl_c_writes_the_checkpoint_and_the_search_resumes_from_it(data, tmp_path):
    X, y = data
    path = tmp_path / "search.ckpt"
    steps = []

    def interrupted_in_epoch_four(optimizer, args, kwargs):  # its policy update's first step
        steps.append(True)
        if len(steps) == 3 * SEARCH["steps_per_epoch"] + 1:
            raise KeyboardInterrupt

    # torch's hook on every optimizer's step: the policy's, after the epoch's batch was
    # scored, so the Ctrl-C comes mid-epoch; checkpoint_every far beyond the run: only the
    # interrupt writes the file
    hook = register_optimizer_step_pre_hook(interrupted_in_epoch_four)
    try:
        stopped = CADSRRegressor(**{**SEARCH, "n_epochs": 8}, checkpoint=path,
                                 checkpoint_every=1e6).fit(X, y)
    finally:
        hook.remove()
    assert stopped.interrupted_ and stopped.n_epochs_ == 3 and path.exists()
    assert checkpoint.read(path, torch.device("cpu")).search.state.n_epochs == 3
    resumed = CADSRRegressor(**{**SEARCH, "n_epochs": 8}, checkpoint=path).fit(X, y)
    assert not resumed.interrupted_ and resumed.n_epochs_ == 8
    assert len(resumed.history_) == 8


def test_the_front_is_a_csv_file_beside_the_checkpoint_while_the_search_runs(data, tmp_path):
    import pandas as pd

    X, y = data
    path = tmp_path / "search.ckpt"
    model = CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    front = pd.read_csv(f"{path}.front.csv")
    assert list(front.columns) == ["complexity", "loss", "reward", "criterion", "formula"]
    # the loop's last front, before the refit on all rows, pruning and snapping
    last = model.history_[-1]
    assert front["complexity"].is_monotonic_increasing and front["loss"].is_monotonic_decreasing
    # τ* is on it, in its complexity's slot, its loss written in full
    assert front.loc[front["complexity"] == last["best_complexity"], "loss"].tolist() == [
        last["best_loss"]]
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary file, renamed


def test_checkpoints_that_cannot_be_resumed_are_refused(data, tmp_path):
    X, y = data
    path = tmp_path / "search.ckpt"
    CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    with pytest.raises(ValueError, match="other training data"):
        CADSRRegressor(**SEARCH, checkpoint=path).fit(X, 2 * y)
    with pytest.raises(ValueError, match="other max_length"):
        CADSRRegressor(**{**SEARCH, "max_length": 12}, checkpoint=path).fit(X, y)
    saved = checkpoint.read(path, torch.device("cpu"))
    checkpoint.write(path, Checkpoint("0.0.0", saved.fingerprint, saved.search))
    with pytest.raises(ValueError, match="written by cadsr-sklearn 0.0.0"):
        CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable cadsr-sklearn checkpoint"):
        CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    with pytest.raises(ValueError, match="does not exist or is not writable"):
        CADSRRegressor(**SEARCH, checkpoint=tmp_path / "no" / "such.ckpt").fit(X, y)


def test_a_checkpoint_cut_short_or_corrupted_is_refused_before_it_is_unpickled(
        data, tmp_path, monkeypatch):
    X, y = data
    path = tmp_path / "search.ckpt"
    CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    whole = path.read_bytes()
    assert whole.startswith(checkpoint.HEADER)
    unpickled = []
    real_loads = pickle.loads
    monkeypatch.setattr(checkpoint.pickle, "loads",
                        lambda data: unpickled.append(1) or real_loads(data))
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0x10
    for corrupted, message in ((whole[:len(whole) // 3], "it is cut short"),
                               (whole[:len(checkpoint.HEADER) + 3], "it is cut short"),
                               (whole + b"\0", "it is longer than written"),
                               (bytes(flipped), "it is corrupted")):
        path.write_bytes(corrupted)
        with pytest.raises(ValueError, match=f"The checkpoint '{path}' is not a readable "
                                             f"cadsr-sklearn checkpoint: {message}"):
            CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    assert not unpickled  # refused from the seal alone
    # a checkpoint written before the seal (a plain pickle) is still read
    path.write_bytes(whole[len(checkpoint.HEADER) + 40:])
    assert isinstance(checkpoint.read(path, torch.device("cpu")), Checkpoint)


def test_a_failed_write_is_reported_and_leaves_the_last_checkpoint_whole(data, tmp_path,
                                                                         monkeypatch):
    X, y = data
    path = tmp_path / "search.ckpt"
    CADSRRegressor(**SEARCH, checkpoint=path).fit(X, y)
    before = path.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint, "dumps", disk_full)
    with pytest.warns(RuntimeWarning, match="No space left on device.*the search goes on"):
        model = CADSRRegressor(**{**SEARCH, "n_epochs": 5}, checkpoint=path).fit(X, y)
    assert model.n_epochs_ == 5
    assert path.read_bytes() == before
    # no temporary file left behind (the front's file is written apart from the checkpoint)
    assert sorted(os.listdir(tmp_path)) == ["search.ckpt", "search.ckpt.front.csv"]


FAILURES = [pickle.PicklingError("cannot pickle 'Operator' object"), MemoryError(),
            TypeError("cannot pickle '_thread.lock' object")]


def _runtime_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
def test_a_write_that_cannot_succeed_warns_once_and_the_fit_keeps_its_result(data, tmp_path,
                                                                            monkeypatch, error):
    X, y = data
    whole = CADSRRegressor(**SEARCH).fit(X, y)

    def fails(*args, **kwargs):
        raise error

    monkeypatch.setattr(checkpoint, "dumps", fails)
    path = tmp_path / "search.ckpt"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CADSRRegressor(**SEARCH, checkpoint=path, checkpoint_every=0).fit(X, y)
    (message,) = _runtime_warnings(caught)  # once, though a write is due after every epoch
    assert f"{str(path)!r} ({type(error).__name__}" in message
    assert "goes on without checkpoints, and its result is kept" in message
    assert model.n_epochs_ == SEARCH["n_epochs"] and not model.interrupted_
    assert model.best_expression_.key == whole.best_expression_.key
    # no checkpoint, and no temporary file left behind; the front's file is written apart
    assert os.listdir(tmp_path) == ["search.ckpt.front.csv"]


def test_a_search_warm_start_cannot_keep_is_reported_and_the_fit_keeps_its_result(
        data, monkeypatch):
    X, y = data
    whole = CADSRRegressor(**SEARCH).fit(X, y)

    def fails(*args, **kwargs):
        raise pickle.PicklingError("cannot pickle 'Operator' object")

    monkeypatch.setattr(checkpoint, "dumps", fails)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CADSRRegressor(**SEARCH, warm_start=True).fit(X, y)
    (message,) = _runtime_warnings(caught)
    assert "warm_start cannot keep this search (PicklingError: cannot pickle" in message
    assert model.search_state_ is None
    assert model.best_expression_.key == whole.best_expression_.key


def test_the_cli_checkpoints_and_resumes(data, tmp_path, capsys):
    X, y = data
    table = tmp_path / "data.csv"
    np.savetxt(table, np.c_[X, y], delimiter=",", header="a,b,y", comments="")
    path = tmp_path / "search.ckpt"
    common = [str(table), "--target", "y", "--device", "cpu", "--out", str(tmp_path / "m.joblib"),
              "--batch-size", "48", "--param", "ff_dim=32", "--param", "max_length=14"]
    assert main(["fit", *common, "--n-epochs", "2", "--checkpoint", str(path)]) == 0
    assert path.exists()
    assert main(["fit", *common, "--n-epochs", "4", "--resume", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"Resuming the search saved in {path}" in out
    assert checkpoint.read(path, torch.device("cpu")).search.state.n_epochs == 4
    assert main(["fit", *common, "--resume", str(tmp_path / "missing.ckpt")]) == 2
    assert "no such checkpoint file" in capsys.readouterr().err


def test_a_second_ctrl_c_while_the_interrupts_checkpoint_is_written_keeps_the_result(
        data, tmp_path, monkeypatch):
    from cadsr_sklearn.reporting import progress

    X, y = data
    update, write = progress.Progress.update, checkpoint.write
    epochs = []

    def interrupted_in_epoch_two(self, record, state):
        epochs.append(1)
        if len(epochs) == 2:
            raise KeyboardInterrupt
        return update(self, record, state)

    def interrupted_again(path, saved):
        if len(epochs) >= 2:
            raise KeyboardInterrupt
        return write(path, saved)

    monkeypatch.setattr(progress.Progress, "update", interrupted_in_epoch_two)
    monkeypatch.setattr(checkpoint, "write", interrupted_again)
    with pytest.warns(RuntimeWarning, match="Interrupted again while the checkpoint"):
        model = CADSRRegressor(**{**SEARCH, "n_epochs": 5}, checkpoint=tmp_path / "c.ckpt",
                               checkpoint_every=1e6).fit(X, y)
    assert model.interrupted_ and np.all(np.isfinite(model.predict(X)))
