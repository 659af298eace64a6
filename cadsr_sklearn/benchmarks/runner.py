"""``cadsr bench``: run (problem, seed, noise, method) tasks in parallel, resumably.

Each task draws its data from the problem with the seed, fits one method under
the time budget, judges the model with SRBench's metrics and returns one row.
Rows are appended to the ``--out`` CSV as soon as they arrive, so an interrupted
run keeps its finished rows, and a re-run of the same command skips every task
that already has a row (the key is suite, problem, method, seed, noise,
max_time; failed tasks are retried).

Tasks run through joblib: in-process for ``--n-jobs 1``, in loky worker
processes otherwise, or on a Dask cluster (``--scheduler ADDRESS`` or
``--backend dask``) through joblib's Dask backend. Every task is single-threaded
inside (torch, OpenMP/MKL/BLAS pools), so ``n`` tasks use ``n`` cores.

Example::

    cadsr bench --suite nguyen --seeds 0-4 --noise 0 0.1 --max-time 60 \\
        --method cadsr gplearn operon --n-jobs 2 --out results.csv
"""

from __future__ import annotations

import argparse
import ast
import csv
import math
import os
import socket
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import sympy

from .methods import METHODS, fit_method, method_unavailable
from .suites import SUITES, Problem, TableProblem, get_suite

__all__ = [
    "COLUMNS",
    "Task",
    "make_tasks",
    "run_task",
    "run_tasks",
    "rescore_results",
    "read_results",
    "parse_seeds",
    "add_bench_parser",
]

#: Columns of the results CSV, in order.
COLUMNS: tuple[str, ...] = (
    "suite",
    "problem",
    "method",
    "seed",
    "noise",
    "max_time",
    "r2_test",
    "r2_train",
    "accuracy_solution",
    "symbolic_solution",
    "complexity",
    "fit_time",
    "evaluations",
    "n_train",
    "n_test",
    "model",
    "truth",
    "native",
    "host",
    "error",
)
_KEY = ("suite", "problem", "method", "seed", "noise", "max_time")
_INT = {"seed", "complexity", "evaluations", "n_train", "n_test"}
_FLOAT = {"noise", "max_time", "r2_test", "r2_train", "fit_time"}
_BOOL = {"accuracy_solution", "symbolic_solution"}
#: How long to keep trying to reach a ``--scheduler`` before giving up.
_CONNECT_TIMEOUT = "20s"
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class BenchError(Exception):
    """Bad input to ``cadsr bench``: one line on stderr, exit status 2."""


# ---------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class Task:
    """One (problem, method, seed, noise) run; picklable, so it can travel to a worker."""

    problem: Problem | TableProblem
    method: str
    seed: int
    noise: float
    max_time: float
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    simplify_timeout: float = 10.0

    @property
    def key(self) -> tuple:
        return (
            self.problem.suite,
            self.problem.name,
            self.method,
            self.seed,
            float(self.noise),
            float(self.max_time),
        )


def make_tasks(
    problems: Sequence[Problem | TableProblem],
    methods: Sequence[str],
    seeds: Sequence[int],
    noises: Sequence[float],
    max_time: float,
    params: dict[str, dict[str, Any]] | None = None,
    simplify_timeout: float = 10.0,
) -> list[Task]:
    """Every combination, grouped by (problem, seed, noise) so methods finish side by side."""
    params = params or {}
    return [
        Task(p, m, int(s), float(g), float(max_time), dict(params.get(m, {})), simplify_timeout)
        for p in problems
        for g in noises
        for s in seeds
        for m in methods
    ]


