"""Seconds per epoch at the paper's settings.

B = 1000, γ = 2, the paper's model (E = 10, M = 8, 1 layer, 1 head, FF 2048), 1000 training
rows, the default library with constants (add sub mul div pow, sin cos log sqrt exp, x_i, 1, c).
Early stopping is off so every epoch is a full one. Each seed is one fit of ``--epochs``
epochs; the first epoch of each (one-off warm-up) is dropped and the median is taken over the
remaining epochs of all seeds. An epoch's cost changes along a run (early batches hold many
invalid expressions, later ones long formulas with many constants, and once the policy
concentrates fewer than B are unique), so a run of a few dozen epochs is the honest unit.
``--n-jobs 2`` fits constants in two worker processes (the estimator's ``n_jobs``).
Prints a table of the per-phase medians and, as its final line, a JSON object.

    python benchmarks/bench_epoch.py [--epochs 30] [--seeds 0,1,2] [--n-jobs 2]
"""

import argparse
import json
import os
import platform
import statistics

import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem

PHASES = ["time_sampling", "time_scoring", "time_update"]


def epochs_of_one_fit(problem: str, seed: int, n_epochs: int, n_jobs: int | None) -> list[dict]:
    data = get_problem(problem).sample(seed=seed, n_train=1000)
    model = CADSRRegressor(n_epochs=n_epochs, tol=0.0, random_state=seed, device="cpu", n_jobs=n_jobs)
    model.fit(data.X_train, data.y_train)
    return model.history_[1:]  # the first epoch pays one-off warm-up costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--problem", default="Feynman-I.18.4")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]

    history = [h for seed in seeds for h in epochs_of_one_fit(args.problem, seed, args.epochs, args.n_jobs)]
    epoch_s = [sum(h[p] for p in PHASES) for h in history]
    print(f"{args.problem}, 1000 rows, seeds {seeds}, {len(history)} epochs after warm-up, "
          f"n_jobs {args.n_jobs}, torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}")
    print(f"{'phase':<16}{'median s':>10}")
    for phase in PHASES:
        print(f"{phase[5:]:<16}{statistics.median(h[phase] for h in history):>10.3f}")
    print(f"{'epoch':<16}{statistics.median(epoch_s):>10.3f}")
    print(json.dumps({
        "benchmark": "epoch",
        "median_epoch_s": round(statistics.median(epoch_s), 4),
        **{f"median_{p[5:]}_s": round(statistics.median(h[p] for h in history), 4) for p in PHASES},
        "epochs": len(history),
        "seeds": seeds,
        "n_jobs": args.n_jobs,
        "rows": 1000,
        "problem": args.problem,
    }))


if __name__ == "__main__":
    main()
