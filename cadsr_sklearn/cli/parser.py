"""The options of ``cadsr``: its sub-commands, their arguments and help texts.

:func:`build_parser` builds the parser; each sub-command's handler (in
:mod:`.commands`, and ``bench`` in :mod:`cadsr_sklearn.benchmarks.command`) is
its ``run`` default. The ``type=`` functions here reject bad numbers with
argparse's own usage message (exit status 2).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .._version import __version__
from ..benchmarks.command import add_bench_parser
from .commands import cmd_demo, cmd_fit, cmd_predict, cmd_report, cmd_show
from .demo import DEMO_MAX_TIME

__all__ = ["build_parser"]


def _number(convert, kind: str, accepts, requirement: str):
    """An argparse ``type=``: ``convert`` the text, then reject what ``accepts`` does not."""
    def parse(value: str):
        try:
            x = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {value!r}") from None
        if not accepts(x):
            raise argparse.ArgumentTypeError(f"must be {requirement}, got {value!r}")
        return x
    return parse


_positive = _number(float, "a number", lambda x: x > 0 and np.isfinite(x),
                    "a positive number of seconds")
_seconds = _number(float, "a number", lambda x: 0 <= x < math.inf, "a number of seconds >= 0")
_fraction = _number(float, "a number", lambda x: 0 < x < 1, "a fraction between 0 and 1")
_positive_int = _number(int, "an integer", lambda x: x >= 1, "at least 1")


MODEL_HELP = ("a saved model: a formula file (.json, what cadsr fit saves) or a pickle "
              "(.joblib, .pkl; only your own: loading one runs code)")


def _add_hidden(parser: argparse.ArgumentParser) -> None:
    # small budgets for tests and CI; not part of the documented interface
    parser.add_argument("--epochs", type=_positive_int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=_positive_int, default=None, help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    """The ``cadsr`` argument parser with its sub-commands."""
    parser = argparse.ArgumentParser(
        prog="cadsr",
        description=(
            "Symbolic regression with CADSR: find a short formula y = f(x) for a table of data."
        ),
        epilog="Model files: cadsr fit saves a formula file (model.json: JSON that is data, "
        "read without running code: the file to share); an --out name ending .joblib or .pkl "
        "saves a pickle instead (the whole estimator, for Python, and with --param "
        "warm_start=True for a later fit to continue), which runs code when loaded: load "
        "pickles only from yourself. predict, show and report read either.",
    )
    parser.add_argument("--version", action="version", version=f"cadsr-sklearn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="find the pendulum law T = 2*pi*sqrt(L/g) on a built-in dataset",
        description="Fit CADSR on 300 noisy pendulum measurements and print the formula.",
    )
    demo.add_argument(
        "--max-time",
        type=_positive,
        default=DEMO_MAX_TIME,
        help=f"search budget in seconds (default {DEMO_MAX_TIME:g})",
    )
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--device", default="auto", help="auto (default), cpu, cuda or cuda:N")
    demo.add_argument(
        "--plots",
        default="cadsr-demo-plots",
        metavar="FOLDER",
        help="folder for the PNG plots (default cadsr-demo-plots; '' for none)",
    )
    demo.add_argument(
        "--no-plots", dest="plots", action="store_const", const="", help="write no plots"
    )
    demo.add_argument(
        "--out",
        default=None,
        metavar="MODEL.json",
        help="also save the fitted model (for cadsr show / predict): a formula file, or a "
        "pickle for a name ending .joblib or .pkl",
    )
    _add_hidden(demo)
    demo.set_defaults(run=cmd_demo)

    fit = sub.add_parser(
        "fit",
        help="search a formula for a column of a CSV file",
        description="Search a formula TARGET = f(other columns) and save the model.",
    )
    fit.add_argument(
        "data", metavar="DATA.csv", nargs="?", default=None,
        help="a table with a header row; every column numeric (give it first, or with --data)",
    )
    fit.add_argument("--data", dest="data_option", metavar="DATA.csv", default=None,
                     help="the table, as an option (safe after --unary/--binary)")
    fit.add_argument(
        "--target", required=True, metavar="COLUMN", help="name of the column to predict"
    )
    fit.add_argument(
        "--max-time", type=_positive, default=300.0, help="search budget in seconds (default 300)"
    )
    fit.add_argument("--n-epochs", type=_positive_int, default=None, metavar="N",
                     help="epoch budget (default 600; the first budget to run out stops the fit)")
    fit.add_argument("--batch-size", type=_positive_int, default=None, metavar="B",
                     help="formulas sampled per epoch (default 500, the estimator's)")
    fit.add_argument("--patience", type=_positive_int, default=None, metavar="N",
                     help="stop after N epochs without a better formula")
    fit.add_argument("--n-jobs", type=int, default=None, metavar="N",
                     help="threads for constant fitting (default every core; -1 the same)")
    fit.add_argument("--islands", type=_positive_int, default=None, metavar="K",
                     help="run K searches as one, exchanging their best formulas, each on a "
                     "Dask worker of its own (default 1; needs cadsr-sklearn[distributed])")
    fit.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="with --islands: run them on this Dask scheduler's workers "
                     "(default: a local cluster of one process per island)")
    fit.add_argument("--columns", nargs="+", default=None, metavar="COLUMN",
                     help="feature columns to use (default every column but the target)")
    fit.add_argument("--drop", nargs="+", default=(), metavar="COLUMN",
                     help="columns to leave out")
    fit.add_argument("--validation", type=_fraction, default=None, metavar="FRACTION",
                     help="hold out this fraction of the rows (seeded) and report R² on them")
    fit.add_argument("--paper", action="store_true",
                     help="start from the paper's settings (CADSRRegressor.paper()); the "
                     "options given here still apply")
    fit.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="any CADSRRegressor parameter, e.g. --param snap_constants=False "
                     "--param alpha=2.5 (repeatable; VALUE is read as a Python literal)")
    fit.add_argument("--units", nargs="+", default=None, metavar="NAME=UNITS",
                     help="physical units of the columns, the target's too, e.g. --units "
                     "L=m g=m/s^2 T=s ('1' for dimensionless): every formula is then "
                     "dimensionally consistent")
    fit.add_argument("--guess", dest="guesses", action="append", default=None,
                     metavar="FORMULA",
                     help="a formula you believe in, in the column names, e.g. --guess "
                     "'1.5*m*v**2': it seeds the search and is shown fitted beside the "
                     "Pareto front (repeatable)")
    fit.add_argument(
        "--binary",
        nargs="+",
        default=None,
        metavar="OP",
        help="binary operators (default add sub mul div pow)",
    )
    fit.add_argument(
        "--unary",
        nargs="*",
        default=None,
        metavar="OP",
        help="unary operators (default sin cos log sqrt exp; also tan square cube neg inv "
        "tanh abs asin acos atan sinh cosh); give none for no unary operators",
    )
    fit.add_argument("--require", nargs="+", default=None, metavar="COLUMN",
                     help="feature columns every formula must contain (required_features)")
    fit.add_argument("--nested", nargs="+", default=None, metavar="OUTER:INNER=N",
                     help="at most N INNER operators below an OUTER one, e.g. --nested "
                     "sin:cos=0 exp:exp=1 (nested_constraints)")
    fit.add_argument("--complexity", nargs="+", default=None, metavar="OP=N",
                     help="an operator's complexity, if not 1, e.g. --complexity sin=3 pow=2 "
                     "(operator_complexity)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--device", default="auto", help="auto (default), cpu, cuda or cuda:N")
    fit.add_argument(
        "--out", default="model.json", metavar="MODEL.json",
        help="where to save the model (default model.json): a formula file, JSON that is "
        "data, for cadsr show / predict / report and to share; a name ending .joblib or .pkl "
        "saves a pickle instead, the whole estimator for a later fit to continue (with "
        "--param warm_start=True), which runs code when loaded",
    )
    fit.add_argument(
        "--plots", default=None, metavar="FOLDER", help="also write PNG plots into FOLDER"
    )
    fit.add_argument("--checkpoint", default=None, metavar="PATH",
                     help="save the whole search to PATH as it runs; if PATH exists, resume it")
    fit.add_argument("--resume", default=None, metavar="PATH",
                     help="resume the search saved in PATH (by --checkpoint), and keep saving it")
    fit.add_argument("--checkpoint-every", type=_seconds, default=60.0, metavar="SECONDS",
                     help="seconds between checkpoints (default 60; 0 after every epoch)")
    fit.add_argument("--epochs", dest="n_epochs", type=_positive_int, help=argparse.SUPPRESS)
    fit.set_defaults(run=cmd_fit)

    pred = sub.add_parser(
        "predict",
        help="apply a saved model to a CSV file",
        description="Evaluate a saved model's formula on the rows of a CSV file.",
    )
    pred.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    pred.add_argument(
        "data", metavar="DATA.csv", help="must contain the columns the model was fitted on"
    )
    pred.add_argument(
        "--out", default=None, metavar="PREDS.csv", help="output CSV (default: standard output)"
    )
    pred.add_argument("--keep-columns", action="store_true",
                      help="write the input columns too, the prediction last")
    pred.add_argument("--index", type=int, default=None, metavar="ROW",
                      help="use row ROW of the Pareto front (cadsr show) instead of the chosen one")
    pred.set_defaults(run=cmd_predict)

    show = sub.add_parser(
        "show", help="print a saved model's formula, Pareto front and run summary"
    )
    show.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    show.set_defaults(run=cmd_show)

    report = sub.add_parser(
        "report",
        help="write a saved model's report: one HTML file to share",
        description="Write a saved model's formula, Pareto front, constants, plots, data "
        "summary and settings into one self-contained HTML file (no network needed).",
    )
    report.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    report.add_argument("-o", "--output", default="report.html", metavar="REPORT.html",
                        help="the HTML file to write (default report.html)")
    report.add_argument("--data", default=None, metavar="DATA.csv",
                        help="also plot the predictions against --target on this table "
                        "(a model keeps no data)")
    # repeated rather than nargs="+", which would take the model file after it too
    report.add_argument("--target", action="append", default=None, metavar="COLUMN",
                        help="the column of --data with the true values (repeat it for a "
                        "model of several outputs, one per output)")
    report.set_defaults(run=cmd_report)

    add_bench_parser(sub)
    return parser
