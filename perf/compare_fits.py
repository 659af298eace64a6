"""Compare the constant fits of two versions of the package on the same starts.

Fits a seeded batch of random expressions (those of ``bench_constants``: default
``Library(2)``, up to 32 nodes, at least one constant) to noisy data with each
version's :class:`ConstantFitter` (same ``random_state``, so the same starting
constants) and compares. Run it once per version with ``--dump``, then ``--compare``::

    PYTHONPATH=/path/to/old/checkout python perf/compare_fits.py --dump old.npz
    python perf/compare_fits.py --dump new.npz
    python perf/compare_fits.py --compare old.npz new.npz
    python perf/compare_fits.py --smoke     # both steps on 20 formulas of this version

"Both converge" means both fits succeeded and their training costs agree to 1e-6
relative (the same local minimum); there the constants should agree to 1e-8.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def dump(path: str, n: int, rows: int, seed: int) -> None:
    from bench_constants import random_tree

    from cadsr_sklearn import Library
    from cadsr_sklearn.scoring.constant_fitter import ConstantFitter

    library = Library(2)
    rng = np.random.default_rng(seed)
    exprs, seen = [], set()
    while len(exprs) < n:
        e = random_tree(library, rng)
        if e.n_constants and e.key not in seen:
            seen.add(e.key)
            exprs.append(e)
    X = rng.uniform(-2, 2, (rows, 2))
    y = np.sin(1.3 * X[:, 0]) * X[:, 1] + 0.7 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(rows)
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=seed)
    fitted = fitter.fit(exprs)
    with np.errstate(all="ignore"):
        costs = [float(np.sum((e.evaluate(X) - y) ** 2)) for e in fitted]
    np.savez(path, constants=np.array([e.constants for e in fitted], dtype=object),
             success=fitted.success, cost=np.array(costs))


def compare(old_path: str, new_path: str) -> None:
    old = np.load(old_path, allow_pickle=True)
    new = np.load(new_path, allow_pickle=True)
    both = old["success"] & new["success"]
    same_minimum = both & np.isclose(old["cost"], new["cost"], rtol=1e-6, atol=0)
    errors = [float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300)))
              for a, b, s in zip(old["constants"], new["constants"], same_minimum) if s]
    within = sum(e <= 1e-8 for e in errors)
    better = int(np.sum(both & (new["cost"] < old["cost"] * (1 - 1e-6))))
    worse = int(np.sum(both & (new["cost"] > old["cost"] * (1 + 1e-6))))
    print(json.dumps({
        "expressions": len(both), "old_success": int(old["success"].sum()),
        "new_success": int(new["success"].sum()), "both_success": int(both.sum()),
        "same_minimum": int(same_minimum.sum()), "constants_within_1e-8": within,
        "median_rel_diff": float(np.median(errors)) if errors else None,
        "max_rel_diff": max(errors) if errors else None,
        "new_lower_cost": better, "new_higher_cost": worse,
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump")
    parser.add_argument("--compare", nargs=2)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:  # this version against itself, in a scratch folder
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            paths = [str(Path(folder) / name) for name in ("a.npz", "b.npz")]
            for path in paths:
                dump(path, 20, 50, args.seed)
            compare(*paths)
        return
    if args.dump:
        dump(args.dump, args.n, args.rows, args.seed)
    if args.compare:
        compare(*args.compare)


if __name__ == "__main__":
    main()
