"""Running tasks: one fit judged into one row (:func:`run_task`), many at once (:func:`run_tasks`).

Tasks run through joblib: in-process for ``n_jobs=1``, in loky worker
processes otherwise, or on a Dask cluster (``scheduler=ADDRESS`` or
``backend="dask"``) through joblib's Dask backend. Every task is
single-threaded inside (:func:`single_threaded`: torch, OpenMP/MKL/BLAS pools),
so ``n`` tasks use ``n`` cores. Each new row is appended to the results file
as it arrives, and the tasks that already have a row there are skipped.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ..user_input import UsageError
from .methods import fit_method
from .results import KEY, ResultsWriter, normalise_row, read_results, row_key
from .tasks import Task

__all__ = ["RunOutcome", "run_task", "run_tasks", "single_threaded"]

#: How long to keep trying to reach a ``--scheduler`` before giving up.
_CONNECT_TIMEOUT = "20s"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


@contextmanager
def single_threaded(import_torch: bool):
    """One thread for every pool a task could use, restored afterwards.

    The environment variables reach libraries that read them on first use and
    child processes; threadpoolctl caps BLAS/OpenMP pools already loaded; torch
    has its own intra-op pool.
    """
    from threadpoolctl import threadpool_limits

    saved_env = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    try:
        with ExitStack() as stack:
            if import_torch or "torch" in sys.modules:
                from ..search.devices import torch_threads

                stack.enter_context(torch_threads(1))
            stack.enter_context(threadpool_limits(1))
            yield
    finally:
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_task(task: Task) -> dict:
    """Fit and judge one task: its row of the results file.

    The judged formula is :func:`.metrics.judged_formula`'s; for CADSR the row
    also judges τ* before snapping (the ``*_unsnapped`` columns). Errors become
    a row with ``error`` set (and are retried on resume).
    """
    from .metrics import model_metrics

    p = task.problem
    row: dict[str, Any] = dict(zip(KEY, task.key))
    row["host"] = socket.gethostname()
    try:
        # CADSR, and CADSR's default operator set for a peer, load torch
        with single_threaded(import_torch=task.method == "cadsr" or task.operators == "default"):
            sample = {} if task.n_train is None else {"n_train": task.n_train}
            data = p.sample(seed=task.seed, noise=task.noise, **sample)
            ops = (
                None if task.operators == "default"
                else (p.binary_operators, p.unary_operators, p.use_constants)
            )
            fitted = fit_method(task.method, data, ops, task.max_time, task.seed, task.params)
            metrics = model_metrics(
                fitted.model, data.y_test, fitted.y_pred_test, data.truth, task.simplify_timeout
            )
            if fitted.unsnapped is not None:
                metrics.update(_unsnapped_metrics(fitted, data, metrics, task.simplify_timeout))
        row.update(metrics)
        row.update(_run_columns(fitted, data))
    except Exception as err:  # noqa: BLE001 - one failed task must not end the run
        last = traceback.extract_tb(err.__traceback__)[-1]
        row["error"] = (
            f"{type(err).__name__}: {err} ({Path(last.filename).name}:{last.lineno})"
        ).replace("\n", " ")
    return row


def _run_columns(fitted, data) -> dict:
    from .metrics import r2_score

    info = fitted.info
    return dict(
        r2_train=r2_score(data.y_train, fitted.y_pred_train),
        fit_time=fitted.fit_time,
        time_to_best_s=info.get("time_to_best_s"),
        epochs=info.get("epochs"),
        stop=info.get("stop"),
        units_rejected=info.get("units_rejected"),
        k=info.get("k"),
        evaluations=fitted.evaluations,
        n_train=len(data.y_train),
        n_test=len(data.y_test),
        model=str(fitted.model),
        truth="" if data.truth is None else str(data.truth),
        native=fitted.native,
        error="",
    )


def _unsnapped_metrics(fitted, data, shown: dict, timeout: float) -> dict:
    """τ* before snapping, judged by SRBench's test as written (its verdict reused if unchanged)."""
    from .metrics import SYMBOLIC_MIN_R2, is_symbolic_solution, node_count, r2_score

    formula = fitted.unsnapped
    r2 = r2_score(data.y_test, fitted.y_pred_test_unsnapped)
    if data.truth is None:
        solved = None
    elif formula == fitted.model and (r2 > SYMBOLIC_MIN_R2) == (shown["r2_test"] > SYMBOLIC_MIN_R2):
        solved = shown["solved_srbench"]  # nothing was snapped: the same verdict
    else:
        solved = is_symbolic_solution(formula, data.truth, timeout, r2=r2, real=False)
    return {
        "r2_test_unsnapped": r2,
        "solved_srbench_unsnapped": solved,
        "size_unsnapped": node_count(formula),
        "model_unsnapped": str(formula),
    }


