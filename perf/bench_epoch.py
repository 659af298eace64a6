"""Seconds per epoch with the estimator's defaults, and epochs per minute.

The estimator's defaults (B = 500, γ = 2, the paper's model: E = 10, M = 8, 1 layer, 1 head,
FF 2048; the priors and parent/sibling inputs on), the default library with constants
(add sub mul div pow, sin cos log sqrt exp, x_i, 1, c). Early stopping is off so every epoch
is a full one. Two cases:

* ``paper`` (default): Feynman I.18.4 (4 features), 1000 noise-free training rows;
* ``realistic``: Feynman II.11.3 (5 features), 2000 training rows with noise γ = 0.1
  (SRBench's), so constants are fitted on the default 1000-row subsample and every
  formula is scored on all 2000 rows.

Each seed is one fit of ``--epochs`` epochs; the first epoch of each (one-off warm-up) is
dropped and the median and the mean are taken over the remaining epochs of all seeds. An
epoch's cost changes along a run (early batches hold many invalid expressions, later ones long
formulas with many constants: the 30th epoch of the realistic case costs several times the
second, 0.89 against 0.22 s for seed 0), so a run of a few dozen epochs is the honest unit,
and fewer epochs measure the cheap start. The mean also counts the rare slow epochs the
median hides (a full pass of Python's garbage collector, a page-faulting allocation); the
epochs a 60-second budget buys are given by both. ``--n-jobs`` is the estimator's (default:
every core). Prints a table of the per-phase medians and means, and, as its final line, a
JSON object.

    python perf/bench_epoch.py [--case realistic] [--epochs 30] [--seeds 0,1,2] [--n-jobs 1]
                               [--param criterion=reward ...] [--units]
    python perf/bench_epoch.py --smoke     # a tiny policy and batch, 3 epochs: that it runs

The device is the CPU unless ``--param device=cuda`` says otherwise.

``--units`` fits with the problem's physical units (``X_units``, ``y_units``), so the
sampler and the update run under the dimensional constraint.
"""

import argparse
import json
import os
import platform
import statistics

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem
from cadsr_sklearn.user_input import estimator_params

PHASES = ["time_sampling", "time_scoring", "time_update"]
CASES = {
    "paper": dict(problem="Feynman-I.18.4", rows=1000, noise=0.0),
    "realistic": dict(problem="Feynman-II.11.3", rows=2000, noise=0.1),
}


#: --smoke: a tiny policy and batch on 200 rows, for 3 epochs of one seed, and none of the
#: stage after the loop (which this does not time).
SMOKE = dict(rows=200, params=dict(batch_size=32, ff_dim=32, max_length=14, prune=False,
                                   snap_constants=False, simplify=False))


def epochs_of_one_fit(case: dict, seed: int, n_epochs: int, n_jobs: int | None,
                      params: dict, units: bool = False) -> list[dict]:
    problem = get_problem(case["problem"])
    data = problem.sample(seed=seed, noise=case["noise"], n_train=case["rows"])
    model = CADSRRegressor(**{"n_epochs": n_epochs, "tol": 0.0, "random_state": seed,
                              "device": "cpu", "n_jobs": n_jobs, **params})
    given = dict(X_units=list(problem.units), y_units=problem.target_units) if units else {}
    model.fit(data.X_train, data.y_train, **given)
    return model.history_[1:]  # the first epoch pays one-off warm-up costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=sorted(CASES), default="paper")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--param", nargs="+", default=[], metavar="KEY=VALUE",
                        help="estimator parameters to set (the CLI's syntax)")
    parser.add_argument("--units", action="store_true",
                        help="fit with the problem's physical units (the AI-Feynman table)")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    params = estimator_params(args.param)
    case = CASES[args.case]
    if args.smoke:
        args.epochs, args.seeds = 3, "0"
        case, params = dict(case, rows=SMOKE["rows"]), {**SMOKE["params"], **params}
    seeds = [int(s) for s in args.seeds.split(",")]

    history = [h for seed in seeds
               for h in epochs_of_one_fit(case, seed, args.epochs, args.n_jobs, params,
                                          args.units)]
    epoch_s = [sum(h[p] for p in PHASES) for h in history]
    median_epoch, mean_epoch = statistics.median(epoch_s), statistics.fmean(epoch_s)
    print(f"{case['problem']}, {case['rows']} rows, noise {case['noise']}, seeds {seeds}, "
          f"{'with units, ' if args.units else ''}"
          f"{len(history)} epochs after warm-up, n_jobs {args.n_jobs}, "
          f"{len(os.sched_getaffinity(0))} cores, {platform.processor() or platform.machine()}")
    print(f"{'phase':<16}{'median s':>10}{'mean s':>10}")
    for phase in PHASES:
        values = [h[phase] for h in history]
        print(f"{phase[5:]:<16}{statistics.median(values):>10.3f}{statistics.fmean(values):>10.3f}")
    print(f"{'epoch':<16}{median_epoch:>10.3f}{mean_epoch:>10.3f}")
    print(f"{'epochs per 60 s':<16}{60 / median_epoch:>10.0f}{60 / mean_epoch:>10.0f}")
    print(json.dumps({
        "benchmark": "epoch",
        "case": args.case,
        "median_epoch_s": round(median_epoch, 4),
        **{f"median_{p[5:]}_s": round(statistics.median(h[p] for h in history), 4) for p in PHASES},
        "epochs_per_60s": round(60 / median_epoch, 1),
        "mean_epoch_s": round(mean_epoch, 4),
        **{f"mean_{p[5:]}_s": round(statistics.fmean(h[p] for h in history), 4) for p in PHASES},
        "epochs_per_60s_by_mean": round(60 / mean_epoch, 1),
        "epochs": len(history),
        "seeds": seeds,
        "n_jobs": args.n_jobs,
        "params": params,
        "units": args.units,
        **case,
    }))


if __name__ == "__main__":
    main()
