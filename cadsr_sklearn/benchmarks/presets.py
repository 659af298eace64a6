"""Presets of ``cadsr bench``: named defaults and a report, for studies run again and again.

A preset changes nothing about how a task is run or judged: it only sets the
defaults of options the command line does not give, and adds its own tables
and a final JSON line to the report. Every option still overrides it.

``recovery``
    CADSR's symbolic recovery on Nguyen and Constant (the former
    ``benchmarks/bench_recovery.py``): seeds 0–4, 120 s per fit, two fits at a
    time, CADSR's default token set. Reports per problem solved over the reals,
    by SRBench's test as written, before snapping and exact on the test set,
    and, as JSON, the suite means against DSR's published figures.
``variance``
    The BIC's σ² (the former ``benchmarks/bench_variance.py``): ``bic_variance``
    "mle" against "target" on 16 development problems at noise 0 and 0.1, seed
    0, 20 s per fit. Reports the rates of each and, as JSON, per noise level.
``nist``
    Small real tables with a certified model (:mod:`.nist`): the NIST StRD
    files given with ``--data``, each fitted on all rows and on a random 75 %
    (seeds 0–1, 20 s per fit, two at a time); reports per file whether the
    chosen formula is the certified form or better, and its held-out error
    against the certified model refitted on the same rows. A study of its own
    (it runs its own tasks); ``--sweep`` and ``--params`` apply.
``few-rows``
    Built-in problems on few training rows: run it once per ``--n-train`` (8,
    15, 30, 100) into one ``--out`` each, then ``--report`` them together.
    Reports SRBench's solution rate and the *interpolation rate* (training R²
    above 0.999999 with test R² below 0.9, or as many fitted constants as rows
    less one) per number of rows and noise level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .report import (few_rows_summary, few_rows_table, recovery_summary, recovery_table,
                     variant_summary, variant_table)

__all__ = ["Preset", "PRESETS"]


def _none(rows: list[dict]) -> list:
    return []


@dataclass(frozen=True)
class Preset:
    """Defaults of ``cadsr bench`` options (by argparse name) and the preset's report.

    ``tables`` gives the preset's markdown tables of the result rows, printed
    after the summary table; ``summaries`` its summaries, each printed as one
    JSON line at the very end.
    """

    name: str
    help: str
    defaults: dict[str, Any] = field(default_factory=dict)
    #: Problems run when neither ``--problems`` nor ``--suite``/``--data`` is given.
    problems: tuple[str, ...] | None = None
    tables: Callable[[list[dict]], list[str]] = _none
    summaries: Callable[[list[dict]], list[dict]] = _none
    #: A study that runs its own tasks instead of the runner's: (parsed options) -> exit status.
    runner: Callable[[Any], int] | None = None


def _run_nist(args) -> int:
    from pathlib import Path

    from ..user_input import UsageError
    from .nist import nist_table, run_study
    from .tasks import method_params, parse_seeds, sweep_variants

    if not args.data:
        raise UsageError("--preset nist needs the NIST StRD files: --data path/to/nist/*.dat")
    missing = [path for path in args.data if not Path(path).is_file()]
    if missing:
        raise UsageError(f"{missing[0]}: no such file")
    variants = ({name: settings.get("cadsr", {}) for name, settings in sweep_variants(
        args.sweep, lambda items: method_params(items, ["cadsr"])).items()}
        if args.sweep else {"": {}})
    base = method_params(args.params, ["cadsr"]).get("cadsr", {})
    variants = {name: {**base, **settings} for name, settings in variants.items()}
    rows = run_study(args.data, parse_seeds(args.seeds), args.max_time, variants,
                     Path(args.out) if args.out else None, args.n_jobs)
    print("\n" + nist_table(rows))
    return 0


PRESETS: dict[str, Preset] = {
    "recovery": Preset(
        "recovery",
        "symbolic recovery on Nguyen and Constant (seeds 0-4, 120 s, 2 jobs, default tokens)",
        defaults=dict(suite=["nguyen", "constant"], seeds=["0-4"], max_time=120.0, n_jobs=2,
                      operators="default", out="recovery.csv"),
        tables=lambda rows: [recovery_table(rows)],
        summaries=recovery_summary,
    ),
    "variance": Preset(
        "variance",
        "the BIC's variance, mle against target, on 16 problems at noise 0 and 0.1 (20 s)",
        defaults=dict(seeds=["0"], noise=[0.0, 0.1], max_time=20.0, n_jobs=1,
                      operators="default", sweep=["bic_variance=mle", "bic_variance=target"],
                      out="variance.csv"),
        problems=(
            "Nguyen-1", "Nguyen-2", "Nguyen-5", "Nguyen-7", "Nguyen-8", "Nguyen-10",
            "Constant-1", "Constant-3", "Constant-5", "Constant-8",
            "Feynman-I.12.5", "Feynman-I.14.4", "Feynman-I.18.4", "Feynman-I.43.31",
            "Feynman-II.34.2", "Feynman-III.15.14",
        ),
        tables=lambda rows: [variant_table(rows)],
        summaries=lambda rows: [variant_summary(rows, "bic_variance")],
    ),
    "nist": Preset(
        "nist",
        "NIST StRD files given with --data: certified form or better, held-out error "
        "(seeds 0-1, 20 s, 2 jobs)",
        defaults=dict(seeds=["0-1"], max_time=20.0, n_jobs=2, out="nist.csv"),
        runner=_run_nist,
    ),
    "few-rows": Preset(
        "few-rows",
        "solution and interpolation rates on few rows: Nguyen, Constant and Feynman at one "
        "--n-train per run, noise 0, 0.01, 0.1 (seed 0, 20 s, 2 jobs)",
        defaults=dict(suite=["nguyen", "constant", "feynman"], seeds=["0"],
                      noise=[0.0, 0.01, 0.1], max_time=20.0, n_jobs=2, out="few-rows.csv"),
        tables=lambda rows: [few_rows_table(rows)],
        summaries=few_rows_summary,
    ),
}
