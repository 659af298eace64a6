"""Benchmark: evaluate many random expressions on a batch of rows.

Draws ``--n-expressions`` random complete trees of 2 … ``--max-nodes`` nodes from
``Library(n_features)`` (default operator set, constants set to random values),
then times evaluating all of them on ``--n-rows`` rows, on one core.

Three figures are timed, each as the median over ``--repeats`` runs (garbage
collected before each run):

* ``median_s`` — the headline: the first evaluation of freshly built
  :class:`Expression` objects (what scoring a newly sampled batch costs;
  building the per-expression evaluation plan included);
* ``median_repeat_s`` — evaluating the same objects again (plan already built);
* ``median_construct_s`` — building the 1000 :class:`Expression` objects.

The last line printed is a JSON object with those medians and the fraction of
finite outputs, for scripts that collect benchmark results.

Usage::

    python perf/bench_eval.py [--n-expressions 1000] [--n-rows 1000] [--repeats 7]
    python perf/bench_eval.py --smoke     # 50 expressions on 100 rows, once: that it runs
"""

from __future__ import annotations

import os

# One core: set before NumPy/torch are imported so their thread pools honour it.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from cadsr_sklearn.expressions.expression import Expression  # noqa: E402
from cadsr_sklearn.expressions.library import Library  # noqa: E402


def random_tokens(rng: np.random.Generator, library: Library, n_nodes: int) -> list[int]:
    """BFS token ids of a uniformly-shaped random tree of exactly ``n_nodes`` nodes.

    At every step the arity is drawn among those that can still close the tree in
    exactly ``n_nodes`` nodes (weighted by how many tokens have that arity), then a
    token of that arity is drawn uniformly.
    """
    by_arity = {
        2: library.binary_ids,
        1: library.unary_ids,
        0: library.terminal_ids,
    }
    weights = {a: len(ids) for a, ids in by_arity.items()}
    tokens: list[int] = []
    open_slots = 1
    for placed in range(n_nodes):
        remaining = n_nodes - placed - 1  # nodes still to place after this one
        allowed = []
        for arity in (2, 1, 0):
            after = open_slots - 1 + arity
            if weights[arity] and (after == remaining == 0 or 1 <= after <= remaining):
                allowed.append(arity)
        p = np.array([weights[a] for a in allowed], dtype=float)
        arity = allowed[rng.choice(len(allowed), p=p / p.sum())]
        tokens.append(int(rng.choice(by_arity[arity])))
        open_slots += arity - 1
    return tokens


def random_expressions(
    rng: np.random.Generator, library: Library, n: int, max_nodes: int
) -> list[tuple[list[int], np.ndarray]]:
    """``n`` (tokens, constants) pairs with sizes uniform in 2 … ``max_nodes``."""
    out = []
    for _ in range(n):
        size = int(rng.integers(2, max_nodes + 1))
        tokens = random_tokens(rng, library, size)
        n_const = sum(t == library.const_id for t in tokens)
        out.append((tokens, rng.uniform(-2.0, 2.0, size=n_const)))
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-expressions", type=int, default=1000)
    parser.add_argument("--n-rows", type=int, default=1000)
    parser.add_argument("--n-features", type=int, default=5)
    parser.add_argument("--max-nodes", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n_expressions, args.n_rows, args.repeats = 50, 100, 1

    try:  # torch is not used here, but keep it on one thread if something imports it
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass

    rng = np.random.default_rng(args.seed)
    library = Library(args.n_features)
    specs = random_expressions(rng, library, args.n_expressions, args.max_nodes)
    X = rng.uniform(-1.0, 1.0, size=(args.n_rows, args.n_features))

    def construct():
        return [Expression(t, library, c) for t, c in specs]

    def evaluate(exprs):
        return [e.evaluate(X) for e in exprs]

    outputs = evaluate(construct())  # warm-up (imports, allocator)
    finite = float(np.mean([np.all(np.isfinite(y)) for y in outputs]))
    finite_values = float(np.mean(np.concatenate([np.isfinite(y) for y in outputs])))

    t_construct, t_first, t_repeat = [], [], []
    for _ in range(args.repeats):
        gc.collect()
        t0 = time.perf_counter()
        exprs = construct()
        t1 = time.perf_counter()
        evaluate(exprs)
        t2 = time.perf_counter()
        gc.collect()
        t3 = time.perf_counter()
        evaluate(exprs)
        t4 = time.perf_counter()
        t_construct.append(t1 - t0)
        t_first.append(t2 - t1)
        t_repeat.append(t4 - t3)
    med = statistics.median
    sizes = [len(t) for t, _ in specs]

    def runs(ts):
        return ", ".join(f"{t * 1e3:.0f}" for t in ts)

    print(f"bench_eval: {args.n_expressions} random expressions (2..{args.max_nodes} nodes, "
          f"mean {np.mean(sizes):.1f}) of {library!r}")
    print(f"            on {args.n_rows} rows x {args.n_features} features, one thread, "
          f"median of {args.repeats} runs ({platform.python_implementation()} "
          f"{platform.python_version()}, NumPy {np.__version__})")
    print(f"  first evaluation  {med(t_first) * 1e3:8.1f} ms   (runs: {runs(t_first)})")
    print(f"  repeat evaluation {med(t_repeat) * 1e3:8.1f} ms   (runs: {runs(t_repeat)})")
    print(f"  construction      {med(t_construct) * 1e3:8.1f} ms   (runs: {runs(t_construct)})")
    print(f"  per expression    {med(t_first) / args.n_expressions * 1e6:8.1f} us first, "
          f"{med(t_repeat) / args.n_expressions * 1e6:.1f} us repeat")
    print(f"  finite on every row: {finite:.1%} of expressions; finite values: {finite_values:.1%}")
    result = {
        "benchmark": "bench_eval",
        "n_expressions": args.n_expressions,
        "n_rows": args.n_rows,
        "n_features": args.n_features,
        "max_nodes": args.max_nodes,
        "mean_nodes": float(np.mean(sizes)),
        "repeats": args.repeats,
        "seed": args.seed,
        "median_s": med(t_first),
        "median_repeat_s": med(t_repeat),
        "median_construct_s": med(t_construct),
        "finite_fraction": finite,
        "finite_value_fraction": finite_values,
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
