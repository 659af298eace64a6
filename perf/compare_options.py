"""Side-by-side table of recovery result files, one file per setting (an A/B of options).

Each file is a ``cadsr bench --preset recovery`` results file (or a CSV of the former
``bench_recovery.py``) of one setting on the same problems and seeds. Per file it prints the
fits, SRBench's symbolic-solution count (as SRBench's code judges it: complex symbols, 3-decimal
rounding) overall and per suite, how many of DSR's always-solved Nguyen problems were solved in
every seed, the median time to a solution over all fits (an unsolved fit counts as never
solved, so the median is ∞ once half the fits fail), PAR2 (the mean time to a solution with an
unsolved fit counted as twice the budget: one number for "solves more, sooner") and the median
test R². With ``--per-problem``, also each problem's solved count and median fit time per file.

    python perf/compare_options.py --budget 30 base.csv arity.csv length.csv
    python perf/compare_options.py --smoke     # two files of the experiments log: that it runs
"""

import argparse
import math
import statistics
from pathlib import Path

from cadsr_sklearn.benchmarks.results import read_results

#: --smoke's files: an A/B of the experiments log (docs/experiments/policy-options.md).
SMOKE_FILES = [Path(__file__).resolve().parent.parent / "docs" / "experiments" / "policy_options"
               / name for name in ("screen_base.csv", "screen_arity.csv")]
DSR_ALWAYS = ["Nguyen-1", "Nguyen-2", "Nguyen-3", "Nguyen-4", "Nguyen-6", "Nguyen-9",
              "Nguyen-10", "Nguyen-11"]
SUITES = ("Nguyen", "Constant", "Feynman")


def _solved(row: dict) -> bool:
    return bool(row["solved_srbench"])


def summary(path: Path, budget: float) -> dict:
    rows = [r for r in read_results(path) if not r.get("error")]
    by_suite = {s: [r for r in rows if r["problem"].startswith(s)] for s in SUITES}
    times = [float(r["fit_time"]) if _solved(r) else math.inf for r in rows]
    present = [p for p in DSR_ALWAYS if any(r["problem"] == p for r in rows)]
    always = [p for p in present if all(_solved(r) for r in rows if r["problem"] == p)]
    return {
        "name": path.stem, "fits": len(rows), "solved": sum(map(_solved, rows)),
        **{s: (sum(map(_solved, rs)), len(rs)) for s, rs in by_suite.items()},
        "dsr_always": f"{len(always)}/{len(present)}",
        "median_time": statistics.median(times) if times else math.nan,
        "par2": statistics.mean(t if math.isfinite(t) else 2 * budget for t in times),
        "r2": statistics.median(float(r["r2_test"]) for r in rows),
    }


def per_problem(paths: list[Path]) -> None:
    files = {p.stem: [r for r in read_results(p) if not r.get("error")] for p in paths}
    problems = list(dict.fromkeys(r["problem"] for rows in files.values() for r in rows))
    print(f"\n{'problem':<13}" + "".join(f"{name[:14]:>15}" for name in files))
    for problem in problems:
        cells = []
        for rows in files.values():
            mine = [r for r in rows if r["problem"] == problem]
            if not mine:
                cells.append(f"{'-':>15}")
                continue
            median = statistics.median(float(r["fit_time"]) for r in mine)
            cells.append(f"{f'{sum(map(_solved, mine))}/{len(mine)} {median:5.1f}s':>15}")
        print(f"{problem:<13}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--budget", type=float, help="--max-time of the runs (s)")
    parser.add_argument("--per-problem", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.files, args.budget, args.per_problem = SMOKE_FILES, 30.0, True
    if not args.files or args.budget is None:
        parser.error("give the result files and --budget")
    print(f"{'setting':<16}{'fits':>5}{'solved':>9}{'Nguyen':>9}{'Constant':>10}{'Feynman':>9}"
          f"{'DSR-8':>7}{'median t':>10}{'PAR2':>7}{'R² med':>9}")
    for path in args.files:
        s = summary(path, args.budget)
        suites = "".join(f"{f'{s[k][0]}/{s[k][1]}' if s[k][1] else '-':>{w}}"
                         for k, w in (("Nguyen", 9), ("Constant", 10), ("Feynman", 9)))
        print(f"{s['name'][:15]:<16}{s['fits']:>5}{s['solved']:>5}/{s['fits']:<3}{suites}"
              f"{s['dsr_always']:>7}{s['median_time']:>10.1f}{s['par2']:>7.1f}{s['r2']:>9.4f}")
    if args.per_problem:
        per_problem(args.files)


if __name__ == "__main__":
    main()
