"""The dimensional constraint's cost and yield at sampling, on the Feynman development sample.

For every problem whose variables have units (the AI-Feynman units table), an
untrained policy with the estimator's default settings (E=10, M=8, FF 2048, max
length 32, the problem's operators) draws ``oversampling·B`` trees and keeps B
unique ones, with and without the units constraint, in turns. Per problem it
reports the share of the kept trees that pass the final check
(:func:`~cadsr_sklearn.units.check.check_units`) — what a batch loses to rejection is
the rest — the mean tree length, and the median sampling time over ``--runs``
draws of each::

    python perf/bench_units.py [--runs 5] [--batch-size 500]
    python perf/bench_units.py --smoke     # two problems, B = 50, once: that it runs

The first epoch is the hardest case: training moves the policy towards trees
that pass. ``history_["units_rejected_fraction"]`` of a fit shows the share
epoch by epoch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch

from cadsr_sklearn.benchmarks.suites import get_suite
from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.priors import Priors
from cadsr_sklearn.sampling.sampler import Sampler
from cadsr_sklearn.units.check import check_units
from cadsr_sklearn.units.quantities import parse_units
from cadsr_sklearn.units.rule import UnitsRule


def _sampler(library: Library, units, seed: int) -> Sampler:
    torch.manual_seed(seed)
    policy = Policy(len(library), max_length=32, embedding_dim=10, dct_dim=8, n_layers=1,
                    n_heads=1, ff_dim=2048, attention="dct", position_encoding="dpe",
                    embedding_std=0.02, parent_sibling=True)
    units = None if units is None else UnitsRule(units)
    constraints = Constraints(library, max_length=32, max_constants=10, units=units)
    priors = Priors(library, uniform_arity=True, length=12, units=units)
    return Sampler(policy, library, constraints, priors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.batch_size = 1, 50
    torch.set_num_threads(1)
    rows = []
    for problem in get_suite("feynman"):
        if problem.units is None:
            continue
        units = parse_units(list(problem.units), problem.target_units, problem.variables)
        if not units.constrains:
            continue
        if args.smoke and len(rows) == 2:
            break
        library = Library(len(problem.variables), problem.binary_operators,
                          problem.unary_operators)
        samplers = {"without": _sampler(library, None, 0), "with": _sampler(library, units, 0)}
        generators = {k: torch.Generator().manual_seed(0) for k in samplers}
        times = {k: [] for k in samplers}
        batches = {}
        for _ in range(args.runs):
            for name, sampler in samplers.items():  # in turns: drift hits both alike
                start = time.perf_counter()
                batches[name] = sampler.sample_unique(args.batch_size, 2, generators[name])
                times[name].append(time.perf_counter() - start)
        row = {"problem": problem.name}
        for name, batch in batches.items():
            passed = np.mean([check_units(e, units).consistent
                              for e in batch.expressions(library)])
            row[name] = dict(consistent=float(passed), length=float(batch.lengths.float().mean()),
                             seconds=statistics.median(times[name]))
        rows.append(row)
        print(f"{problem.name:20s} consistent {row['without']['consistent']:5.1%} → "
              f"{row['with']['consistent']:5.1%}   length {row['without']['length']:4.1f} → "
              f"{row['with']['length']:4.1f}   sampling {row['without']['seconds']:.3f} s → "
              f"{row['with']['seconds']:.3f} s", flush=True)
    summary = {k: {m: float(np.median([r[k][m] for r in rows]))
                   for m in ("consistent", "length", "seconds")} for k in ("without", "with")}
    print(json.dumps({"median": summary, "problems": rows}))


if __name__ == "__main__":
    main()
