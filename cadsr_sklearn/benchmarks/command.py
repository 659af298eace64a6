"""``cadsr bench``: the command line of the benchmark runner.

Runs (problem, seed, noise, method[, variant]) tasks in parallel, resumably,
and prints the report; ``--preset`` names a study with its own defaults and
report (:mod:`.presets`), ``--rescore`` judges the rows of ``--out`` again
without fitting, and ``--report`` prints the report of existing results files,
those of the former ``bench_recovery.py`` and ``bench_variance.py`` scripts
included. Example::

    cadsr bench --suite nguyen --seeds 0-4 --noise 0 0.1 --max-time 60 \\
        --method cadsr gplearn operon --n-jobs 2 --out results.csv
    cadsr bench --preset recovery --suite nguyen constant --seeds 0-4 --max-time 60 \\
        --param arity_prior=True --out recovery.csv
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from ..user_input import UsageError
from .execution import run_tasks
from .methods import METHODS, method_unavailable
from .presets import PRESETS
from .results import read_results, results_format
from .suites import SUITES, TableProblem
from .tasks import (OPERATORS, make_tasks, method_params, parse_seeds, select_problems,
                    sweep_variants)

__all__ = ["add_bench_parser"]

#: Defaults of the options a preset may set; None in argparse means "not given".
_DEFAULTS: dict[str, Any] = dict(
    seeds=["0"], noise=[0.0], max_time=60.0, n_jobs=1, operators="suite",
    out="bench-results.csv", sweep=[],
)


def _resolve(args: argparse.Namespace) -> None:
    """Fill the options not given from the preset, then from :data:`_DEFAULTS`."""
    preset = PRESETS[args.preset] if args.preset else None
    defaults = {**_DEFAULTS, **(preset.defaults if preset else {})}
    if preset is not None and not args.problems and args.suite is None and not args.data:
        args.problems = list(preset.problems or []) or None
    suite = defaults.pop("suite", None)
    chosen_by_name = bool(args.problems) and args.suite is None and not args.data
    if args.suite is None and not args.data and not chosen_by_name:
        args.suite = suite
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.params = [*(args.params or []), *(args.param or [])]


def _check(args: argparse.Namespace) -> None:
    if not args.max_time > 0 or not math.isfinite(args.max_time):
        raise UsageError(f"--max-time must be a positive number of seconds, got {args.max_time}")
    if args.n_jobs < 1:
        raise UsageError(f"--n-jobs must be >= 1, got {args.n_jobs}")
    if any(not (g >= 0 and math.isfinite(g)) for g in args.noise):
        raise UsageError(f"--noise levels must be >= 0, got {args.noise}")
    if not args.simplify_timeout > 0:
        raise UsageError("--simplify-timeout must be > 0")
    if args.backend not in ("loky", "dask"):
        raise UsageError(f"unknown --backend {args.backend!r}; choose loky or dask")
    if args.operators not in OPERATORS:
        raise UsageError(f"unknown --operators {args.operators!r}; choose suite or default")
    if args.n_train is not None and args.n_train < 1:
        raise UsageError(f"--n-train must be >= 1, got {args.n_train}")
    if args.rescore and args.report:
        raise UsageError("--rescore and --report do not go together")


def _print_row(row: dict, i: int, total: int) -> None:
    variant = f" [{row['variant']}]" if row.get("variant") else ""
    head = (
        f"[{i:>{len(str(total))}}/{total}] {row['problem']} seed={row['seed']} "
        f"noise={row['noise']:g} {row['method']}{variant}"
    )
    if row.get("error"):
        print(f"{head}: FAILED {row['error']}", flush=True)
        return
    solved = {True: "yes", False: "no", None: "–"}[row.get("symbolic_solution")]
    model = str(row.get("model", ""))
    model = model if len(model) <= 70 else model[:67] + "..."
    k = f" k={row['k']}" if row.get("k") is not None else ""
    print(
        f"{head}: R²={row['r2_test']:.4f} solved={solved} complexity={row['complexity']}{k} "
        f"{row['fit_time']:.1f}s  {model}",
        flush=True,
    )


def _print_report(rows: list[dict], preset: str | None, plot: Path | None) -> None:
    """The summary table, the per-problem table (a preset's own tables), the plot, a JSON line."""
    from .report import plot_pareto, problem_table, summary_table

    print("\n" + summary_table(rows))
    if preset is not None:
        tables, summaries = PRESETS[preset].tables(rows), PRESETS[preset].summaries(rows)
    else:
        many = len({r["problem"] for r in rows}) > 60
        tables, summaries = ([] if many else [problem_table(rows)]), []
    for table in tables:
        print("\n" + table)
    if plot is not None:
        budgets = sorted({r["max_time"] for r in rows if r.get("max_time") is not None})
        title = ", ".join(sorted({r["suite"] for r in rows}))
        title += f": max_time {', '.join(f'{b:g}' for b in budgets)} s" if budgets else ""
        written = plot_pareto(rows, plot, title)
        print(f"\nWrote {written}" if written else "\n(matplotlib is not installed: no plot)")
    if summaries:
        print()
    for summary in summaries:
        print(json.dumps(summary))


def _report(args: argparse.Namespace) -> int:
    """``--report FILE …``: read results files and print their report; nothing is run."""
    rows: list[dict] = []
    detected = set()
    for path in args.report:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
        kind = results_format(path)
        if kind in ("recovery-script", "variance-script"):
            detected.add(kind.split("-")[0])
        rows.extend(read_results(path))
    if args.problems:
        wanted = {p.lower() for p in args.problems}
        rows = [r for r in rows if r["problem"].lower() in wanted]
    rows = [r for r in rows if not r.get("error")]
    if not rows:
        raise UsageError(f"no results to report in {', '.join(args.report)}")
    preset = args.preset or (detected.pop() if len(detected) == 1 else None)
    print(f"cadsr bench: {len(rows)} row(s) from {len(args.report)} file(s)"
          + (f", reported as the {preset} preset" if preset else ""))
    if not args.no_summary:
        _print_report(rows, preset, None if args.no_plot or not args.plot else Path(args.plot))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    return _bench(args)  # a UsageError is reported by cadsr's main, as for every command


def _bench(args: argparse.Namespace) -> int:
    _resolve(args)
    _check(args)
    if args.report:
        return _report(args)
    if args.preset and PRESETS[args.preset].runner is not None:
        return PRESETS[args.preset].runner(args)
    methods = list(dict.fromkeys(args.method))
    for m in methods:
        why = method_unavailable(m)
        if why:
            raise UsageError(why)
    seeds = parse_seeds(args.seeds)
    problems = select_problems(
        args.suite, args.problems, args.data, target=args.target, formula=args.formula,
        test_size=args.test_size, max_train_samples=args.max_train_samples,
    )
    if args.n_train is not None and any(isinstance(p, TableProblem) for p in problems):
        raise UsageError("--n-train applies to the built-in suites, not to --data files")
    params = method_params(args.params, methods)
    variants = (
        sweep_variants(args.sweep, lambda items: method_params(items, methods))
        if args.sweep else None
    )
    backend = "dask" if args.scheduler else args.backend
    tasks = make_tasks(
        problems, methods, seeds, sorted(set(args.noise)), args.max_time, params,
        args.simplify_timeout, variants=variants, operators=args.operators, n_train=args.n_train,
    )

    out = Path(args.out) if args.out else None
    where = f"Dask scheduler {args.scheduler}" if args.scheduler else (
        f"a local Dask cluster of {args.n_jobs}" if backend == "dask" else f"{args.n_jobs} job(s)"
    )
    print(
        f"cadsr bench{f' --preset {args.preset}' if args.preset else ''}: "
        f"{len(problems)} problem(s) × {len(seeds)} seed(s) "
        f"× {len(set(args.noise))} noise level(s) "
        f"× {len(methods)} method(s) "
        + (f"× {len(variants)} variant(s) " if variants else "")
        + f"= {len(tasks)} task(s), "
        f"max {args.max_time:g} s each, on {where}"
        + (f"; results in {out}" if out else ""),
        flush=True,
    )
    start = time.perf_counter()
    if args.rescore:
        from .rescore import rescore_results

        if out is None or not out.exists():
            raise UsageError(f"--rescore needs an existing --out file, got {args.out!r}")
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
        plot = None
        if not args.no_plot:
            plot = Path(args.plot) if args.plot else (out.with_suffix(".png") if out else None)
        _print_report(outcome.rows, args.preset, plot)
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
            "skips the finished tasks. A --preset sets the defaults and report of a study; "
            "options given still override it."
        ),
    )
    presets = "; ".join(f"{p.name}: {p.help}" for p in PRESETS.values())
    bench.add_argument("--preset", choices=sorted(PRESETS), default=None,
                       help=f"a study's defaults and report ({presets})")
    bench.add_argument("--suite", nargs="+", default=None,
                       help=f"built-in suites: {', '.join(SUITES)} (default nguyen; with "
                            "--problems alone, every built-in problem of those names)")
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
    bench.add_argument("--seeds", nargs="+", default=None,
                       help="e.g. 0-4, 0,1,2 or 0 1 2 (default 0)")
    bench.add_argument("--noise", nargs="+", type=float, default=None,
                       help="SRBench noise levels γ (default 0)")
    bench.add_argument("--n-train", type=int, default=None, metavar="N",
                       help="training rows drawn per built-in problem (default: the suite's own)")
    bench.add_argument("--max-time", type=float, default=None,
                       help="seconds per fit (default 60)")
    bench.add_argument("--operators", choices=OPERATORS, default=None,
                       help="suite: each problem's own operator set, exactly (default); "
                            "default: CADSR's default token set (pow, sqrt, 1, constants)")
    bench.add_argument("--params", nargs="+", default=None, metavar="KEY=VALUE",
                       help="estimator parameters: KEY=VALUE for cadsr, gplearn.KEY=VALUE, "
                            "operon.KEY=VALUE")
    bench.add_argument("--param", action="append", default=None, metavar="KEY=VALUE",
                       help="one more estimator parameter, as in --params (repeatable)")
    bench.add_argument("--sweep", nargs="+", default=None, metavar="KEY=VALUE",
                       help="run each setting as a variant of every task, side by side "
                            "(several values of one KEY; different keys multiply)")
    bench.add_argument("--n-jobs", type=int, default=None, help="parallel tasks (default 1)")
    bench.add_argument("--backend", default="loky", metavar="{loky,dask}",
                       help="loky processes on this machine (default), or a local Dask cluster")
    bench.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.5:8786")
    bench.add_argument("--out", default=None,
                       help="results CSV, appended to and resumed from (default "
                            "bench-results.csv, or the preset's)")
    bench.add_argument("--plot", default=None,
                       help="PNG of complexity vs R² (default: --out with .png)")
    bench.add_argument("--no-plot", action="store_true", help="do not write the plot")
    bench.add_argument("--no-summary", action="store_true", help="do not print the summary tables")
    bench.add_argument("--simplify-timeout", type=float, default=10.0,
                       help="seconds per SymPy simplification")
    bench.add_argument("--rescore", action="store_true",
                       help="fit nothing: judge the rows already in --out again from their "
                            "stored formulas")
    bench.add_argument("--report", nargs="+", default=None, metavar="FILE",
                       help="fit nothing: print the report of these results files (also those "
                            "of the former bench_recovery.py and bench_variance.py)")
    bench.set_defaults(run=_cmd_bench)
    return bench
