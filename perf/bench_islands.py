"""Formulas scored per minute by one search, by one search on two threads, and by islands.

The realistic case of ``bench_epoch.py`` (Feynman II.11.3, 5 features, 2000 training rows,
noise γ = 0.1, the estimator's defaults), a ``--max-time`` budget with no early stop
(``tol=0``), for each arm and seed in turns (so that a machine's drift falls on every arm
alike):

* ``one``: one search, ``n_jobs=1``;
* ``one-n_jobs2``: one search, ``n_jobs=2`` (the constant fits on two threads);
* ``islands2``: ``n_islands=2`` on a local Dask cluster of two single-threaded processes.

Two rates per fit: formulas scored per minute of the budget (``n_evaluations_`` over
``max_time``: what a given ``max_time`` buys) and per minute of the whole fit's wall clock
(with the cluster's start and close, the refinement and the rest). Prints one line per fit,
the medians per arm, and the ratio of each arm's median to ``one``'s; ``--out`` keeps the
rows as CSV.

    python perf/bench_islands.py [--max-time 30] [--seeds 0 1 2] [--arms one islands2]
    python perf/bench_islands.py --smoke    # a tiny policy, 2 s, one seed: that it runs
"""

import argparse
import csv
import statistics
import time

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem

ARMS = {
    "one": dict(n_jobs=1),
    "one-n_jobs2": dict(n_jobs=2),
    "islands2": dict(n_jobs=1, n_islands=2),
}


#: --smoke: a tiny policy and batch on 200 rows.
SMOKE = dict(rows=200, params=dict(batch_size=32, ff_dim=32, max_length=14))


def one_fit(arm: str, seed: int, max_time: float, rows: int = 2000,
            params: dict | None = None) -> dict:
    data = get_problem("Feynman-II.11.3").sample(seed=seed, noise=0.1, n_train=rows)
    model = CADSRRegressor(max_time=max_time, n_epochs=100_000, tol=0.0, random_state=seed,
                           device="cpu", **ARMS[arm], **(params or {}))
    start = time.perf_counter()
    model.fit(data.X_train, data.y_train)
    wall = time.perf_counter() - start
    return dict(arm=arm, seed=seed, evaluations=model.n_evaluations_, epochs=model.n_epochs_,
                wall_s=round(wall, 2),
                per_budget_minute=round(60 * model.n_evaluations_ / max_time),
                per_wall_minute=round(60 * model.n_evaluations_ / wall),
                formula=str(model.expression_))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-time", type=float, default=30.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--out", help="a CSV file for the rows")
    parser.add_argument("--smoke", action="store_true", help="tiny fits of 2 s, seed 0")
    args = parser.parse_args()
    size = SMOKE if args.smoke else dict(rows=2000, params={})
    if args.smoke:
        args.max_time, args.seeds = 2.0, [0]
    rows = []
    for seed in args.seeds:
        for arm in args.arms:
            row = one_fit(arm, seed, args.max_time, **size)
            print(row, flush=True)
            rows.append(row)
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    medians = {arm: {rate: statistics.median(r[rate] for r in rows if r["arm"] == arm)
                     for rate in ("per_budget_minute", "per_wall_minute")}
               for arm in args.arms}
    base = medians.get("one")
    print(f"\nmedians over seeds {args.seeds}, max_time {args.max_time:g} s:")
    for arm, rates in medians.items():
        ratio = ("" if base is None else
                 f"  ({rates['per_budget_minute'] / base['per_budget_minute']:.2f}x, "
                 f"{rates['per_wall_minute'] / base['per_wall_minute']:.2f}x of one)")
        print(f"{arm:12s} {rates['per_budget_minute']:8.0f} per budget minute, "
              f"{rates['per_wall_minute']:8.0f} per wall minute{ratio}")


if __name__ == "__main__":
    main()
