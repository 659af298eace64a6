"""How often snapping claims a simple number, with and without the resolution rule.

Snapping (``cadsr_sklearn.search.refinement.snapping``) replaces a fitted constant θ̂ ± σ
by a simple number v when the criterion rises. This script measures, for one constant,
how often that happens to a constant that is *no* simple number (a false claim) and to
one that is (a law kept), with the criterion's coding of one constant whose reach is its
own magnitude:

* the literal wins when codelength(v) + (θ̂ − v)²/2σ² < ln(|θ̂| / √12 σ), the cost of the
  fitted constant stated to the precision the data give it (``scoring.rewards``, "mdl");
* and the BIC test holds, (θ̂ − v)² < σ² ln S (S rows);
* the simplest such v is taken, as snapping takes it.

Two arms: "criterion alone" tries every simple number within four standard errors;
"resolution rule" only those the data resolve
(``cadsr_sklearn.expressions.simple_numbers.resolves``). Constants that are no simple
number are drawn log-uniform over ±[0.01, 100]; laws from a list of numbers that laws
hold. Relative standard errors σ/|θ| from 1e-9 (exact data) to 3e-2 (a few noisy rows).

    python perf/snapping_rule.py                  # 2000 draws per cell, seed 0
    python perf/snapping_rule.py --draws 500 --seed 1
    python perf/snapping_rule.py --smoke          # 50 draws, two precisions
"""

import argparse
import math

import numpy as np

from cadsr_sklearn.expressions.simple_numbers import candidates

LAWS = (0.5, 2.0, 1.5, 2 * math.pi, 1 / (4 * math.pi), math.pi, 1 / 3, 4 * math.pi ** 2, 3.0,
        10.0, 0.25, -1.0, 7 * math.pi / 6, math.sqrt(2))
PRECISIONS = (1e-9, 1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2)
WINDOW = 4.0  # standard errors, as snapping's SNAP_WINDOW


def snapped(estimate: float, error: float, rule: bool, rows: int) -> float | None:
    """The simple number snapping takes for ``estimate`` ± ``error``, or None."""
    fitted_cost = max(0.0, math.log(abs(estimate) / (math.sqrt(12) * error)))
    for number in candidates(estimate, WINDOW * error, error if rule else None):
        misfit = (estimate - number.value) ** 2 / (2 * error ** 2)
        if number.cost + misfit < fitted_cost and 2 * misfit < math.log(rows):
            return number.value
    return None


def rates(precision: float, rule: bool, draws: int, rng, rows: int) -> tuple[float, float]:
    """(share of non-simple constants snapped, share of laws snapped to themselves)."""
    false = 0
    for _ in range(draws):
        truth = math.exp(rng.uniform(math.log(0.01), math.log(100))) * rng.choice((-1, 1))
        error = precision * abs(truth)
        false += snapped(truth + error * rng.standard_normal(), error, rule, rows) is not None
    kept = 0
    for _ in range(draws):
        truth = LAWS[rng.integers(len(LAWS))]
        error = precision * abs(truth)
        found = snapped(truth + error * rng.standard_normal(), error, rule, rows)
        kept += found is not None and abs(found - truth) <= 1e-9 * max(1.0, abs(truth))
    return false / draws, kept / draws


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000, help="constants per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=int, default=2000, help="S, for the BIC test")
    parser.add_argument("--smoke", action="store_true", help="50 draws, two precisions")
    args = parser.parse_args(argv)
    precisions = (1e-4, 1e-2) if args.smoke else PRECISIONS
    draws = 50 if args.smoke else args.draws
    rng = np.random.default_rng(args.seed)
    print(f"S = {args.rows}, {draws} draws per cell, seed {args.seed}")
    print("| σ/|θ| | criterion alone: false / kept | resolution rule: false / kept |")
    print("|---:|---:|---:|")
    for precision in precisions:
        cells = [rates(precision, rule, draws, rng, args.rows) for rule in (False, True)]
        text = " | ".join(f"{100 * f:.1f} % / {100 * k:.1f} %" for f, k in cells)
        print(f"| {precision:g} | {text} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