@dataclass
class RunOutcome:
    """What :func:`run_tasks` did."""

    rows: list[dict]  # the latest successful row of every requested task that has one
    new: int = 0
    skipped: int = 0
    failed: list[dict] = field(default_factory=list)
    interrupted: bool = False


def run_tasks(
    tasks: Sequence[Task],
    out: str | Path | None = None,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    on_row: Callable[[dict, int, int], None] | None = None,
) -> RunOutcome:
    """Run the tasks that have no row in ``out`` yet, appending each new row as it finishes.

    Parameters
    ----------
    tasks : list of Task
    out : path, optional
        Results CSV (created if absent). Without it nothing is saved or skipped.
    n_jobs : int
        Parallel tasks (loky) or, for a local Dask cluster, its number of workers.
        Ignored with ``scheduler``: the cluster's workers decide.
    backend : {"loky", "dask"}
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``); implies Dask.
    on_row : callable(row, done, total), optional
        Called in this process after each new row (progress output).
    """
    done = {}
    if out is not None:
        for row in read_results(out):
            if not row.get("error"):
                done[row_key(row)] = row
    todo = [t for t in tasks if t.key not in done]
    skipped = len(tasks) - len(todo)
    writer = ResultsWriter(out) if out is not None and todo else None
    new_rows: dict[tuple, dict] = {}
    failed: list[dict] = []
    interrupted = False
    try:
        for i, row in enumerate(_execute(todo, n_jobs, backend, scheduler), start=1):
            if writer is not None:
                writer.write(row)
            if row.get("error"):
                failed.append(row)
            else:
                new_rows[row_key(row)] = row
            if on_row is not None:
                on_row(row, i, len(todo))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if writer is not None:
            writer.close()
    rows = []
    for t in tasks:
        row = new_rows.get(t.key) or done.get(t.key)
        if row is not None:
            rows.append(normalise_row(row))
    return RunOutcome(rows, len(new_rows), skipped, failed, interrupted)


def _execute(
    tasks: Sequence[Task], n_jobs: int, backend: str, scheduler: str | None
) -> Iterable[dict]:
    if not tasks:
        return
    if scheduler or backend == "dask":
        yield from _execute_dask(tasks, n_jobs, scheduler)
    elif n_jobs == 1:
        for task in tasks:  # in-process: Ctrl-C acts at once, SIGALRM bounds SymPy
            yield run_task(task)
    else:
        from joblib import Parallel, delayed, parallel_config

        with parallel_config(backend="loky", inner_max_num_threads=1):
            parallel = Parallel(
                n_jobs=n_jobs, return_as="generator_unordered", batch_size=1, pre_dispatch="n_jobs"
            )
            yield from parallel(delayed(run_task)(t) for t in tasks)


def _execute_dask(tasks: Sequence[Task], n_jobs: int, scheduler: str | None) -> Iterable[dict]:
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(
            "the Dask backend needs dask.distributed: pip install 'cadsr-sklearn[distributed]'"
        ) from None
    from joblib import Parallel, delayed, parallel_config

    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=_CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as err:
                raise UsageError(
                    f"cannot reach the Dask scheduler at {scheduler} ({err})"
                ) from None
        else:
            cluster = LocalCluster(
                n_workers=n_jobs, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)
        try:
            with parallel_config(backend="dask", client=client):
                parallel = Parallel(n_jobs=-1, return_as="generator_unordered", batch_size=1)
                yield from parallel(delayed(run_task)(t) for t in tasks)
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
