"""Summaries of benchmark results: markdown tables, JSON summaries and a complexity-vs-R² plot.

Input is the list of result rows a run writes (dicts with the columns of
:data:`cadsr_sklearn.benchmarks.results.COLUMNS`, already parsed to numbers, as
:func:`~cadsr_sklearn.benchmarks.results.read_results` returns them). Rows of
a sweep are told apart by their variant: each (method, variant) is one "arm"
(``cadsr [bic_variance=mle]``). Only the standard library is needed for the
tables; the plot needs matplotlib.

* :func:`summary_table` and :func:`problem_table`: every run;
* :func:`recovery_table` and :func:`recovery_summary`: the ``recovery`` preset
  (per problem: solved over the reals, by SRBench's test as written, before
  snapping, exact on the test set; suite means against DSR's published figures);
* :func:`variant_table` and :func:`variant_summary`: a sweep such as the
  ``variance`` preset.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path

__all__ = [
    "summary_table",
    "problem_table",
    "recovery_table",
    "recovery_summary",
    "variant_table",
    "variant_summary",
    "plot_pareto",
    "DSR_ALWAYS_SOLVED",
    "DSR_NGUYEN_MEAN",
]

#: Nguyen problems DSR (Petersen et al., 2021) solves in every run.
DSR_ALWAYS_SOLVED = ("Nguyen-1", "Nguyen-2", "Nguyen-3", "Nguyen-4", "Nguyen-6", "Nguyen-9",
                     "Nguyen-10", "Nguyen-11")
#: DSR's published mean recovery rate on Nguyen-1…12, in percent.
DSR_NGUYEN_MEAN = 83.6


def _median(values) -> float:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(values) if values else float("nan")


def _mean(values) -> float:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else float("nan")


def _rate(values) -> str:
    values = [bool(v) for v in values if v is not None]
    return f"{100 * sum(values) / len(values):.0f}" if values else "–"


def _fmt(value: float, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return format(value, spec)


def _arm(row: dict) -> str:
    """The method, and the variant of a sweep: ``cadsr [bic_variance=mle]``."""
    return f"{row['method']} [{row['variant']}]" if row.get("variant") else row["method"]


def _noise(value) -> str:
    return "–" if value is None else f"{value:g}"


def _order(value) -> float:
    """Sort key of a noise level or budget that may be unknown (files of the old scripts)."""
    return -1.0 if value is None else value


def _share(values) -> str:
    values = [bool(v) for v in values if v is not None]
    return f"{sum(values)}/{len(values)}" if values else "–"


def _markdown(header: list[str], rows: list[list[str]], align: str) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def summary_table(rows: list[dict]) -> str:
    """One line per (suite, noise, method): solution rates, median R², complexity, time.

    Rates are percentages of runs; the symbolic rate counts only problems with
    a known ground truth.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["suite"], r["noise"], _arm(r))].append(r)
    body = []
    for (suite, noise, method), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], _order(kv[0][1]), kv[0][2])
    ):
        body.append(
            [
                suite,
                _noise(noise),
                method,
                str(len(rs)),
                _rate(r["symbolic_solution"] for r in rs),
                _rate(r["accuracy_solution"] for r in rs),
                _fmt(_median(r["r2_test"] for r in rs), ".4f"),
                _fmt(_mean(r["complexity"] for r in rs), ".1f"),
                _fmt(_median(r["fit_time"] for r in rs), ".1f"),
                _fmt(_median(r["evaluations"] for r in rs), ".3g"),
            ]
        )
    header = [
        "suite", "noise", "method", "runs", "symbolic solution %", "accuracy solution %",
        "median test R²", "mean complexity", "median fit time (s)", "median evaluations",
    ]
    return _markdown(header, body, "llrrrrrrrr")


