"""Fits running at the same time in threads share the process's settings.

A fit runs torch and BLAS on one thread and keeps the objects older than it out of the
garbage collector's passes (:mod:`cadsr_sklearn.search.devices`). Those settings belong to
the process, and fits in threads (joblib's threading backend, a grid search, Dask workers)
overlap: the first fit out must not give the others their threads back, and the process
must end as it was.
"""

import gc
import threading

import numpy as np
import pytest
import torch
from budgets import TINY
from threadpoolctl import threadpool_info, threadpool_limits

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.search.build import Search

SEARCH = dict(TINY, n_epochs=1, n_jobs=1)
WAIT = 120  # seconds: a fit that never arrives fails the test instead of hanging it


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, size=(50, 2))
    # noise: no formula ends the search before a Ctrl-C in its second epoch
    return X, X[:, 0] * X[:, 1] + rng.normal(0, 0.05, 50)


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def _in_a_new_thread(function):
    """``function()`` called in a thread that has not run torch yet."""
    out = []
    thread = threading.Thread(target=lambda: out.append(function()))
    thread.start()
    thread.join()
    return out[0]


@pytest.fixture
def two_threads():
    """torch and BLAS on two threads, so that a fit's one thread shows; put back after."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with threadpool_limits(2, user_api="blas"):
            if not _blas_threads() or set(_blas_threads()) != {2}:
                pytest.skip("no BLAS whose threads threadpoolctl can set to 2")
            yield
    finally:
        torch.set_num_threads(before)


def _settings() -> dict:
    return {"torch": torch.get_num_threads(), "blas": _blas_threads(),
            "frozen": gc.get_freeze_count() > 0}


def test_a_fit_runs_on_one_thread_and_leaves_the_settings_as_it_found_them(data, two_threads,
                                                                          monkeypatch):
    seen = []
    original = Search.run
    monkeypatch.setattr(Search, "run",
                        lambda self, **kw: (seen.append(_settings()), original(self, **kw))[1])
    CADSRRegressor(**SEARCH).fit(*data)
    assert seen == [{"torch": 1, "blas": [1] * len(_blas_threads()), "frozen": True}]
    assert _settings() == {"torch": 2, "blas": [2] * len(_blas_threads()), "frozen": False}
    assert _in_a_new_thread(torch.get_num_threads) == 2


def test_a_fit_leaves_objects_the_process_froze_itself_as_they_are(data, monkeypatch):
    # as a server does before forking workers: the fit must not unfreeze them at its end
    seen = []
    original = Search.run
    monkeypatch.setattr(Search, "run", lambda self, **kw: (seen.append(gc.get_freeze_count()),
                                                           original(self, **kw))[1])
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()  # falls as frozen objects die, never rises
        CADSRRegressor(**SEARCH).fit(*data)
        assert len(seen) == 1 and 0 < seen[0] <= frozen  # the fit froze nothing more
        assert 0 < gc.get_freeze_count() <= seen[0]  # nor unfroze the process's objects
    finally:
        gc.unfreeze()


def test_overlapping_fits_in_threads_keep_one_thread_and_restore_the_process(data, two_threads,
                                                                           monkeypatch):
    # The race: fit A starts, fit B starts (and finds A's one thread), A ends and
    # restores two threads under B, B ends and restores the one thread it found.
    a_searching, b_searching, a_done = threading.Event(), threading.Event(), threading.Event()
    seen_by_b = {}
    original = Search.run

    def run(self, **kwargs):
        if threading.current_thread() is threading.main_thread():  # fit A
            a_searching.set()
            assert b_searching.wait(WAIT)
        else:  # fit B: searches once A has ended
            b_searching.set()
            assert a_done.wait(WAIT)
            seen_by_b.update(_settings())
        return original(self, **kwargs)

    monkeypatch.setattr(Search, "run", run)
    errors = []

    def fit_b():
        try:
            assert a_searching.wait(WAIT)
            CADSRRegressor(**SEARCH).fit(*data)
        except BaseException as error:  # noqa: BLE001 - reported in the main thread
            errors.append(error)
            b_searching.set()

    b = threading.Thread(target=fit_b)
    b.start()
    try:
        CADSRRegressor(**SEARCH).fit(*data)
    finally:
        a_done.set()
        b.join(WAIT)
    assert not errors, errors
    n_blas = len(_blas_threads())
    # A's end left B on one thread, its old objects frozen; and the process as it was
    assert seen_by_b == {"torch": 1, "blas": [1] * n_blas, "frozen": True}
    assert _settings() == {"torch": 2, "blas": [2] * n_blas, "frozen": False}
    assert _in_a_new_thread(torch.get_num_threads) == 2


# ------------------------------------------- the process as it was, however the fit ends
def _process_state() -> dict:
    """Every process-wide setting a fit changes while it runs, as the user's program sees it."""
    return {"frozen objects": gc.get_freeze_count(), "collector on": gc.isenabled(),
            "torch": torch.get_num_threads(),
            "torch in a new thread": _in_a_new_thread(torch.get_num_threads),
            "pools": [(pool["filepath"], pool["num_threads"]) for pool in threadpool_info()]}


def _raise_in_an_update(error, step: int):
    """A torch hook that raises ``error`` at the policy update's ``step``-th step (from 1),
    inside the loop: in epoch 2 a Ctrl-C keeps epoch 1's best, which epoch 1 has not yet."""
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    steps = []

    def hook(optimizer, args, kwargs):
        steps.append(True)
        if len(steps) == step:
            raise error
    return register_optimizer_step_pre_hook(hook)


def _ctrl_c_before_the_search(monkeypatch):
    """Ctrl-C as the search starts, inside the fit's settings: fit raises it (nothing kept)."""
    def run(self, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(Search, "run", run)


@pytest.mark.parametrize("end", ["returns", "n_jobs=2", "an error in the loop",
                                 "Ctrl-C in the loop", "Ctrl-C before the search"])
def test_the_user_sees_the_process_as_it_was_after_fit(data, two_threads, monkeypatch, end):
    before = _process_state()
    seen = []
    original = Search.run
    monkeypatch.setattr(Search, "run", lambda self, **kw: (seen.append(_settings()),
                                                           original(self, **kw))[1])
    params = dict(SEARCH, n_epochs=2, n_jobs=2 if end == "n_jobs=2" else 1)
    hook = None
    if end == "an error in the loop":
        hook = _raise_in_an_update(RuntimeError("a bug in an epoch"), step=1)
    elif end == "Ctrl-C in the loop":
        hook = _raise_in_an_update(KeyboardInterrupt(), step=SEARCH["steps_per_epoch"] + 1)
    elif end == "Ctrl-C before the search":
        _ctrl_c_before_the_search(monkeypatch)
    try:
        if end == "an error in the loop":
            with pytest.raises(RuntimeError, match="a bug in an epoch"):
                CADSRRegressor(**params).fit(*data)
        elif end == "Ctrl-C before the search":
            with pytest.raises(KeyboardInterrupt):
                CADSRRegressor(**params).fit(*data)
        else:
            model = CADSRRegressor(**params).fit(*data)
            assert model.interrupted_ == (end == "Ctrl-C in the loop")
    finally:
        if hook is not None:
            hook.remove()
    if end != "Ctrl-C before the search":  # the fit did change them while it ran
        assert seen and seen[0]["torch"] == 1 and seen[0]["frozen"]
    assert _process_state() == before
