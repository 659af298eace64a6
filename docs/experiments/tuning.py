"""Measure the effect of one knob at a time on small benchmark problems.

Used for the numbers in ``docs/tuning.rst``. Each run is one (problem, seed,
setting) with a wall-clock budget; a noise-free problem stops as soon as the
formula is exact (``tol``), so a solved run is usually shorter than the budget.

    python docs/experiments/tuning.py --out docs/experiments/tuning_results.jsonl
    python docs/experiments/tuning.py --summary docs/experiments/tuning_results.jsonl

Timings depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem
from cadsr_sklearn.benchmarks.metrics import is_symbolic_solution, r2_score

# A short-budget baseline: smaller batches and a larger learning rate than the
# paper's (batch 1000, l = 1e-4, tuned for 600 epochs), and the profile-likelihood
# BIC; the rows below change one thing at a time.
BASELINE = dict(
    alpha=5.0,
    beta=0.01,
    epsilon=0.2,
    entropy_coef=0.005,
    batch_size=250,
    learning_rate=1e-3,
    bic_variance="mle",
)
PAPER_SETTINGS = dict(batch_size=1000, learning_rate=1e-4, bic_variance="target")
VARIATIONS = [
    ("baseline", None),
    ("paper_settings", "batch 1000, lr 1e-4, bic target"),
    ("bic_variance", "target"),
    ("alpha", 1.0),
    ("alpha", 20.0),
    ("beta", 0.0),
    ("beta", 0.1),
    ("epsilon", 0.05),
    ("epsilon", 0.5),
    ("entropy_coef", 0.0),
    ("entropy_coef", 0.05),
    ("batch_size", 1000),
    ("operators", "default"),  # the package's default set instead of the suite's
]


def run_one(problem_name: str, seed: int, knob: str, value, max_time: float, n_train: int) -> dict:
    problem = get_problem(problem_name)
    data = problem.sample(seed=seed, n_train=n_train)
    params = dict(
        BASELINE,
        binary_operators=problem.binary_operators,
        unary_operators=problem.unary_operators,
        use_constants=problem.use_constants,
        max_time=max_time,
        random_state=seed,
        device="cpu",
    )
    if knob == "operators":
        params.pop("binary_operators")
        params.pop("unary_operators")
    elif knob == "paper_settings":
        params.update(PAPER_SETTINGS)
    elif knob != "baseline":
        params[knob] = value
    start = time.perf_counter()
    model = CADSRRegressor(**params).fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    r2 = r2_score(data.y_test, model.predict(data.X_test))
    import sympy

    model_expr = model.best_expression_.to_sympy(list(data.feature_names))
    solved = is_symbolic_solution(model_expr, data.truth, timeout=10, r2=r2)
    rewards = [h["best_reward"] for h in model.history_]
    found_at = next((h["time"] for h in model.history_ if h["best_reward"] == rewards[-1]), seconds)
    return {
        "problem": problem_name,
        "seed": seed,
        "knob": knob,
        "value": value,
        "solved": bool(solved),
        "r2_test": r2,
        "complexity": int(model.best_expression_.complexity),
        "epochs": model.n_epochs_,
        "seconds": seconds,
        "best_found_at": found_at,
        "stop": model.stop_reason_,
        "formula": str(sympy.sympify(model_expr).evalf(4)),
    }


def summarize(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    problems = sorted({r["problem"] for r in rows})
    print(
        f"{'setting':34s}"
        + "".join(f"{p:>28s}" for p in problems)
        + f"{'all: solved':>13s}{'median epochs':>15s}"
    )
    for knob, value in VARIATIONS:
        label = "baseline" if knob == "baseline" else f"{knob}={value}"
        cells, n_solved, n_all, epochs = [], 0, 0, []
        for p in problems:
            sel = [
                r for r in rows if r["problem"] == p and r["knob"] == knob and r["value"] == value
            ]
            if not sel:
                cells.append(f"{'-':>28s}")
                continue
            s = sum(r["solved"] for r in sel)
            n_solved += s
            n_all += len(sel)
            epochs += [r["epochs"] for r in sel]
            t = [r["seconds"] for r in sel if r["solved"]]
            r2 = np.median([r["r2_test"] for r in sel])
            tt = f"{np.median(t):.0f}s" if t else "-"
            cells.append(f"{s}/{len(sel)} solved, {tt}, R² {r2:.4f}".rjust(28))
        print(
            f"{label:34s}"
            + "".join(cells)
            + f"{n_solved:>8d}/{n_all:<4d}{np.median(epochs) if epochs else 0:>15.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--problems", nargs="+", default=["Nguyen-5", "Nguyen-6"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--max-time", type=float, default=20.0)
    parser.add_argument(
        "--n-train",
        type=int,
        default=200,
        help="training rows (the suites' own 20 are too few for the BIC; see the tuning guide)",
    )
    parser.add_argument("--out", type=Path, default=Path("tuning_results.jsonl"))
    parser.add_argument(
        "--summary", type=Path, default=None, help="only print the table of a results file"
    )
    args = parser.parse_args()
    if args.summary:
        summarize(args.summary)
        return
    done = set()
    if args.out.exists():  # resume
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["problem"], r["seed"], r["knob"], json.dumps(r["value"])))
    with args.out.open("a") as f:
        for knob, value in VARIATIONS:
            for problem in args.problems:
                for seed in args.seeds:
                    if (problem, seed, knob, json.dumps(value)) in done:
                        continue
                    row = run_one(problem, seed, knob, value, args.max_time, args.n_train)
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    print(json.dumps(row), flush=True)
    summarize(args.out)


if __name__ == "__main__":
    main()
