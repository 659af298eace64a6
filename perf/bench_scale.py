"""Peak memory and seconds per epoch against the number of training rows.

Default estimator settings (B = 1000, the paper's model, the default library),
``max_time`` seconds per size, on 10 features with a known formula plus 1 %
noise (no early stop). Each size runs in a fresh process, so its peak resident
memory (``ru_maxrss``: Python, torch, NumPy, the data and the search together)
is its own. During the search, constants are fitted on ``const_fit_samples`` rows
of a batch of ``row_batch`` rows, so the epoch time should grow far slower than the
rows; after it the answer is fitted on every row (up to a million), the time
outside the epochs (``after_s``: the fit's time less its epochs'). Prints a table
and, as its final line, a JSON object.

    python perf/bench_scale.py [--rows 1000 10000 100000 1000000] [--max-time 60]
                               [--param row_batch=None ...]

``--param`` passes estimator parameters (``row_batch=None`` scores every formula on every
row, as before row batches; ``n_epochs=8`` a fixed number of epochs). ``--smoke`` runs two
epochs of a tiny search on 200 rows: that the script runs.
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

N_FEATURES = 10
FORMULA = "x0*x1 + sin(x2) + 0.5*x3**2 - x4"  # x5..x9 are distractors


def make_data(n_rows: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n_rows, N_FEATURES))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + 0.5 * X[:, 3] ** 2 - X[:, 4]
    return X, y + rng.normal(0, 0.01 * np.sqrt(np.mean(y**2)), n_rows)


def run_one(n_rows: int, max_time: float, seed: int, params: list[str]) -> dict:
    """Fit one size in this process and measure it (``params``: ``KEY=VALUE`` settings)."""
    from cadsr_sklearn import CADSRRegressor
    from cadsr_sklearn.user_input import estimator_params

    X, y = make_data(n_rows, seed)
    model = CADSRRegressor(**{"max_time": max_time, "random_state": seed, "device": "cpu",
                              **estimator_params(params)})
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    history = model.history_[1:] or model.history_  # the first epoch pays one-off warm-up costs
    phases = ["time_sampling", "time_scoring", "time_update"]
    in_epochs = sum(h[p] for h in model.history_ for p in phases)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    peak_mib = rss / 2**20 if sys.platform == "darwin" else rss / 2**10
    return {
        "rows": n_rows,
        "features": N_FEATURES,
        "epochs": model.n_epochs_,
        "fit_s": round(seconds, 2),
        "after_s": round(seconds - in_epochs, 2),
        "median_epoch_s": round(
            statistics.median(sum(h[p] for p in phases) for h in history), 4
        ),
        **{f"median_{p[5:]}_s": round(statistics.median(h[p] for h in history), 4) for p in phases},
        "peak_rss_mib": round(peak_mib, 1),
        "r2": round(float(model.score(X, y)), 6),
        "formula": str(model.expression_),
        "stop_reason": model.stop_reason_,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--max-time", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--param", nargs="+", default=[], metavar="KEY=VALUE",
                        help="estimator parameters, e.g. row_batch=None n_epochs=8")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.rows, args.max_time = [200], 10.0
        args.param = ["n_epochs=2", "batch_size=32", "ff_dim=32", "max_length=14", *args.param]

    if args.child:  # one size, in a fresh process
        print(json.dumps(run_one(args.rows[0], args.max_time, args.seed, args.param)))
        return

    results = []
    for n_rows in args.rows:
        cmd = [sys.executable, __file__, "--child", "--rows", str(n_rows),
               "--max-time", str(args.max_time), "--seed", str(args.seed),
               *(["--param", *args.param] if args.param else [])]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        r = results[-1]
        print(f"  {n_rows} rows: {r['epochs']} epochs, {r['median_epoch_s']:.3f} s/epoch, "
              f"{r['peak_rss_mib']:.0f} MiB peak", flush=True)

    print(f"\ny = {FORMULA} + 1% noise, {N_FEATURES} features, "
          f"max_time={args.max_time:g} s per size, "
          f"settings {' '.join(args.param) or 'default'}, device cpu; {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}")
    header = (f"{'rows':>8}{'epochs':>8}{'s/epoch':>10}{'sampling':>10}{'scoring':>10}"
              f"{'update':>10}{'after':>8}{'peak MiB':>10}{'R²':>10}")
    print(header)
    for r in results:
        print(f"{r['rows']:>8}{r['epochs']:>8}{r['median_epoch_s']:>10.3f}"
              f"{r['median_sampling_s']:>10.3f}"
              f"{r['median_scoring_s']:>10.3f}{r['median_update_s']:>10.3f}{r['after_s']:>8.1f}"
              f"{r['peak_rss_mib']:>10.0f}"
              f"{r['r2']:>10.4f}")
    base = results[0]
    growth = {
        r["rows"]: round(r["median_epoch_s"] / base["median_epoch_s"], 2) for r in results
    }
    print(f"epoch time relative to {base['rows']} rows: {growth} (rows grow "
          f"{[r['rows'] // base['rows'] for r in results]})")
    print(json.dumps({
        "benchmark": "scale",
        "max_time_s": args.max_time,
        "results": results,
        "epoch_time_growth": growth,
        "peak_rss_mib_max": max(r["peak_rss_mib"] for r in results),
    }))


if __name__ == "__main__":
    main()