@contextmanager
def single_threaded(import_torch: bool):
    """One thread for every pool a task could use, restored afterwards.

    The environment variables reach libraries that read them on first use and
    child processes; threadpoolctl caps BLAS/OpenMP pools already loaded; torch
    has its own intra-op pool.
    """
    saved_env = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})
    torch_threads = None
    if import_torch or "torch" in sys.modules:
        import torch

        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn depends on it
        limits = None
    else:
        limits = threadpool_limits(1)
    try:
        yield
    finally:
        if limits is not None:
            limits.restore_original_limits()
        if torch_threads is not None:
            import torch

            torch.set_num_threads(torch_threads)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_task(task: Task) -> dict:
    """Fit and judge one task.

    Errors become a row with ``error`` set (and are retried on resume).
    """
    from .metrics import model_metrics, r2_score

    p = task.problem
    row: dict[str, Any] = dict(zip(_KEY, task.key))
    row["host"] = socket.gethostname()
    try:
        with single_threaded(import_torch=task.method == "cadsr"):
            data = p.sample(seed=task.seed, noise=task.noise)
            ops = (p.binary_operators, p.unary_operators, p.use_constants)
            fitted = fit_method(task.method, data, ops, task.max_time, task.seed, task.params)
            metrics = model_metrics(
                fitted.model, data.y_test, fitted.y_pred_test, data.truth, task.simplify_timeout
            )
        row.update(metrics)
        row.update(
            r2_train=r2_score(data.y_train, fitted.y_pred_train),
            fit_time=fitted.fit_time,
            evaluations=fitted.evaluations,
            n_train=len(data.y_train),
            n_test=len(data.y_test),
            model=str(fitted.model),
            truth="" if data.truth is None else str(data.truth),
            native=fitted.native,
            error="",
        )
    except Exception as err:  # noqa: BLE001 - one failed task must not end the run
        last = traceback.extract_tb(err.__traceback__)[-1]
        row["error"] = (
            f"{type(err).__name__}: {err} ({Path(last.filename).name}:{last.lineno})"
        ).replace("\n", " ")
    return row


# -------------------------------------------------------------- results file
def _parse(column: str, text: str | None):
    if text is None or text == "":
        return None
    if column in _INT:
        return int(float(text))
    if column in _FLOAT:
        return float(text)
    if column in _BOOL:
        return text.strip().lower() in ("1", "true", "yes")
    return text


def _format(column: str, value) -> str:
    if value is None:
        return ""
    if column in _BOOL:
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else (
            "-inf" if value < 0 else ("inf" if value > 0 else "nan")
        )
    return str(value)


