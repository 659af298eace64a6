"""Summaries of benchmark results: markdown tables and a complexity-vs-R² plot.

Input is the list of result rows the runner writes (dicts with the columns of
:data:`cadsr_sklearn.benchmarks.runner.COLUMNS`, already parsed to numbers).
Only the standard library is needed for the tables; the plot needs matplotlib.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from pathlib import Path

__all__ = ["summary_table", "problem_table", "plot_pareto"]


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
        groups[(r["suite"], r["noise"], r["method"])].append(r)
    body = []
    for (suite, noise, method), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])
    ):
        body.append(
            [
                suite,
                f"{noise:g}",
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
    methods = sorted({r["method"] for r in rows})
    groups: dict[tuple, list[dict]] = defaultdict(list)
    order: dict[str, int] = {}
    for r in rows:
        groups[(r["problem"], r["noise"], r["method"])].append(r)
        order.setdefault(r["problem"], len(order))
    keys = sorted({(p, n) for p, n, _ in groups}, key=lambda k: (k[1], _natural(k[0]), order[k[0]]))
    body = []
    for problem, noise in keys:
        cells = [problem, f"{noise:g}"]
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
        by_method[r["method"]].append((float(r["complexity"]), float(r["r2_test"])))
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
