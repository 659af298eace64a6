"""Sampling speed: draw oversampling·B trees breadth-first and keep the first B unique.

Paper settings: E=10, M=8, 1 decoder layer, 1 head, FF 2048, max length 32,
Library(5) (5 binary, 5 unary, x0..x4, 1, c), B=1000, oversampling 2.  The
policy is untrained (freshly initialised), as in the first epoch.

    python perf/bench_sampling.py [--runs 15] [--threads 1] [--profile]
    python perf/bench_sampling.py --smoke     # B = 50, twice: that it runs

One torch thread by default: the tensors are small, and on a shared 2-core
machine a second OpenMP thread mostly waits (measured 3–6× slower under load,
~1.5× faster when the machine is idle).  ``--threads 0`` keeps torch's default.

Prints a table, then as its final line a JSON object with the median seconds
and expressions per second (trees drawn / median seconds; kept unique trees per
second are reported too).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict

import torch

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.sampling.constraints import Constraints
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.sampling.policy import Policy
from cadsr_sklearn.sampling.priors import Priors
from cadsr_sklearn.sampling.sampler import Sampler
from cadsr_sklearn.settings import SearchSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--oversampling", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads; 0 keeps torch's default (default: 1)")
    parser.add_argument("--attention", default="dct", choices=["dct", "standard"])
    parser.add_argument("--position-encoding", default="dpe", choices=["dpe", "1d"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's top ops")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        args.batch_size, args.runs = 50, 2
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(args.seed)
    library = Library(5)
    defaults = CADSRRegressor().get_params()  # the estimator's policy options and priors
    options = asdict(SearchSettings.from_params(defaults).policy)
    options.update(attention=args.attention, position_encoding=args.position_encoding)
    policy = Policy(len(library), **options).eval()
    priors = Priors(library, uniform_arity=defaults["arity_prior"],
                    length=defaults["length_prior"])
    constraints = Constraints(library, max_length=options["max_length"], max_constants=10)
    sampler = Sampler(policy, library, constraints, priors)
    generator = torch.Generator().manual_seed(args.seed)
    for _ in range(2):  # warm-up (allocator, kernels)
        sampler.sample_unique(args.batch_size, args.oversampling, generator)

    wall, cpu, lengths, unique = [], [], [], []
    for _ in range(args.runs):
        w0, c0 = time.perf_counter(), time.process_time()
        batch = sampler.sample_unique(args.batch_size, args.oversampling, generator)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
        lengths.append(float(batch.lengths.float().mean()))
        unique.append(len(set(batch.keys())))

    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                sampler.sample_unique(args.batch_size, args.oversampling, generator)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))

    drawn = max(args.batch_size, int(round(args.oversampling * args.batch_size)))
    median = statistics.median(wall)
    print(f"sample_unique: draw {drawn}, keep {args.batch_size} unique | "
          f"torch threads {torch.get_num_threads()} | "
          f"{args.attention}/{args.position_encoding} | {args.runs} runs")
    print(f"{'':22s}{'median':>10s}{'min':>10s}{'max':>10s}")
    print(f"{'wall seconds':22s}{median:10.4f}{min(wall):10.4f}{max(wall):10.4f}")
    print(f"{'CPU seconds':22s}{statistics.median(cpu):10.4f}{min(cpu):10.4f}{max(cpu):10.4f}")
    print(f"{'drawn expressions/s':22s}{drawn / median:10.0f}"
          f"{drawn / max(wall):10.0f}{drawn / min(wall):10.0f}")
    print(f"{'kept expressions/s':22s}{args.batch_size / median:10.0f}"
          f"{args.batch_size / max(wall):10.0f}{args.batch_size / min(wall):10.0f}")
    print(f"{'mean tree length':22s}{statistics.median(lengths):10.2f}")
    print(f"{'unique kept':22s}{statistics.median(unique):10.0f}")
    print(json.dumps({
        "median_s": round(median, 5),
        "min_s": round(min(wall), 5),
        "median_cpu_s": round(statistics.median(cpu), 5),
        "expressions_per_s": round(drawn / median, 1),
        "kept_per_s": round(args.batch_size / median, 1),
        "drawn": drawn,
        "kept": args.batch_size,
        "runs": args.runs,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
