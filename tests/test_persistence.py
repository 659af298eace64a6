"""Persistence: pickle/joblib round trips, no torch state, version checks, safe loading.

A fitted CADSRRegressor keeps only plain Python, NumPy and SymPy objects plus
the policy's device as a ``torch.device`` (a name; it unpickles without CUDA).
The policy network is not kept, so no torch tensors are pickled and nothing is
ever loaded with ``torch.load``. Pickles still run code when loaded: only load
model files from sources you trust.
"""

import io
import pickle
import re
from pathlib import Path

import joblib
import numpy as np
import pytest
import torch
from budgets import TINY

import cadsr_sklearn
from cadsr_sklearn import CADSRRegressor

PACKAGE = Path(cadsr_sklearn.__file__).resolve().parent


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(60, 2))
    return X, np.sin(X[:, 0]) * X[:, 1] + 0.5 * X[:, 1] ** 2


@pytest.fixture(scope="module")
def model(data):
    return CADSRRegressor(**TINY).fit(*data)


class _RecordingUnpickler(pickle.Unpickler):
    """Loads a pickle and records every (module, name) global it imports."""

    def __init__(self, file):
        super().__init__(file)
        self.globals: set[tuple[str, str]] = set()

    def find_class(self, module, name):
        self.globals.add((module, name))
        return super().find_class(module, name)


def _globals_of(obj) -> set[tuple[str, str]]:
    unpickler = _RecordingUnpickler(io.BytesIO(pickle.dumps(obj)))
    unpickler.load()
    return unpickler.globals


def _assert_same_model(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.expression_ == b.expression_
    assert a.best_expression_.tokens == b.best_expression_.tokens
    np.testing.assert_array_equal(a.best_expression_.constants, b.best_expression_.constants)
    assert list(map(str, a.equations_["equation"])) == list(map(str, b.equations_["equation"]))
    assert a.history_ == b.history_
    assert a.latex() == b.latex()


def test_pickle_and_joblib_round_trips(model, data, tmp_path):
    X, _ = data
    _assert_same_model(model, pickle.loads(pickle.dumps(model)), X)
    for compress in (0, 3):
        path = tmp_path / f"model-{compress}.joblib"
        joblib.dump(model, path, compress=compress)
        _assert_same_model(model, joblib.load(path), X)
    # an unfitted estimator pickles too (no version_ yet)
    assert pickle.loads(pickle.dumps(CADSRRegressor(alpha=7.0))).alpha == 7.0


def test_pickled_state_holds_no_torch_objects_but_the_device(model):
    torch_globals = {g for g in _globals_of(model) if g[0].split(".")[0] == "torch"}
    assert torch_globals == {("torch", "device")}, torch_globals
    assert isinstance(model.device_, torch.device)
    state = model.__getstate__()
    assert not any(
        isinstance(v, (torch.Tensor, torch.nn.Module, torch.Generator)) for v in state.values()
    )


def test_a_model_whose_policy_ran_on_a_gpu_loads_on_cpu(model, data, monkeypatch):
    # The device is a name: it unpickles and predicts on a machine without CUDA.
    X, _ = data
    gpu_model = pickle.loads(pickle.dumps(model))
    gpu_model.device_ = torch.device("cuda", 1)
    blob = pickle.dumps(gpu_model)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    loaded = pickle.loads(blob)
    assert loaded.device_ == torch.device("cuda", 1)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_fitted_model_records_the_library_version(model):
    assert model.version_ == cadsr_sklearn.__version__


def _with_version(model, version):
    clone = pickle.loads(pickle.dumps(model))
    clone.version_ = version
    return clone


def _other(version: str, part: int) -> str:
    numbers = [int(re.match(r"\d+", p).group()) for p in version.split(".")[:3]]
    numbers[part] += 1
    return ".".join(map(str, numbers))


@pytest.mark.parametrize("part", [0, 1], ids=["major", "minor"])
def test_an_incompatible_version_is_refused_with_a_clear_message(model, tmp_path, part):
    saved = _other(cadsr_sklearn.__version__, part)
    blob = pickle.dumps(_with_version(model, saved))
    message = (rf"saved with cadsr-sklearn {re.escape(saved)}, "
               rf"which is incompatible with the installed "
               rf"{re.escape(cadsr_sklearn.__version__)}\. Refit it, "
               rf"or install cadsr-sklearn=={re.escape(saved)}")
    with pytest.raises(ValueError, match=message):
        pickle.loads(blob)
    path = tmp_path / "old.joblib"
    joblib.dump(_with_version(model, saved), path)
    with pytest.raises(ValueError, match=message):
        joblib.load(path)
    # and directly through __setstate__, the way the check is written
    state = dict(model.__getstate__())  # a copy: __getstate__ returns the live __dict__
    state["version_"] = saved
    with pytest.raises(ValueError, match="incompatible"):
        CADSRRegressor.__new__(CADSRRegressor).__setstate__(state)


def test_a_patch_release_loads(model, data):
    X, _ = data
    loaded = pickle.loads(pickle.dumps(_with_version(model, _other(cadsr_sklearn.__version__, 2))))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_the_cli_reports_an_incompatible_model_in_one_line(model, tmp_path, capsys):
    from cadsr_sklearn.cli import main

    path = tmp_path / "old.joblib"
    joblib.dump(
        _with_version(model, "0.0.1" if cadsr_sklearn.__version__ != "0.0.1" else "9.0.0"), path
    )
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "incompatible" in err[0] and "Refit it" in err[0]


def test_torch_state_is_only_ever_loaded_with_weights_only():
    # No module loads torch state with torch.load today (checkpoints and the warm-start
    # state are plain pickles, trusted as model files are); any future torch.load must
    # use the safe unpickler.
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text()
        for match in re.finditer(r"torch\.load\(", text):
            call = text[match.start(): text.find(")", match.end()) + 1]
            assert "weights_only=True" in call, f"{source}: {call}"