def problem_table(rows: list[dict]) -> str:
    """Per problem (and noise), per method: ``symbolic solutions/runs`` and the median test R²."""
    methods = sorted({_arm(r) for r in rows})
    groups: dict[tuple, list[dict]] = defaultdict(list)
    order: dict[str, int] = {}
    for r in rows:
        groups[(r["problem"], r["noise"], _arm(r))].append(r)
        order.setdefault(r["problem"], len(order))
    keys = sorted({(p, n) for p, n, _ in groups},
                  key=lambda k: (_order(k[1]), _natural(k[0]), order[k[0]]))
    body = []
    for problem, noise in keys:
        cells = [problem, _noise(noise)]
        for m in methods:
            rs = groups.get((problem, noise, m), [])
            if not rs:
                cells.append("")
                continue
            solved = [r["symbolic_solution"] for r in rs if r["symbolic_solution"] is not None]
            share = f"{sum(map(bool, solved))}/{len(solved)}" if solved else "–"
            cells.append(f"{share} ({_fmt(_median(r['r2_test'] for r in rs), '.4f')})")
        body.append(cells)
    header = ["problem", "noise", *(f"{m}: solved (median R²)" for m in methods)]
    return _markdown(header, body, "ll" + "r" * len(methods))


def recovery_table(rows: list[dict]) -> str:
    """The recovery preset's table: one line per problem (and noise level and arm, where they vary).

    Columns: solved over the reals (``symbolic_solution``), by SRBench's test as
    written (``solved_srbench``), τ* before snapping by SRBench's test
    (``solved_srbench_unsnapped``), exact on the test set (``exact_test``), as
    ``solved/runs``; the median test R², median k (CADSR's tree complexity) and
    median time to the best formula; the stop reasons and the range of epochs.
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    suites: dict[str, int] = {}
    for r in rows:
        groups[(r["problem"], r["noise"], _arm(r))].append(r)
        suites.setdefault(r["suite"], len(suites))
    suite_of = {r["problem"]: suites[r["suite"]] for r in rows}
    by_noise = len({k[1] for k in groups}) > 1
    by_arm = len({k[2] for k in groups}) > 1
    body = []
    for (problem, noise, arm), rs in sorted(
        groups.items(),
        key=lambda kv: (_order(kv[0][1]), suite_of[kv[0][0]], _natural(kv[0][0]), kv[0][2]),
    ):
        stops = Counter(r["stop"] for r in rs if r.get("stop"))
        epochs = [r["epochs"] for r in rs if r.get("epochs") is not None]
        span = "–" if not epochs else (
            f"{min(epochs)}" if min(epochs) == max(epochs) else f"{min(epochs)}–{max(epochs)}"
        )
        body.append([
            problem,
            *([_noise(noise)] if by_noise else []),
            *([arm] if by_arm else []),
            _share(r["symbolic_solution"] for r in rs),
            _share(r.get("solved_srbench") for r in rs),
            _share(r.get("solved_srbench_unsnapped") for r in rs),
            _share(r.get("exact_test") for r in rs),
            _fmt(_median(r["r2_test"] for r in rs), ".4f"),
            _fmt(_median(r.get("k") for r in rs), ".0f"),
            _fmt(_median(r.get("time_to_best_s") for r in rs), ".1f"),
            ", ".join(f"{stop} {n}" for stop, n in stops.most_common()) or "–",
            span,
        ])
    header = [
        "problem", *(["noise"] if by_noise else []), *(["method"] if by_arm else []),
        "solved", "SRBench", "unsnapped", "exact", "median test R²", "median k",
        "median time to best (s)", "stops", "epochs",
    ]
    return _markdown(header, body, "l" * (1 + by_noise + by_arm) + "r" * 9)


def _mean_percent(rates: list[float | None]) -> float | None:
    values = [v for v in rates if v is not None]
    return round(100 * statistics.fmean(values), 1) if values else None


def _values(rows: list[dict], column: str):
    values = sorted({r[column] for r in rows if r.get(column) is not None})
    return None if not values else (values[0] if len(values) == 1 else values)


def recovery_summary(rows: list[dict]) -> list[dict]:
    """The recovery preset's summary, one dict per arm (a JSON line each).

    Per suite, the mean over problems of each problem's rate, in percent:
    ``{suite}_mean_recovery`` (over the reals), ``…_srbench`` (SRBench's test
    as written), ``…_exact_on_test`` and ``…_srbench_unsnapped``; DSR's
    published Nguyen mean and how many of the problems DSR always solves were
    solved in at least 4 of 5 runs (80 %); the budget and noise level(s).
    """
    by_arm: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_arm[_arm(r)].append(r)
    summaries = []
    for arm, rs in sorted(by_arm.items()):
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in rs:
            groups[(r["suite"], r["problem"], r["noise"])].append(r)

        def rates(column, suite=None, problems=None):
            out = []
            for (s, problem, _), g in groups.items():
                if (suite is None or s == suite) and (problems is None or problem in problems):
                    values = [bool(r.get(column)) for r in g if r.get(column) is not None]
                    out.append(sum(values) / len(values) if values else None)
            return out

        suites = list(dict.fromkeys(["nguyen", "constant", "feynman", *(r["suite"] for r in rs)]))
        summary: dict = {"benchmark": "recovery"}
        if len(by_arm) > 1:
            summary["method"] = arm
        for suite in suites:
            summary[f"{suite}_mean_recovery"] = _mean_percent(rates("symbolic_solution", suite))
            summary[f"{suite}_mean_recovery_srbench"] = _mean_percent(
                rates("solved_srbench", suite))
            summary[f"{suite}_mean_exact_on_test"] = _mean_percent(rates("exact_test", suite))
            if suite == "nguyen":
                always = [v >= 0.8 for v in rates("symbolic_solution", "nguyen", DSR_ALWAYS_SOLVED)
                          if v is not None]
                summary["dsr_published_nguyen_mean"] = DSR_NGUYEN_MEAN
                summary["dsr_always_problems_at_4_of_5"] = f"{sum(always)}/{len(always)}"
        for suite in suites:
            summary[f"{suite}_mean_recovery_srbench_unsnapped"] = _mean_percent(
                rates("solved_srbench_unsnapped", suite))
        summary["max_time"] = _values(rs, "max_time")
        summary["noise"] = _values(rs, "noise")
        summaries.append(summary)
    return summaries


def _variant_groups(rows: list[dict]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["noise"], _arm(r))].append(r)
    return dict(sorted(groups.items(), key=lambda kv: (_order(kv[0][0]), kv[0][1])))


def variant_table(rows: list[dict]) -> str:
    """A sweep's table: per noise level and arm, solution rates and the median k."""
    body = [
        [
            _noise(noise), arm, str(len(rs)),
            _rate(r["symbolic_solution"] for r in rs),
            _rate(r["accuracy_solution"] for r in rs),
            _fmt(_median(r.get("k") for r in rs), ".0f"),
        ]
        for (noise, arm), rs in _variant_groups(rows).items()
    ]
    header = ["noise", "method [variant]", "runs", "symbolic solution %",
              "accuracy solution % (R² > 0.999)", "median k"]
    return _markdown(header, body, "llrrrr")