def read_results(path: str | Path) -> list[dict]:
    """Rows of a results CSV, parsed; rows cut short by a crash are skipped."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return []
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        missing = [c for c in _KEY if c not in header]
        if missing:
            raise BenchError(f"{path}: not a cadsr bench results file (no column(s) {missing})")
        rows = []
        for values in reader:
            if len(values) != len(header):
                continue  # a line half-written when the run was killed
            try:
                rows.append({c: _parse(c, v) for c, v in zip(header, values)})
            except ValueError:
                continue
    return rows


class _ResultsWriter:
    """Appends one row at a time and flushes it to disk at once."""

    def __init__(self, path: Path):
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            with path.open(newline="") as fh:
                header = next(csv.reader(fh), [])
            if list(header) != list(COLUMNS):
                raise BenchError(
                    f"{path}: was written with other columns; "
                    "pass another --out or move the file away"
                )
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                torn = fh.read(1) != b"\n"
        self.fh = path.open("a", newline="")
        if fresh:
            self.fh.write(",".join(COLUMNS) + "\n")
        elif torn:
            self.fh.write("\n")  # end a line cut by a crash; read_results drops it
        self.writer = csv.writer(self.fh)
        self.fh.flush()

    def write(self, row: dict) -> None:
        self.writer.writerow([_format(c, row.get(c)) for c in COLUMNS])
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def _row_key(row: dict) -> tuple:
    return tuple(row[c] if c not in ("noise", "max_time") else float(row[c]) for c in _KEY)


# ---------------------------------------------------------------- execution
@dataclass
class RunOutcome:
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
                done[_row_key(row)] = row
    todo = [t for t in tasks if t.key not in done]
    skipped = len(tasks) - len(todo)
    writer = _ResultsWriter(Path(out)) if out is not None and todo else None
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
                new_rows[_row_key(row)] = row
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
            rows.append(_normalise(row))
    return RunOutcome(rows, len(new_rows), skipped, failed, interrupted)


def rescore_results(tasks: Sequence[Task], out: str | Path, timeout: float = 10.0) -> RunOutcome:
    """Recompute the SymPy metrics of finished rows from their stored ``model`` and ``truth``.

    For after a change to the metrics: nothing is refitted. R², fit time and
    evaluations stay; ``accuracy_solution``, ``symbolic_solution`` and
    ``complexity`` are recomputed for the rows of ``tasks``. The file is
    rewritten atomically (other rows are kept as they are). Simplified
    complexities can differ from the first run where a simplification ran
    into its time limit in one run and not in the other.
    """
    from .metrics import ACCURACY_R2, is_symbolic_solution, simplified_complexity

    path = Path(out)
    rows = read_results(path)
    if not rows:
        raise BenchError(f"{path}: no results to rescore")
    wanted = {t.key: t for t in tasks}
    latest = {}
    for i, row in enumerate(rows):
        if not row.get("error"):
            latest[_row_key(row)] = i
    done = []
    for key, i in latest.items():
        task = wanted.get(key)
        if task is None:
            continue
        row = rows[i]
        local = {v: sympy.Symbol(v) for v in task.problem.variables}
        try:
            model = sympy.sympify(row["model"], locals=local)
            truth = sympy.sympify(row["truth"], locals=local) if row.get("truth") else None
        except (sympy.SympifyError, SyntaxError, TypeError):
            continue  # a model string SymPy cannot read back keeps its first scores
        row["accuracy_solution"] = row["r2_test"] > ACCURACY_R2
        row["symbolic_solution"] = (
            None if truth is None
            else is_symbolic_solution(model, truth, timeout, r2=row["r2_test"])
        )
        row["complexity"] = simplified_complexity(model, timeout)
        done.append(_normalise(row))
    tmp = path.with_name(path.name + ".rescore-tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_format(c, row.get(c)) for c in COLUMNS])
    os.replace(tmp, path)
    by_key = {_row_key(r): r for r in done}
    return RunOutcome([by_key[t.key] for t in tasks if t.key in by_key])


def _normalise(row: dict) -> dict:
    """The same types whether a row came from a worker or was read back from the CSV."""
    return {c: _parse(c, _format(c, row.get(c))) for c in COLUMNS}


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
        raise BenchError(
            "the Dask backend needs dask.distributed: pip install 'cadsr-sklearn[distributed]'"
        ) from None
    from joblib import Parallel, delayed, parallel_config

    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=_CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as err:
                raise BenchError(
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


# ------------------------------------------------------------------------ CLI
def parse_seeds(items: Sequence[str]) -> list[int]:
    """``["0-4"]``, ``["0,2,5"]`` or ``["0", "1"]`` → sorted unique seeds."""
    seeds: set[int] = set()
    for item in items:
        for part in str(item).replace(",", " ").split():
            lo, dash, hi = part.partition("-")
            if not lo.isdigit() or (dash and not hi.isdigit()) or (dash and int(hi) < int(lo)):
                raise BenchError(f"bad --seeds value {part!r}; use e.g. 0-4, 0,1,2 or 0 1 2")
            seeds.update(range(int(lo), int(hi if dash else lo) + 1))
    if not seeds:
        raise BenchError("--seeds needs non-negative integers, e.g. 0-4")
    return sorted(seeds)


def _parse_params(items: Sequence[str], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``KEY=VALUE`` (for cadsr) or ``METHOD.KEY=VALUE``; values are Python literals or strings."""
    params: dict[str, dict[str, Any]] = {m: {} for m in METHODS}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise BenchError(f"bad --params entry {item!r}; use KEY=VALUE or METHOD.KEY=VALUE")
        method, dot, key = name.partition(".")
        if not dot:
            method, key = "cadsr", name
        if method not in METHODS or not key.isidentifier():
            raise BenchError(f"bad --params entry {item!r}; METHOD is one of {', '.join(METHODS)}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        params[method][key] = value
    for method, values in params.items():
        if values and method in methods:
            _check_params(method, values)
    return params


def _check_params(method: str, values: dict[str, Any]) -> None:
    if method == "cadsr":
        from ..estimator import CADSRRegressor

        valid = CADSRRegressor().get_params()
    elif method == "gplearn":
        from gplearn.genetic import SymbolicRegressor

        valid = SymbolicRegressor().get_params()
    else:
        from pyoperon.sklearn import SymbolicRegressor

        valid = SymbolicRegressor().get_params()
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise BenchError(f"--params: {method} has no parameter(s) {unknown}")


def _select_problems(args) -> list[Problem | TableProblem]:
    problems: list = []
    suites = args.suite if args.suite is not None else ([] if args.data else ["nguyen"])
    for name in suites:
        try:
            problems.extend(get_suite(name))
        except ValueError:
            raise BenchError(
                f"unknown suite {name!r}; choose from {', '.join(sorted(SUITES))}"
            ) from None
    if args.formula is not None and len(args.data or []) != 1:
        raise BenchError("--formula goes with exactly one --data file")
    for path in args.data or []:
        try:
            problems.append(
                TableProblem.from_file(
                    path,
                    target=args.target,
                    formula=args.formula,
                    test_size=args.test_size,
                    max_train_samples=args.max_train_samples or None,
                )
            )
        except ValueError as err:
            raise BenchError(str(err).splitlines()[0]) from None
    if args.problems:
        wanted = {p.lower() for p in args.problems}
        known = {p.name.lower() for p in problems}
        unknown = [w for w in args.problems if w.lower() not in known]
        if unknown:
            raise BenchError(
                f"unknown problem(s) {unknown} in the chosen suite(s) {suites or ['--data']}"
            )
        problems = [p for p in problems if p.name.lower() in wanted]
    names = [(p.suite, p.name) for p in problems]
    if len(set(names)) != len(names):
        raise BenchError(
            "two problems share a name (pass each --data file once, with distinct names)"
        )
    return problems


def _print_row(row: dict, i: int, total: int) -> None:
    head = (
        f"[{i:>{len(str(total))}}/{total}] {row['problem']} seed={row['seed']} "
        f"noise={row['noise']:g} {row['method']}"
    )
    if row.get("error"):
        print(f"{head}: FAILED {row['error']}", flush=True)
        return
    solved = {True: "yes", False: "no", None: "–"}[row.get("symbolic_solution")]
    model = str(row.get("model", ""))
    model = model if len(model) <= 70 else model[:67] + "..."
    print(
        f"{head}: R²={row['r2_test']:.4f} solved={solved} k={row['complexity']} "
        f"{row['fit_time']:.1f}s  {model}",
        flush=True,
    )


def _cmd_bench(args: argparse.Namespace) -> int:
    try:
        return _bench(args)
    except BenchError as err:
        print(f"cadsr: error: {err}", file=sys.stderr)
        return 2


def _bench(args: argparse.Namespace) -> int:
    if not args.max_time > 0 or not math.isfinite(args.max_time):
        raise BenchError(f"--max-time must be a positive number of seconds, got {args.max_time}")
    if args.n_jobs < 1:
        raise BenchError(f"--n-jobs must be >= 1, got {args.n_jobs}")
    if any(not (g >= 0 and math.isfinite(g)) for g in args.noise):
        raise BenchError(f"--noise levels must be >= 0, got {args.noise}")
    if not args.simplify_timeout > 0:
        raise BenchError("--simplify-timeout must be > 0")
    if args.backend not in ("loky", "dask"):
        raise BenchError(f"unknown --backend {args.backend!r}; choose loky or dask")
    methods = list(dict.fromkeys(args.method))
    for m in methods:
        why = method_unavailable(m)
        if why:
            raise BenchError(why)
    seeds = parse_seeds(args.seeds)
    problems = _select_problems(args)
    params = _parse_params(args.params or [], methods)
    backend = "dask" if args.scheduler else args.backend
    tasks = make_tasks(
        problems, methods, seeds, sorted(set(args.noise)), args.max_time, params,
        args.simplify_timeout,
    )

    out = Path(args.out) if args.out else None
    where = f"Dask scheduler {args.scheduler}" if args.scheduler else (
        f"a local Dask cluster of {args.n_jobs}" if backend == "dask" else f"{args.n_jobs} job(s)"
    )
    print(
        f"cadsr bench: {len(problems)} problem(s) × {len(seeds)} seed(s) "
        f"× {len(set(args.noise))} noise level(s) "
        f"× {len(methods)} method(s) = {len(tasks)} task(s), "
        f"max {args.max_time:g} s each, on {where}"
        + (f"; results in {out}" if out else ""),
        flush=True,
    )
    start = time.perf_counter()
    if args.rescore:
        if out is None or not out.exists():
            raise BenchError(f"--rescore needs an existing --out file, got {args.out!r}")
        outcome = rescore_results(tasks, out, args.simplify_timeout)
        print(
            f"Rescored {len(outcome.rows)} row(s) of {out} "
            f"in {time.perf_counter() - start:.0f} s."
        )
    else:
        outcome = run_tasks(tasks, out, args.n_jobs, backend, args.scheduler, on_row=_print_row)
        wall = time.perf_counter() - start
        if outcome.skipped:
            print(f"(skipped {outcome.skipped} task(s) already in {out})")
        print(f"{outcome.new} new row(s) in {wall:.0f} s; {len(outcome.failed)} failed.")
    if outcome.rows and not args.no_summary:
        from .report import plot_pareto, problem_table, summary_table

        print("\n" + summary_table(outcome.rows))
        if len({r["problem"] for r in outcome.rows}) <= 60:
            print("\n" + problem_table(outcome.rows))
        if not args.no_plot:
            plot_path = Path(args.plot) if args.plot else (out.with_suffix(".png") if out else None)
            if plot_path is not None:
                title = (
                    f"{', '.join(sorted({r['suite'] for r in outcome.rows}))}: "
                    f"max_time {args.max_time:g} s"
                )
                written = plot_pareto(outcome.rows, plot_path, title)
                print(
                    f"\nWrote {written}" if written else "\n(matplotlib is not installed: no plot)"
                )
    if outcome.interrupted:
        print(
            f"Interrupted: {outcome.new} new row(s) kept; run the same command again to resume.",
            file=sys.stderr,
        )
        return 130
    return 1 if outcome.failed else 0


def add_bench_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``bench`` on ``cadsr``'s sub-command parsers.

    The handler returns the exit status.
    """
    bench = subparsers.add_parser(
        "bench",
        help="benchmark CADSR (and gplearn / Operon) on Nguyen, Constant, Feynman or your files",
        description=(
            "Run (problem, seed, noise, method) tasks in parallel and score them with SRBench's "
            "metrics. Results are appended to --out as they finish; re-running the same command "
            "skips the finished tasks."
        ),
    )
    bench.add_argument("--suite", nargs="+", default=None,
                       help=f"built-in suites: {', '.join(SUITES)} (default nguyen)")
    bench.add_argument("--data", nargs="+", default=None, metavar="PATH",
                       help="PMLB/SRBench files (.tsv, .tsv.gz, .csv) to benchmark on")
    bench.add_argument("--target", default="target", help="target column of the --data files")
    bench.add_argument("--formula", default=None,
                       help="ground truth of the one --data file (SymPy syntax)")
    bench.add_argument("--test-size", type=float, default=0.25,
                       help="held-out fraction of --data files")
    bench.add_argument("--max-train-samples", type=int, default=10_000,
                       help="training-row cap of --data files (0: none)")
    bench.add_argument("--problems", nargs="+", default=None, metavar="NAME",
                       help="only these problems, e.g. Nguyen-1 Nguyen-7")
    bench.add_argument("--method", nargs="+", default=["cadsr"], metavar="METHOD",
                       help=f"methods to compare: {', '.join(METHODS)} (default cadsr)")
    bench.add_argument("--seeds", nargs="+", default=["0"],
                       help="e.g. 0-4, 0,1,2 or 0 1 2 (default 0)")
    bench.add_argument("--noise", nargs="+", type=float, default=[0.0],
                       help="SRBench noise levels γ (default 0)")
    bench.add_argument("--max-time", type=float, default=60.0, help="seconds per fit (default 60)")
    bench.add_argument("--params", nargs="+", default=None, metavar="KEY=VALUE",
                       help="estimator parameters: KEY=VALUE for cadsr, gplearn.KEY=VALUE, "
                            "operon.KEY=VALUE")
    bench.add_argument("--n-jobs", type=int, default=1, help="parallel tasks (default 1)")
    bench.add_argument("--backend", default="loky", metavar="{loky,dask}",
                       help="loky processes on this machine (default), or a local Dask cluster")
    bench.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.5:8786")
    bench.add_argument("--out", default="bench-results.csv",
                       help="results CSV, appended to and resumed from")
    bench.add_argument("--plot", default=None,
                       help="PNG of complexity vs R² (default: --out with .png)")
    bench.add_argument("--no-plot", action="store_true", help="do not write the plot")
    bench.add_argument("--no-summary", action="store_true", help="do not print the summary tables")
    bench.add_argument("--simplify-timeout", type=float, default=10.0,
                       help="seconds per SymPy simplification")
    bench.add_argument("--rescore", action="store_true",
                       help="fit nothing: recompute the SymPy metrics of the rows already in --out")
    bench.set_defaults(run=_cmd_bench)
    return bench
