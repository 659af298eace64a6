"""Before/after table of constant snapping from recovery result files.

Each CADSR row of a ``cadsr bench`` results file (``--preset recovery`` or any other run; also
the CSV files of the former ``bench_recovery.py`` script) judges one fit twice: τ* with its
constants as fitted (``*_unsnapped`` columns, what ``snap_constants=False`` returns: snapping
runs after the search) and the snapped τ* the estimator returns. This prints, per file,
SRBench's symbolic-solution rate (as SRBench's code judges it: complex symbols, 3-decimal
rounding), the median test R² and the median SymPy size of the reported formula, before and
after, and the fits whose verdict changed.

    python perf/compare_snapping.py feyn_g0.1.csv feyn_g0.01.csv const_g0.1.csv
    python perf/compare_snapping.py --smoke     # two files of the experiments log
"""

import argparse
import statistics
from pathlib import Path

from cadsr_sklearn.benchmarks.results import read_results

#: --smoke's files: two of the experiments log (docs/experiments/small-data.md).
SMOKE_FILES = [Path(__file__).resolve().parent.parent / "docs" / "experiments" / "small_data"
               / name for name in ("rows8_before.csv", "rows8_after.csv")]


def summary(path: Path) -> dict:
    rows = [r for r in read_results(path)
            if not r.get("error") and r.get("solved_srbench_unsnapped") is not None]
    if not rows:
        return {"file": path.name, "fits": 0}

    def rate(column: str) -> float:
        return 100 * statistics.mean(int(r[column]) for r in rows)

    def median(column: str) -> float:
        return statistics.median(float(r[column]) for r in rows)

    changed = [(r["problem"], r["seed"], int(r["solved_srbench_unsnapped"]),
                int(r["solved_srbench"]))
               for r in rows if r["solved_srbench_unsnapped"] != r["solved_srbench"]]
    return {
        "file": path.name, "fits": len(rows),
        "solved_before": rate("solved_srbench_unsnapped"), "solved_after": rate("solved_srbench"),
        "r2_before": median("r2_test_unsnapped"), "r2_after": median("r2_test"),
        "size_before": median("size_unsnapped"), "size_after": median("size"),
        "changed": changed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.files = SMOKE_FILES
    if not args.files:
        parser.error("give the result files")
    print(f"{'file':<18}{'fits':>5}  {'solved (SRBench)':>18}  {'median test R²':>22}  "
          f"{'median size':>13}")
    details = []
    for path in args.files:
        s = summary(path)
        if not s["fits"]:
            print(f"{s['file']:<18}{0:>5}")
            continue
        print(f"{s['file']:<18}{s['fits']:>5}"
              f"  {s['solved_before']:7.1f} → {s['solved_after']:5.1f} %"
              f"  {s['r2_before']:9.6f} → {s['r2_after']:9.6f}"
              f"  {s['size_before']:5.1f} → {s['size_after']:5.1f}")
        details += [(s["file"], *c) for c in s["changed"]]
    if details:
        print("\nverdicts that changed (file, problem, seed, before → after):")
        for file, problem, seed, before, after in details:
            print(f"  {file:<18}{problem:<20} seed {seed}: {before} → {after}")


if __name__ == "__main__":
    main()
