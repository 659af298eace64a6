"""With units against without: paired tables from a ``cadsr bench`` results file.

The file holds both methods, ``cadsr`` and ``cadsr-units``, on the same problems,
seeds and noise levels, e.g.::

    cadsr bench --suite feynman --seeds 0-1 --noise 0 0.1 --max-time 60 --n-train 2000 \\
        --operators suite --method cadsr cadsr-units --n-jobs 2 --out units2000.csv
    python perf/compare_units.py units2000.csv [--problems-with-units-only]
    python perf/compare_units.py --smoke     # a file of the experiments log: that it runs

Per noise level it prints, for each method, the fits SRBench's symbolic-solution test
solves as SRBench's code judges it (complex symbols, 3-decimal rounding: the
``solved_srbench`` column, the headline), the same test with this package's second try
over the reals (``symbolic_solution``), accuracy solutions (test R² > 0.999), the median
test R² and complexity, epochs per second (over the fits that ran the whole budget), and
the mean share of each batch's new formulas the units check rejected; then a per-problem
table of the pairs that differ.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from cadsr_sklearn.benchmarks.results import read_results
from cadsr_sklearn.benchmarks.suites import get_suite
from cadsr_sklearn.units.quantities import parse_units

METHODS = ("cadsr", "cadsr-units")
#: --smoke's file: one of the experiments log (docs/experiments/units.md).
SMOKE_FILE = (Path(__file__).resolve().parent.parent / "docs" / "experiments" / "units"
              / "feyn30.csv")


def _constraining_problems() -> set[str]:
    """The Feynman problems whose units say something (some variable has a dimension)."""
    names = set()
    for problem in get_suite("feynman"):
        if problem.units is not None and parse_units(
                list(problem.units), problem.target_units, problem.variables).constrains:
            names.add(problem.name)
    return names


def _rate(rows: list[dict], column: str) -> str:
    solved = sum(bool(r[column]) for r in rows)
    return f"{solved}/{len(rows)} ({100 * solved / len(rows):.0f} %)"


def _summary_line(rows: list[dict]) -> list[str]:
    r2 = statistics.median(r["r2_test"] for r in rows)
    complexity = statistics.median(r["complexity"] for r in rows if r["complexity"] is not None)
    full = [r for r in rows if r["fit_time"] and r["stop"] == "max_time"]
    speed = (statistics.median(r["epochs"] / r["fit_time"] for r in full) if full else None)
    rejected = [r["units_rejected"] for r in rows if r.get("units_rejected") is not None]
    return [_rate(rows, "solved_srbench"), _rate(rows, "symbolic_solution"),
            _rate(rows, "accuracy_solution"), f"{r2:.4f}", f"{complexity:.0f}",
            "—" if speed is None else f"{speed:.2f} ({len(full)})",
            f"{100 * statistics.mean(rejected):.1f} %" if rejected else "—"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?")
    parser.add_argument("--problems-with-units-only", action="store_true",
                        help="leave out the problems whose quantities are all dimensionless")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.results, args.problems_with_units_only = str(SMOKE_FILE), True
    if args.results is None:
        parser.error("give the results file")
    rows = [r for r in read_results(args.results) if r["method"] in METHODS and not r["error"]]
    if args.problems_with_units_only:
        keep = _constraining_problems()
        rows = [r for r in rows if r["problem"] in keep]
    by_key = defaultdict(dict)
    for r in rows:
        by_key[(r["problem"], r["seed"], r["noise"])][r["method"]] = r
    paired = {k: v for k, v in by_key.items() if len(v) == 2}
    print(f"{len(paired)} pairs of fits ({len(by_key) - len(paired)} unpaired left out), "
          f"{args.results}\n")
    header = ("| noise | method | SRBench solved | solved, reals retry | R² > 0.999 | "
              "median test R² | median complexity | epochs/s (fits to the budget) | "
              "units-rejected share |")
    print(header)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for noise in sorted({k[2] for k in paired}):
        for method in METHODS:
            group = [v[method] for k, v in sorted(paired.items()) if k[2] == noise]
            print(f"| {noise:g} | {method} | " + " | ".join(_summary_line(group)) + " |")
    print("\nPairs that differ in SRBench's verdict:\n")
    print("| problem | seed | noise | without units | with units |")
    print("|---|---:|---:|---|---|")
    for (problem, seed, noise), pair in sorted(paired.items()):
        a, b = pair["cadsr"], pair["cadsr-units"]
        if bool(a["solved_srbench"]) != bool(b["solved_srbench"]):
            def cell(r):
                verdict = "**solved**" if r["solved_srbench"] else f"R² {r['r2_test']:.4f}"
                model = r["model"] if len(r["model"]) <= 60 else r["model"][:57] + "…"
                return f"{verdict}: `{model}`"
            print(f"| {problem.removeprefix('Feynman-')} | {seed} | {noise:g} | {cell(a)} | "
                  f"{cell(b)} |")


if __name__ == "__main__":
    main()
