"""Benchmark: fit the constants of 1000 random expressions and score them (BIC).

A seeded generator draws 1000 distinct random trees (uniform choice among the
tokens of the default ``Library(1)`` that keep the tree completable within 32
nodes, at most 10 constants, as the sampler allows). The target is Constant-1,
3.39x³ + 2.12x² + 1.78x, on 1000 rows of U[-1, 1]. Each run builds a fresh
:class:`ConstantFitter` (empty cache), fits every expression and scores it with
the BIC reward on all rows.

Usage::

    python benchmarks/bench_constants.py [--runs 7] [--n-expr 1000] [--rows 1000]
        [--configs default,scipy,jobs2,uniform01,ones,restart1,nfev30]

Prints a table, then as its final line a JSON object with the median seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from cadsr_sklearn import Expression, Library
from cadsr_sklearn.constants import ConstantFitter
from cadsr_sklearn.rewards import make_reward


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
    "default": dict(),
    "scipy": dict(solver="scipy"),  # MINPACK lmder, same analytic Jacobian
    "jobs2": dict(n_jobs=2),  # joblib/loky, 2 chunks
    "uniform01": dict(init="uniform"),  # the authors' Uniform(0, 1) start
    "ones": dict(init="ones"),
    "restart1": dict(n_restarts=1),
    "nfev30": dict(max_nfev=30),
}


def run_once(exprs, X, y, reward, options):
    """One fresh fitter: fit all, then score all on every row. Wall and CPU seconds."""
    w0, c0 = time.perf_counter(), time.process_time()
    fitter = ConstantFitter(X, y, random_state=0, **options)
    fitted = fitter.fit(exprs)
    w1, c1 = time.perf_counter(), time.process_time()
    rewards = np.array([reward(e.evaluate(X), e) for e in fitted])
    w2, c2 = time.perf_counter(), time.process_time()
    return (w1 - w0, w2 - w1, c1 - c0, c2 - c1), fitter, rewards


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--n-expr", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--configs", default="default,scipy,jobs2",
                        help=f"comma-separated, from {','.join(CONFIGS)}")
    args = parser.parse_args(argv)
    names = args.configs.split(",")

    library = Library(1)
    exprs = random_expressions(library, args.n_expr, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    X = rng.uniform(-1, 1, (args.rows, 1))
    x = X[:, 0]
    y = 3.39 * x**3 + 2.12 * x**2 + 1.78 * x
    reward = make_reward("bic", y)

    n_const = np.array([e.n_constants for e in exprs])
    print(f"{len(exprs)} distinct random expressions, {np.sum(n_const > 0)} with constants "
          f"(mean {n_const[n_const > 0].mean():.1f}, max {n_const.max()}), "
          f"mean {np.mean([len(e) for e in exprs]):.1f} nodes; {args.rows} rows, Constant-1 target")
    print(f"median of {args.runs} runs, configs interleaved (machine shared with other jobs: "
          "wall times are noisy; CPU times exclude worker processes)")

    for name in names:  # warm-up: imports, joblib workers
        run_once(exprs[:50], X, y, reward, CONFIGS[name])
    times = {name: [] for name in names}
    last = {}
    for _ in range(args.runs):
        for name in names:
            t, fitter, rewards = run_once(exprs, X, y, reward, CONFIGS[name])
            times[name].append(t)
            last[name] = (fitter, rewards)

    print(f"{'config':<10} {'fit s':>7} {'score s':>8} {'total s':>8} {'fit cpu':>8} "
          f"{'failed':>7} {'valid':>6} {'best -BIC':>10} {'top-50 mean':>12}")
    summary = {}
    for name in names:
        fit_s, score_s, fit_cpu, _ = (statistics.median(v) for v in zip(*times[name]))
        total = statistics.median(f + s for f, s, _, _ in times[name])
        fitter, rewards = last[name]
        failed = int(np.sum(~fitter.success_))
        valid = int(np.sum(np.isfinite(rewards)))
        top = np.sort(rewards)[-50:].mean()
        print(f"{name:<10} {fit_s:7.3f} {score_s:8.3f} {total:8.3f} {fit_cpu:8.3f} "
              f"{failed:7d} {valid:6d} {rewards.max():10.1f} {top:12.1f}")
        summary[name] = dict(fit_s=round(fit_s, 4), score_s=round(score_s, 4),
                             total_s=round(total, 4), fit_cpu_s=round(fit_cpu, 4),
                             failed=failed, valid=valid)
    print(json.dumps({"benchmark": "bench_constants", "n_expressions": len(exprs),
                      "rows": args.rows, "runs": args.runs, "config": names[0],
                      "median_total_s": summary[names[0]]["total_s"], "configs": summary}))


if __name__ == "__main__":
    main()
