"""The ``cadsr`` command: ``demo``, ``fit``, ``predict``, ``show``, ``report`` (and ``bench``).

::

    cadsr demo                                   # the pendulum law, about a minute on a CPU
    cadsr fit data.csv --target y --max-time 120 # saves model.json, a formula file
    cadsr predict model.json new.csv --out predictions.csv
    cadsr show model.json
    cadsr report model.json -o report.html       # one HTML file to share

Bad input (a missing file or column, non-numeric or non-finite values, an empty
file, an unknown operator or device) is one line on stderr and exit status 2;
nothing is fitted. ``python -m cadsr_sklearn`` is the same command.

``cadsr fit`` saves the model as a formula file (``model.json`` by default;
:mod:`cadsr_sklearn.reporting.formula_file`): JSON that is data, read without
running code, and refused with one line if it is corrupted or was edited. An
``--out`` name ending ``.joblib``, ``.pkl`` or ``.pickle`` saves a joblib pickle
instead: the whole estimator, for Python and, fitted with ``--param
warm_start=True``, for a later fit to continue; loading a pickle runs code from
it, so load only your own. ``predict``, ``show`` and ``report`` read either,
told apart by their first bytes.

The package's modules: :mod:`.parser` (the options), :mod:`.commands` (what each
sub-command does), :mod:`.checks` (checks of the options before a search),
:mod:`.tables` (reading CSV files), :mod:`.printing` (what is printed of a fitted
model, and its plots) and :mod:`.demo` (the demo's pendulum data and its truth
test); ``cadsr bench`` is :mod:`cadsr_sklearn.benchmarks.command`, and the page
``cadsr report`` writes is :mod:`cadsr_sklearn.reporting.html_report`.
"""

from __future__ import annotations

import sys
from typing import Sequence

from ..user_input import UsageError
from .demo import pendulum_data
from .parser import build_parser

__all__ = ["main", "build_parser", "pendulum_data"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``cadsr`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    if hasattr(sys.stdout, "reconfigure"):
        try:  # never crash on a console that cannot print "²" or a pretty formula
            sys.stdout.reconfigure(errors="replace")
        except (ValueError, OSError):  # pragma: no cover
            pass
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2)
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except UsageError as err:
        print(f"cadsr: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `cadsr predict … | head`
        return 0
    except KeyboardInterrupt:  # Ctrl-C before the search had a formula to keep
        print("cadsr: interrupted", file=sys.stderr)
        return 130
