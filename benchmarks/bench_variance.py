"""BIC variance choice: σ² = the expression's own MSE ("mle") or the variance of y ("target").

Runs both on a sample of the development suites (Nguyen, Constant, Feynman dev) at noise 0 and
0.1 with the same seeds and budget, and reports the symbolic-solution rate, the accuracy-solution
rate (test R² > 0.999) and the median complexity of each. Final line: JSON.

    python benchmarks/bench_variance.py --max-time 20 --seeds 0 --out variance.csv
"""

import argparse
import csv
import json
import os
import statistics
from pathlib import Path

from joblib import Parallel, delayed

PROBLEMS = [
    "Nguyen-1", "Nguyen-2", "Nguyen-5", "Nguyen-7", "Nguyen-8", "Nguyen-10",
    "Constant-1", "Constant-3", "Constant-5", "Constant-8",
    "Feynman-I.12.5", "Feynman-I.14.4", "Feynman-I.18.4", "Feynman-I.43.31",
    "Feynman-II.34.2", "Feynman-III.15.14",
]
FIELDS = [
    "problem", "seed", "noise", "variance", "solved", "r2_test", "complexity", "epochs", "formula",
]


def run_one(name, seed, noise, variance, max_time):
    os.environ["OMP_NUM_THREADS"] = "1"
    import sympy

    from cadsr_sklearn import CADSRRegressor
    from cadsr_sklearn.benchmarks import get_problem
    from cadsr_sklearn.benchmarks.metrics import is_symbolic_solution

    problem = get_problem(name)
    data = problem.sample(seed=seed, noise=noise)
    model = CADSRRegressor(
        max_time=max_time, random_state=seed, bic_variance=variance, device="cpu"
    )
    model.fit(data.X_train, data.y_train)
    r2 = float(model.score(data.X_test, data.y_test))
    formula = model.expression_.xreplace(
        {sympy.Symbol(f"x{i}"): s for i, s in enumerate(problem.symbols)}
    )
    solved = r2 > 0.5 and is_symbolic_solution(formula, problem.expression)
    return dict(problem=name, seed=seed, noise=noise, variance=variance, solved=int(solved),
                r2_test=round(r2, 6), complexity=model.best_expression_.complexity,
                epochs=model.n_epochs_, formula=str(formula))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-time", type=float, default=20.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.1])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default="variance.csv")
    args = parser.parse_args()
    out = Path(args.out)
    done = set()
    if out.exists():
        with out.open() as fh:
            done = {
                (r["problem"], int(r["seed"]), float(r["noise"]), r["variance"])
                for r in csv.DictReader(fh)
            }
    else:
        with out.open("w", newline="") as fh:
            csv.DictWriter(fh, FIELDS).writeheader()
    tasks = [(p, s, n, v) for p in PROBLEMS for s in args.seeds for n in args.noise
             for v in ("mle", "target") if (p, s, n, v) not in done]
    for row in Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(run_one)(*task, args.max_time) for task in tasks
    ):
        with out.open("a", newline="") as fh:
            csv.DictWriter(fh, FIELDS).writerow(row)
        print(row, flush=True)
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    summary = {}
    print(f"\n{'noise':>6} {'variance':>8} {'solved':>8} {'R²>0.999':>9} {'k med':>6}")
    for noise in args.noise:
        for variance in ("mle", "target"):
            rs = [r for r in rows if float(r["noise"]) == noise and r["variance"] == variance]
            if not rs:
                continue
            solved = sum(int(r["solved"]) for r in rs) / len(rs)
            accurate = sum(float(r["r2_test"]) > 0.999 for r in rs) / len(rs)
            k = statistics.median(int(r["complexity"]) for r in rs)
            summary[f"{variance}@{noise}"] = {
                "solved": round(solved, 3), "accurate": round(accurate, 3),
                "median_k": k, "runs": len(rs),
            }
            print(f"{noise:>6} {variance:>8} {solved:>8.2f} {accurate:>9.2f} {k:>6.0f}")
    print(json.dumps({"benchmark": "bic_variance", "max_time": args.max_time, **summary}))


if __name__ == "__main__":
    main()
