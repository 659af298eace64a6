"""``cadsr bench --scheduler``: the same tasks on a Dask cluster through joblib's Dask backend."""

from __future__ import annotations

import pytest

from cadsr_sklearn.benchmarks import execution, results
from cadsr_sklearn.cli import main

distributed = pytest.importorskip("dask.distributed")


@pytest.fixture(scope="module")
def cluster():
    # Threads in this process: fast to start, and tasks run outside the main
    # thread, as on real Dask workers (so SymPy is bounded by a child process).
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as c:
        yield c


def test_bench_on_a_dask_cluster_and_resume(cluster, tmp_path, capsys):
    out = tmp_path / "dask.csv"
    argv = [
        "bench", "--problems", "Nguyen-1", "--seeds", "0-1", "--max-time", "2",
        "--params", "batch_size=64", "n_epochs=2", "ff_dim=64", "max_length=12",
        "--scheduler", cluster.scheduler_address, "--out", str(out), "--no-plot",
    ]
    assert main(argv) == 0
    rows = results.read_results(out)
    assert sorted(r["seed"] for r in rows) == [0, 1]
    assert all(r["error"] is None and r["symbolic_solution"] is not None for r in rows)
    assert "Dask scheduler" in capsys.readouterr().out
    assert main(argv) == 0  # everything is done: nothing is sent to the cluster
    assert "skipped 2 task(s)" in capsys.readouterr().out


def test_unreachable_scheduler_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(execution, "_CONNECT_TIMEOUT", "1s")
    argv = [
        "bench", "--problems", "Nguyen-1", "--scheduler", "tcp://127.0.0.1:9",
        "--out", str(tmp_path / "r.csv"),
    ]
    assert main(argv) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