def variant_summary(rows: list[dict], benchmark: str = "sweep") -> dict:
    """A sweep's summary (a JSON line): ``{"VALUE@NOISE": {solved, accurate, median_k, runs}}``.

    VALUE is the variant's value when it sets one parameter (``mle`` for
    ``bic_variance=mle``), else the variant; the method is prefixed when
    several were run.
    """
    summary: dict = {"benchmark": benchmark, "max_time": _values(rows, "max_time")}
    methods = {r["method"] for r in rows}
    for (noise, _), rs in _variant_groups(rows).items():
        variant = rs[0].get("variant") or ""
        name, eq, value = variant.partition("=")
        label = value if eq and " " not in variant else (variant or rs[0]["method"])
        if len(methods) > 1:
            label = f"{rs[0]['method']}:{label}"
        solved = [bool(r["symbolic_solution"]) for r in rs if r["symbolic_solution"] is not None]
        k = _median(r.get("k") for r in rs)
        summary[f"{label}@{noise}"] = {
            "solved": round(statistics.fmean(solved), 3) if solved else None,
            "accurate": round(statistics.fmean(bool(r["accuracy_solution"]) for r in rs), 3),
            "median_k": None if math.isnan(k) else k,
            "runs": len(rs),
        }
    return summary


#: Interpolation: training R² above this …
INTERPOLATION_TRAIN_R2 = 0.999999
#: … with test R² below this, or as many fitted constants as the rows less one.
INTERPOLATION_TEST_R2 = 0.9


def fitted_constants(formula: str) -> int:
    """Fitted constants of a formula as written: its floats (snapped numbers are exact)."""
    import sympy

    try:
        return len(sympy.sympify(formula).atoms(sympy.Float))
    except (sympy.SympifyError, TypeError, ValueError):
        return 0


