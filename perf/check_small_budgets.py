"""scikit-learn's ``check_estimator`` in full at tiny search budgets, over many seeds.

Every check must pass, none skipped or expected to fail; the one a tiny budget
used to fail is ``check_regressors_train`` (R² > 0.5 on a table that a straight
line in one of ten features fits), which the baselines (:mod:`.refinement.baselines`)
now guarantee. The test suite runs one budget on one seed; this script runs the
budgets of issue 42 on ten seeds (about 30 s per seed and budget on two cores)::

    python perf/check_small_budgets.py                       # 6×64 and 3×32, seeds 0–9
    python perf/check_small_budgets.py --budgets 6x64 --seeds 0-2
    python perf/check_small_budgets.py --smoke     # 1x16 of a tiny policy, seed 0: that it runs

It prints one line per (budget, seed) with the checks that did not pass, and exits
non-zero when any did not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

# check_array_api_input needs SciPy's array API mode before SciPy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


def _seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def _budget(text: str) -> tuple[int, int]:
    epochs, _, batch = text.partition("x")
    return int(epochs), int(batch)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", nargs="+", type=_budget, default=[(6, 64), (3, 32)],
                        help="n_epochs x batch_size (default: 6x64 3x32)")
    parser.add_argument("--seeds", type=_seeds, default=_seeds("0-9"), help="e.g. 0-9")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args(argv)
    tiny = dict(ff_dim=32, max_length=14) if args.smoke else {}
    if args.smoke:
        args.budgets, args.seeds = [(1, 16)], [0]

    from sklearn.utils.estimator_checks import check_estimator

    from cadsr_sklearn import CADSRRegressor

    failures = 0
    for n_epochs, batch_size in args.budgets:
        for seed in args.seeds:
            start = time.perf_counter()
            estimator = CADSRRegressor(n_epochs=n_epochs, batch_size=batch_size,
                                       random_state=seed, device="cpu", **tiny)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results = check_estimator(estimator, on_fail=None)
            failed = [(r["check_name"], r["status"], str(r["exception"])[:200])
                      for r in results if r["status"] != "passed"]
            failures += bool(failed)
            print(f"{n_epochs}x{batch_size} seed {seed}: {len(results)} checks, "
                  f"{'all passed' if not failed else failed} "
                  f"({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"{failures} of {len(args.budgets) * len(args.seeds)} runs had a check that "
          f"did not pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
