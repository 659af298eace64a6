"""Benchmark: fit the constants of 1000 random expressions and score them (BIC).

A seeded generator draws 1000 distinct random trees (uniform choice among the
tokens of the default ``Library(1)`` that keep the tree completable within 32
nodes, at most 10 constants, as the sampler allows). The target is Constant-1,
3.39x³ + 2.12x² + 1.78x, on 1000 rows of U[-1, 1]. Each run builds a fresh
:class:`ConstantFitter` (empty cache) and scores the batch as the search does (:class:`Scorer`: fit,
compiled evaluation on all rows on the fitter's threads, BIC). ``screen256``
adds the search's default screening: constants fitted on 256 of the rows, the
best 100 (2·αB/100 at the paper's α = 5, B = 1000) refitted on all of them.

Usage::

    python perf/bench_constants.py [--runs 7] [--n-expr 1000] [--rows 1000]
        [--configs default,threads2,screen256,screen256-threads2,uniform01,ones,restart1,nfev30]
    python perf/bench_constants.py --smoke     # 60 expressions, 300 rows, one run: that it runs

Prints a table, then as its final line a JSON object with the median seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from cadsr_sklearn import Expression, Library
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.scoring.rewards import make_reward
from cadsr_sklearn.scoring.scorer import Scorer


def random_tree(library: Library, rng: np.random.Generator, max_nodes: int = 32,
                max_constants: int = 10) -> Expression:
    """One tree drawn token by token in BFS order, uniform over the allowed tokens."""
    arities = library.arities
    tokens: list[int] = []
    open_slots, n_const = 1, 0
    while open_slots:
        placed = len(tokens) + 1
        # A token of arity a leaves open_slots - 1 + a slots, each needing >= 1 node.
        allowed = [
            i for i in range(len(library))
            if placed + open_slots - 1 + arities[i] <= max_nodes
            and not (i == library.const_id and n_const >= max_constants)
        ]
        tok = int(rng.choice(allowed))
        tokens.append(tok)
        open_slots += int(arities[tok]) - 1
        n_const += tok == library.const_id
    return Expression(tokens, library)


def random_expressions(library: Library, n: int, seed: int) -> list[Expression]:
    rng = np.random.default_rng(seed)
    seen, out = set(), []
    while len(out) < n:
        e = random_tree(library, rng)
        if e.key not in seen:
            seen.add(e.key)
            out.append(e)
    return out


#: Compared fitter settings (``default`` is what the estimator uses).
CONFIGS = {
    "default": dict(n_jobs=1),  # one thread
    "threads2": dict(n_jobs=2),  # two threads over the expressions
    "screen256": dict(n_jobs=1, screen=256),  # the search's default screening, one thread
    "screen256-threads2": dict(n_jobs=2, screen=256),
    "uniform01": dict(init="uniform"),  # the authors' Uniform(0, 1) start
    "ones": dict(init="ones"),
    "restart1": dict(n_restarts=1),
    "nfev30": dict(max_nfev=30),
}


def run_once(exprs, X, y, reward, options):
    """One fresh scorer: fit all, score all on every row. Wall and CPU seconds, failed fits
    (NaN constants), rewards."""
    options = dict(options)
    screen_rows = options.pop("screen", None)
    w0, c0 = time.perf_counter(), time.process_time()
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, **options)
    screen = fitter.screening_fitter(screen_rows) if screen_rows else None
    scorer = Scorer(fitter, reward, X, screen=screen, n_full_refits=100)
    candidates = scorer(exprs)
    w1, c1 = time.perf_counter(), time.process_time()
    rewards = np.array([c.reward for c in candidates])
    failed = sum(not np.all(np.isfinite(c.expression.constants)) for c in candidates)
    return (w1 - w0, c1 - c0), failed, rewards


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--n-expr", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--configs", default="default,threads2,screen256,screen256-threads2",
                        help=f"comma-separated, from {','.join(CONFIGS)}")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs, args.n_expr, args.rows = 1, 60, 300
    names = args.configs.split(",")

    library = Library(1)
    exprs = random_expressions(library, args.n_expr, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    X = rng.uniform(-1, 1, (args.rows, 1))
    x = X[:, 0]
    y = 3.39 * x**3 + 2.12 * x**2 + 1.78 * x
    reward = make_reward("bic", y, bic_variance="mle", likelihood="gaussian")

    n_const = np.array([e.n_constants for e in exprs])
    print(f"{len(exprs)} distinct random expressions, {np.sum(n_const > 0)} with constants "
          f"(mean {n_const[n_const > 0].mean():.1f}, max {n_const.max()}), "
          f"mean {np.mean([len(e) for e in exprs]):.1f} nodes; {args.rows} rows, Constant-1 target")
    print(f"median of {args.runs} runs, configs interleaved")

    for name in names:  # warm-up: imports, compiled code
        run_once(exprs[:50], X, y, reward, CONFIGS[name])
    times = {name: [] for name in names}
    last = {}
    for _ in range(args.runs):
        for name in names:
            t, failed, rewards = run_once(exprs, X, y, reward, CONFIGS[name])
            times[name].append(t)
            last[name] = (failed, rewards)

    print(f"{'config':<20} {'total s':>8} {'cpu s':>8} {'failed':>7} {'valid':>6} "
          f"{'best -BIC':>10} {'top-50 mean':>12}")
    summary = {}
    for name in names:
        total, cpu = (statistics.median(v) for v in zip(*times[name]))
        failed, rewards = last[name]
        valid = int(np.sum(np.isfinite(rewards)))
        top = np.sort(rewards)[-50:].mean()
        print(f"{name:<20} {total:8.3f} {cpu:8.3f} {failed:7d} {valid:6d} {rewards.max():10.1f} "
              f"{top:12.1f}")
        summary[name] = dict(total_s=round(total, 4), cpu_s=round(cpu, 4), failed=failed,
                             valid=valid)
    print(json.dumps({"benchmark": "bench_constants", "n_expressions": len(exprs),
                      "rows": args.rows, "runs": args.runs, "config": names[0],
                      "median_total_s": summary[names[0]]["total_s"], "configs": summary}))


if __name__ == "__main__":
    main()
