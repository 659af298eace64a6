"""What the criterion (the description length) costs per batch, against the reward alone.

A search built with the estimator's defaults samples one batch of B = 500 formulas from its
untrained policy, fits their constants, and scores every valid one with the reward (the BIC)
and with the criterion (one Jacobian on the screening rows, the eigenvalues of a q × q
matrix, the literals' codelengths), ``--repeats`` times each; medians in milliseconds. Two
cases: Feynman II.11.3 at 2000 noisy rows, and Nguyen-7 at its 20 rows. Prints a table and, as
its final line, a JSON object.

    python perf/bench_criterion.py [--repeats 5]
    python perf/bench_criterion.py --smoke     # B = 50, 200 and 20 rows, once: that it runs
"""

import argparse
import json
import statistics
import time
import warnings

import numpy as np
import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem
from cadsr_sklearn.search.build import build_search
from cadsr_sklearn.settings import SearchSettings

CASES = (("Feynman-II.11.3", 2000), ("Nguyen-7", 20))
BATCH = 500


def milliseconds(score, scored, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for expression, y_pred in scored:
            score(y_pred, expression)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    cases, batch_size = CASES, BATCH
    if args.smoke:
        cases, batch_size, args.repeats = (("Feynman-II.11.3", 200), ("Nguyen-7", 20)), 50, 1
    warnings.simplefilter("ignore")  # the small-table advice for Nguyen's 20 rows
    results = []
    for problem, rows in cases:
        data = get_problem(problem).sample(seed=0, noise=0.1, n_train=rows)
        search = build_search(SearchSettings.from_params(CADSRRegressor(n_jobs=1).get_params()),
                              data.X_train, data.y_train,
                              None, torch.device("cpu"), 0, 0)
        batch = search.sampler.sample_unique(batch_size, 2.0, search.generator)
        fitted = search.scorer.fitter.fit(batch.expressions(search.library))
        scored = [(e, e.evaluate(data.X_train)) for e in fitted]
        scored = [(e, y) for e, y in scored if np.all(np.isfinite(y))]
        results.append({
            "problem": problem, "rows": rows, "candidates": len(scored),
            "reward_ms": round(milliseconds(search.scorer.reward, scored, args.repeats), 1),
            "criterion_ms": round(milliseconds(search.scorer.criterion, scored, args.repeats), 1),
        })
    print(f"{'problem':<18}{'rows':>6}{'candidates':>12}{'reward ms':>11}{'criterion ms':>14}")
    for r in results:
        print(f"{r['problem']:<18}{r['rows']:>6}{r['candidates']:>12}{r['reward_ms']:>11}"
              f"{r['criterion_ms']:>14}")
    print(json.dumps({"benchmark": "criterion", "repeats": args.repeats, "results": results}))


if __name__ == "__main__":
    main()
