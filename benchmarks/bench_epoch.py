"""Seconds per epoch at the paper's settings.

B = 1000, γ = 2, the paper's model (E = 10, M = 8, 1 layer, 1 head, FF 2048), 1000 training
rows, the default library with constants (add sub mul div pow, sin cos log sqrt exp, x_i, 1, c).
Early stopping is off so every epoch is a full one. Prints a table of the per-phase medians and,
as its final line, a JSON object.

    python benchmarks/bench_epoch.py [--epochs 12] [--problem Feynman-I.12.5]
"""

import argparse
import json
import os
import platform
import statistics

import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks import get_problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--problem", default="Feynman-I.18.4")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = get_problem(args.problem).sample(seed=args.seed, n_train=1000)
    model = CADSRRegressor(n_epochs=args.epochs, tol=0.0, random_state=args.seed, device="cpu")
    model.fit(data.X_train, data.y_train)
    history = model.history_[1:]  # the first epoch pays one-off warm-up costs
    phases = ["time_sampling", "time_scoring", "time_update"]
    epoch_s = [h["time_sampling"] + h["time_scoring"] + h["time_update"] for h in history]
    print(f"{args.problem}, {len(data.y_train)} rows, {len(history)} epochs after warm-up, "
          f"torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}")
    print(f"{'phase':<16}{'median s':>10}")
    for phase in phases:
        print(f"{phase[5:]:<16}{statistics.median(h[phase] for h in history):>10.3f}")
    print(f"{'epoch':<16}{statistics.median(epoch_s):>10.3f}")
    print(json.dumps({
        "benchmark": "epoch",
        "median_epoch_s": round(statistics.median(epoch_s), 4),
        **{f"median_{p[5:]}_s": round(statistics.median(h[p] for h in history), 4) for p in phases},
        "epochs": len(history),
        "rows": len(data.y_train),
        "problem": args.problem,
    }))


if __name__ == "__main__":
    main()
