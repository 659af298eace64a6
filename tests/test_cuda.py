"""The search on a CUDA device, end to end: skipped on machines without one (CI's).

The policy, sampling (constraint masks, priors) and the update run on the device; the
units masks, constants, evaluation and rewards on the CPU. These
tests fit on CUDA with every part that puts tensors on the policy's device, and
check that what comes back is a CPU model like any other.
"""

import pickle

import numpy as np
import pytest
import torch
from budgets import SMALL, TINY

from cadsr_sklearn import CADSRRegressor

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = dict(TINY, device="cuda", n_epochs=4)


def _pendulum(n=200, seed=0):
    rng = np.random.default_rng(seed)
    L, g = rng.uniform(0.5, 2, n), rng.uniform(9, 10, n)
    return np.column_stack([L, g]), 2 * np.pi * np.sqrt(L / g)


def _holds_no_cuda_tensor(obj, seen=None) -> bool:
    """Nothing reachable from ``obj``'s attributes is a tensor on a CUDA device."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return True
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return obj.device.type != "cuda"
    if isinstance(obj, dict):
        return all(_holds_no_cuda_tensor(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_holds_no_cuda_tensor(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return _holds_no_cuda_tensor(vars(obj), seen)
    return True


def test_a_fit_on_cuda_predicts_what_its_formula_says():
    X, y = _pendulum()
    model = CADSRRegressor(**CUDA).fit(X, y)
    assert model.device_.type == "cuda"
    assert len(model.history_) == 4
    np.testing.assert_array_equal(model.predict(X), model.best_expression_.evaluate(X))
    assert np.isfinite(model.score(X, y))
    assert _holds_no_cuda_tensor(model)


def test_units_masks_and_priors_run_on_cuda():
    X, y = _pendulum()
    model = CADSRRegressor(**CUDA).fit(X, y, X_units=["m", "m/s**2"], y_units="s")
    assert model.device_.type == "cuda"
    # every formula the search kept is in the target's units: the masks, computed on the
    # CPU, held for trees sampled on the device
    assert model.units_ == "s"
    assert set(model.equations_["units"]) == {"s"}
    assert all(h["units_rejected_fraction"] < 1 for h in model.history_)


def test_warm_start_goes_on_on_cuda_and_a_pickle_loads_on_the_cpu():
    X, y = _pendulum()
    model = CADSRRegressor(**{**CUDA, "warm_start": True, "n_epochs": 2}).fit(X, y)
    model.set_params(n_epochs=2).fit(X, y)  # takes up the search where it stopped
    assert len(model.history_) == 4
    loaded = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_the_paper_model_finds_a_law_on_cuda():
    X = np.random.default_rng(1).uniform(1, 3, (300, 2))
    y = X[:, 0] * X[:, 1] ** 2
    model = CADSRRegressor(**{**SMALL, "device": "cuda", "n_epochs": 40}).fit(X, y)
    assert model.score(X, y) > 0.9999