def is_interpolation(row: dict) -> bool:
    """Whether a run's answer interpolates its training rows instead of describing them."""
    r2_train, r2_test = row.get("r2_train"), row.get("r2_test")
    memorised = (r2_train is not None and r2_train > INTERPOLATION_TRAIN_R2
                 and r2_test is not None and r2_test < INTERPOLATION_TEST_R2)
    n_train = row.get("n_train")
    too_many = (n_train is not None
                and fitted_constants(row.get("model_unsnapped") or row.get("model") or "")
                >= n_train - 1)
    return bool(memorised or too_many)


def _few_rows_groups(rows: list[dict]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r.get("n_train") or 0, r["noise"], _arm(r))].append(r)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0][0], _order(kv[0][1]), kv[0][2])))


def few_rows_table(rows: list[dict]) -> str:
    """Per training rows, noise and arm: SRBench's solution rate and the interpolation rate."""
    body = [
        [str(n), _noise(noise), arm, str(len(rs)),
         _rate(r["solved_srbench"] for r in rs),
         _rate(is_interpolation(r) for r in rs),
         _fmt(_median(r.get("r2_test") for r in rs), ".3f")]
        for (n, noise, arm), rs in _few_rows_groups(rows).items()
    ]
    header = ["rows", "noise", "method [variant]", "runs", "solved % (SRBench)",
              "interpolation %", "median test R²"]
    return _markdown(header, body, "rllrrrr")


def few_rows_summary(rows: list[dict]) -> list[dict]:
    """One JSON line: ``{"ROWS@NOISE arm": {solved, interpolation, runs}}``."""
    summary: dict = {"benchmark": "few-rows", "max_time": _values(rows, "max_time")}
    for (n, noise, arm), rs in _few_rows_groups(rows).items():
        solved = [bool(r["solved_srbench"]) for r in rs if r["solved_srbench"] is not None]
        summary[f"{n}@{noise} {arm}"] = {
            "solved": round(statistics.fmean(solved), 3) if solved else None,
            "interpolation": round(statistics.fmean(is_interpolation(r) for r in rs), 3),
            "runs": len(rs),
        }
    return [summary]


def _natural(name: str) -> tuple:
    """Sort "Nguyen-2" before "Nguyen-10"."""
    head, _, tail = name.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (name, 0)


def plot_pareto(rows: list[dict], path: str | Path, title: str = "") -> Path | None:
    """Scatter of simplified complexity vs test R² per method, with each method's Pareto front.

    Left panel: R² (clipped below at 0). Right panel: 1 − R² on a log scale
    (floored at 1e-16), which separates the near-exact fits. Returns the path, or
    None when matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    by_method: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r["complexity"] is None or r["r2_test"] is None or math.isnan(r["r2_test"]):
            continue
        by_method[_arm(r)].append((float(r["complexity"]), float(r["r2_test"])))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (method, points) in enumerate(sorted(by_method.items())):
        color = colors[i % len(colors)]
        k = [p[0] for p in points]
        r2 = [max(p[1], 0.0) for p in points]
        err = [min(max(1.0 - p[1], 1e-16), 1.0) for p in points]
        axes[0].scatter(
            k, r2, s=22, alpha=0.55, color=color, label=f"{method} ({len(points)} runs)"
        )
        axes[1].scatter(k, err, s=22, alpha=0.55, color=color, label=method)
        front = _front(points)
        if front:
            fk = [p[0] for p in front]
            axes[0].step(fk, [max(p[1], 0.0) for p in front], where="post", color=color, lw=1.6)
            axes[1].step(
                fk, [min(max(1.0 - p[1], 1e-16), 1.0) for p in front],
                where="post", color=color, lw=1.6,
            )
    axes[0].set_ylabel("test R² (clipped at 0)")
    axes[0].set_ylim(-0.03, 1.03)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("1 − test R² (log)")
    for ax in axes:
        ax.set_xlabel("simplified complexity (SymPy nodes)")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle(title or "Complexity vs accuracy; lines: each method's Pareto front", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points with a higher R² than every simpler point (ties: lowest complexity first)."""
    front: list[tuple[float, float]] = []
    for k, r2 in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or r2 > front[-1][1]:
            front.append((k, r2))
    return front
