"""How long a fit with ``max_time`` takes on the wall clock, and where the time beyond goes.

The unit tests check the ``max_time`` rule on a clock of their own
(``tests/test_budgets.py``); this measures the real thing. On noisy data (no early
stop) a fit runs with each budget of ``--budgets``, ``--repeats`` times; per run:
the search's own clock at its last epoch (``history_[-1]["time"]``, within the
budget unless an epoch ran longer than the one before it), the longest epoch,
and the wall clock of the whole ``fit`` call, which adds the setup before the
search, the pruning and snapping after it (held to the budget) and the
reporting (simplifying the front for display, outside it). Prints a table and,
as its final line, a JSON object.

    python perf/bench_max_time.py [--budgets 1,2,5] [--repeats 3]
    python perf/bench_max_time.py --smoke     # one fit of 0.5 s: that it runs
"""

import argparse
import json
import time

import numpy as np

from cadsr_sklearn import CADSRRegressor


def one_fit(budget: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 200)
    start = time.perf_counter()
    model = CADSRRegressor(n_epochs=10**6, max_time=budget, batch_size=64, ff_dim=32,
                           max_length=14, device="cpu", random_state=seed).fit(X, y)
    wall = time.perf_counter() - start
    times = [h["time"] for h in model.history_]
    return {"budget": budget, "stop": model.stop_reason_, "epochs": len(times),
            "search_clock": times[-1], "longest_epoch": float(np.max(np.diff([0.0] + times))),
            "wall": wall, "beyond_budget": wall - budget}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="1,2,5")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.budgets, args.repeats = "0.5", 1
    rows = [one_fit(float(b), seed) for b in args.budgets.split(",")
            for seed in range(args.repeats)]
    print(f"{'budget':>7} {'stop':>9} {'epochs':>6} {'search':>7} {'longest':>8} {'wall':>7} "
          f"{'beyond':>7}")
    for r in rows:
        print(f"{r['budget']:7.2f} {r['stop']:>9} {r['epochs']:6d} {r['search_clock']:7.2f} "
              f"{r['longest_epoch']:8.3f} {r['wall']:7.2f} {r['beyond_budget']:7.2f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
