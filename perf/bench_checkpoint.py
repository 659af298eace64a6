"""What a checkpoint costs as a search grows: its size, and the seconds to write and read it.

The ``realistic`` case of ``bench_epoch.py`` (Feynman II.11.3, 5 features, 2000 noisy rows)
with the estimator's defaults and early stopping off. One warm-started fit runs in stages up
to each of ``--epochs`` (cumulative); after each stage the search's state is serialised
``--repeats`` times as a checkpoint file holds it, and read back once. The state grows with
the formulas seen (the scorer's cache of fitted formulas), so the write cost is what a long
run pays once per ``checkpoint_every`` interval. Prints a table and, as its final line, a
JSON object.

    python perf/bench_checkpoint.py [--epochs 30,120,300] [--seed 0] [--repeats 3]
    python perf/bench_checkpoint.py --smoke    # a tiny search of 2 and 4 epochs: that it runs
"""

import argparse
import json
import statistics
import time

import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.search import checkpoint
from cadsr_sklearn.benchmarks import get_problem


def timed(function, repeats: int) -> tuple[float, object]:
    seconds, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", default="30,120,300")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    tiny = dict(batch_size=32, ff_dim=32, max_length=14) if args.smoke else {}
    if args.smoke:
        args.epochs, args.repeats = "2,4", 1
    stages = [int(e) for e in args.epochs.split(",")]

    data = get_problem("Feynman-II.11.3").sample(seed=args.seed, noise=0.1,
                                                 n_train=200 if args.smoke else 2000)
    model = CADSRRegressor(tol=0.0, random_state=args.seed, device="cpu", warm_start=True,
                           **tiny)
    rows, done = [], 0
    print(f"{'epochs':>7}{'cached':>9}{'MB':>8}{'write s':>9}{'read s':>8}{'epoch s':>9}")
    for target in stages:
        model.set_params(n_epochs=target - done).fit(data.X_train, data.y_train)
        done = target
        state = model.search_state_
        saved = checkpoint.loads(state, torch.device("cpu"))
        write_s, data_bytes = timed(lambda: checkpoint.dumps(saved), args.repeats)
        read_s, _ = timed(lambda: checkpoint.loads(data_bytes, torch.device("cpu")), 1)
        epoch_s = statistics.median(h["time_sampling"] + h["time_scoring"] + h["time_update"]
                                    for h in model.history_[-20:])
        row = dict(epochs=target, cached=len(saved.search.scorer.cache),
                   mb=round(len(data_bytes) / 1e6, 2), write_s=round(write_s, 3),
                   read_s=round(read_s, 3), epoch_s=round(epoch_s, 3))
        rows.append(row)
        print(f"{target:>7}{row['cached']:>9}{row['mb']:>8}{row['write_s']:>9}{row['read_s']:>8}"
              f"{row['epoch_s']:>9}", flush=True)
    print(json.dumps({"benchmark": "checkpoint", "seed": args.seed, "stages": rows}))


if __name__ == "__main__":
    main()
