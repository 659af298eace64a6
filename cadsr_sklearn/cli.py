"""The ``cadsr`` command: ``demo``, ``fit``, ``predict``, ``show`` (and ``bench``).

::

    cadsr demo                                   # the pendulum law, about a minute on a CPU
    cadsr fit data.csv --target y --max-time 120 --out model.joblib
    cadsr predict model.joblib new.csv --out predictions.csv
    cadsr show model.joblib

Bad input (a missing file or column, non-numeric or non-finite values, an empty
file, an unknown operator or device) is one line on stderr and exit status 2;
nothing is fitted. ``python -m cadsr_sklearn`` is the same command.

Model files are pickles (joblib): loading one runs code from it, so only load
files you trust.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from ._version import __version__
from .user_input import UsageError, estimator_params

__all__ = ["main", "build_parser", "pendulum_data"]

#: Budget of ``cadsr demo`` in seconds.
DEMO_MAX_TIME = 60.0
#: Batch size of ``cadsr demo``: within a minute, many small epochs learn more than
#: a few large ones (measured: 3 of 3 seeds recover the law with 250, 0 of 2 with
#: 1000, on a shared 2-core machine).
DEMO_BATCH_SIZE = 250


# ------------------------------------------------------------------ output
def _pretty(expr) -> str:
    import sympy

    unicode = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "") in (
        "utf8",
        "utf16",
    )
    return sympy.pretty(expr, use_unicode=unicode)


def _train_r2(model, loss: float) -> float | None:
    from .display import r2_from_loss

    variance = getattr(model, "y_variance_", None)
    if variance is None or not variance > 0:
        return None
    return r2_from_loss(loss, variance)


def _print_symbols(model) -> None:
    """Which symbol stands for which column, where a column name is not one."""
    symbols = getattr(model, "symbol_names_", None)
    names = getattr(model, "feature_names_in_", None)
    if symbols is None or names is None:
        return
    renamed = [f"{s} = {str(n)!r}" for s, n in zip(symbols, names) if s != str(n)]
    if renamed:
        print(f"Symbols:    {', '.join(renamed)}  (column names that cannot be symbols)")


def _print_formula(model) -> None:
    from .display import DISPLAY_DIGITS

    print("Discovered formula:\n")
    print(_pretty(model.sympy(precision=DISPLAY_DIGITS)))
    print(f"\nLaTeX:      {model.latex()}")
    print(f"Complexity: {model.best_expression_.complexity}  (k = nodes + fitted constants)")


def _print_front(model) -> None:
    from .display import formula_text
    from .plotting import front_rows  # no matplotlib needed

    rows = front_rows(model)
    with_r2 = _train_r2(model, 0.0) is not None
    print("\nPareto front (* = chosen by model_selection; training loss = MSE):")
    header = "      k  train MSE" + ("    train R²" if with_r2 else "") + "  formula"
    print(header)
    for row in rows:
        mark = "*" if row["selected"] else " "
        r2 = f"  {_train_r2(model, row['loss']):10.6f}" if with_r2 else ""
        print(
            f"  {mark} {row['complexity']:3d}  {row['loss']:.3e}{r2}  {formula_text(row)}"
        )


def _print_run(model, seconds: float | None = None) -> None:
    took = (
        seconds if seconds is not None else (model.history_[-1]["time"] if model.history_ else 0.0)
    )
    print(
        f"\nSearch: {model.n_epochs_} epochs, {model.n_evaluations_} expressions scored, "
        f"{took:.1f} s on {model.device_}, stopped by: {model.stop_reason_}"
    )
    if model.interrupted_:
        print("(interrupted with Ctrl-C: the best formula found so far is kept)")


# -------------------------------------------------------------------- demo
def pendulum_data(n: int = 300, noise: float = 0.01, seed: int = 0):
    """Period of a simple pendulum, T = 2π·sqrt(L/g), on several planets.

    L (m) in [0.1, 2], g (m/s²) in [1.6, 25] (the Moon to Jupiter); Gaussian
    noise of ``noise`` times the RMS of T (SRBench's noise model).

    Returns
    -------
    X : ndarray of shape (n, 2)
        Columns L and g.
    T_true : ndarray of shape (n,)
        Noise-free periods.
    T : ndarray of shape (n,)
        Measured (noisy) periods.
    """
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.1, 2.0, n)
    g = rng.uniform(1.6, 25.0, n)
    T = 2 * np.pi * np.sqrt(L / g)
    X = np.column_stack([L, g])
    return X, T, T + rng.normal(0, noise * np.sqrt(np.mean(T**2)), n)


def matches_truth(model_expr, truth, rel_tol: float = 0.02, timeout: float = 5.0) -> bool:
    """Whether ``model_expr`` equals ``truth`` up to constants within ``rel_tol``.

    True when ``model / truth`` simplifies to a number within ``rel_tol`` of 1
    (the fitted 6.28… for 2π passes; a different power does not).
    """
    import sympy

    from .benchmarks.metrics import SimplifyTimeout, round_floats, time_limit

    model_expr, truth = sympy.sympify(model_expr), sympy.sympify(truth)
    # physical quantities: positive symbols let sqrt(L/g) = sqrt(L)/sqrt(g)
    positive = {
        s: sympy.Symbol(s.name, positive=True) for s in model_expr.free_symbols | truth.free_symbols
    }
    # exact rationals (x**0.5 -> sqrt(x)), three decimals: SRBench's rounding
    model_expr = round_floats(model_expr, digits=3).xreplace(positive)
    try:
        with time_limit(timeout):
            ratio = sympy.simplify(model_expr / truth.xreplace(positive))
    except SimplifyTimeout:
        return False
    if not ratio.is_number:
        return False
    try:
        return abs(complex(ratio) - 1.0) <= rel_tol
    except TypeError:
        return False


def _cmd_demo(args) -> int:
    import sympy

    from .estimator import CADSRRegressor

    device = _check_device(args.device)
    if args.out:
        _check_writable(args.out)
    if args.plots:
        _check_plot_folder(args.plots)
    X, T_true, T = pendulum_data(seed=0)
    names = ["L", "g"]
    n_train = int(0.75 * len(X))
    print("CADSR demo: the period of a simple pendulum, T = 2*pi*sqrt(L/g)")
    print(
        f"  {len(X)} measurements of (L, g) -> T with 1% noise; {n_train} to train, "
        f"{len(X) - n_train} to test."
    )
    print(f"  Searching for up to {args.max_time:g} s on {device} (seed {args.seed}) ...")
    params = dict(
        max_time=args.max_time,
        random_state=args.seed,
        verbose=1,
        device=args.device,
        batch_size=DEMO_BATCH_SIZE,
    )
    params.update(_hidden_params(args))
    model = CADSRRegressor(**params)
    start = time.perf_counter()
    model.fit(_frame(X[:n_train], names), T[:n_train])
    seconds = time.perf_counter() - start
    print()
    _print_formula(model)
    r2 = model.score(_frame(X[n_train:], names), T_true[n_train:])
    print(f"Test R²:    {r2:.6f}  (on {len(X) - n_train} held-out rows, noise-free targets)")
    _print_run(model, seconds)
    _print_front(model)

    L, g = sympy.symbols("L g")
    truth = 2 * sympy.pi * sympy.sqrt(L / g)
    # a cheap numerical gate first: simplify() on a wrong formula can take long
    with np.errstate(all="ignore"):
        close = np.max(np.abs(model.predict(_frame(X[n_train:], names)) / T_true[n_train:] - 1.0))
    found = bool(close <= 0.02) and matches_truth(_in_names(model.expression_, names), truth)
    print("\nTruth:      T = 2*pi*sqrt(L/g) = 6.2832*sqrt(L/g)")
    if found:
        print("Recovered:  yes, the same formula up to rounding of the fitted constants.")
    else:
        print("Recovered:  no. Try a longer search (--max-time 300) or another --seed.")
    if args.out:
        import joblib

        joblib.dump(model, args.out)
        print(f"Saved the model to {args.out}")
    if args.plots:
        _write_plots(
            model,
            _frame(X[n_train:], names),
            T_true[n_train:],
            Path(args.plots),
            y_train=T[:n_train],
        )
    return 0


def _in_names(expr, names):
    """``expr`` with x0, x1, … renamed to ``names`` (a fit on a bare array, without pandas)."""
    import sympy

    default = {f"x{i}": name for i, name in enumerate(names)}
    return expr.xreplace({s: sympy.Symbol(default[s.name], **s.assumptions0)
                          for s in expr.free_symbols if s.name in default})


def _frame(X, names):
    try:
        import pandas as pd
    except ImportError:  # pandas is optional for the demo: fall back to x0, x1
        return X
    return pd.DataFrame(X, columns=names)


def _write_plots(model, X, y, folder: Path, y_train=None) -> None:
    from . import plotting

    try:
        paths = plotting.save_all(model, X, y, folder, y_train=y_train)
    except ImportError:
        print("\n(matplotlib is not installed, so no plots: pip install 'cadsr-sklearn[plot]')")
        return
    print()
    for name, path in paths.items():
        print(f"Wrote {name.replace('_', ' ')} plot: {path}")


# ------------------------------------------------------------ validation
def _read_table(path: str):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        raise UsageError(
            "reading CSV files needs pandas: pip install 'cadsr-sklearn[pandas]'"
        ) from None
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path}: is a folder, not a CSV file")
    if p.stat().st_size == 0:
        raise UsageError(f"{path}: the file is empty")
    sep = _delimiter(p)
    try:
        df = pd.read_csv(p, sep=sep)
        # The header as written: pandas renames a repeated name "a" to "a.1" and an
        # empty one to "Unnamed: 0", which would hide both mistakes.
        header = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str,
                             keep_default_na=False).iloc[0]
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"{path}: cannot be read as CSV ({first})") from None
    if df.empty:
        raise UsageError(f"{path}: the file has a header but no data rows")
    names = [str(c).strip() for c in header]
    repeated = sorted({c for c in names if names.count(c) > 1 and c})
    if repeated:
        raise UsageError(f"{path}: repeated column name(s) {repeated}")
    df.columns = names
    return df


def _delimiter(path: Path) -> str:
    """The file's delimiter among comma, semicolon, tab and bar (comma when unsure)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            sample = f.read(65536)
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except (csv.Error, OSError):
        return ","


def _numeric(df, path: str):
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    bad = [c for c in df.columns if not (is_numeric_dtype(df[c]) or is_bool_dtype(df[c]))]
    if bad:
        raise UsageError(f"{path}: non-numeric column(s) {bad}; encode or drop them")
    values = df.to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        where = ", ".join(
            f"data row {r + 1} (line {r + 2} of the file) column {df.columns[c]!r}"
            for r, c in list(zip(rows, cols, strict=True))[:3]
        )
        more = " …" if len(rows) > 3 else ""
        raise UsageError(
            f"{path}: missing, NaN or infinite values ({where}{more}); clean or drop them"
        )
    return df


def _check_operators(binary, unary) -> None:
    """The library's check of the names given to --binary and --unary, as a usage error."""
    from .library import DEFAULT_BINARY, DEFAULT_UNARY, check_operators

    try:
        check_operators(DEFAULT_BINARY if binary is None else binary,
                        DEFAULT_UNARY if unary is None else unary, labels=("--binary", "--unary"))
    except ValueError as err:
        raise UsageError(str(err).rstrip(".")) from None


def _check_device(device: str) -> str:
    from .devices import resolve_device

    try:
        return str(resolve_device(device))
    except ValueError as err:
        raise UsageError(str(err)) from None


def _check_writable(path: str) -> None:
    """Fail before the search, not after it, unless ``path`` names a file in an existing folder.

    Write permission is left to the write itself.
    """
    if Path(path).is_dir() or path.endswith(("/", os.sep)):
        raise UsageError(f"{path}: is a folder; give a file name")
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{path}: the folder {parent} does not exist")


def _check_plot_folder(path: str) -> None:
    """``--plots`` is a folder (created if missing), so an existing file is an error."""
    if Path(path).exists() and not Path(path).is_dir():
        raise UsageError(f"{path}: is a file; --plots takes a folder")


def _split(X, y, fraction: float, seed: int):
    """(X_train, X_held_out, y_train, y_held_out): a seeded split, ``fraction`` held out."""
    from sklearn.model_selection import train_test_split

    n_held_out = math.ceil(fraction * len(y))  # as train_test_split counts
    if len(y) - n_held_out < 1:
        raise UsageError(f"--validation {fraction:g} leaves no training rows of {len(y)}")
    return train_test_split(X, y, test_size=fraction, random_state=seed)


def _hidden_params(args) -> dict:
    params = {}
    if getattr(args, "epochs", None) is not None:
        params["n_epochs"] = args.epochs
    if getattr(args, "batch_size", None) is not None:
        params["batch_size"] = args.batch_size
    return params


# ------------------------------------------------------------------- fit
def _data_path(args) -> str:
    """The data file, wherever on the line it was given.

    ``--unary`` and ``--binary`` take every word after them, so ``cadsr fit
    --unary sin cos data.csv`` hands the file to ``--unary``: a word there that is
    no operator but an existing file is taken as the data.
    """
    from .library import BINARY_OPERATORS, UNARY_OPERATORS

    if args.data is not None and args.data_option is not None:
        raise UsageError(f"two data files: {args.data} and --data {args.data_option}; give one")
    if args.data is not None or args.data_option is not None:
        return args.data if args.data is not None else args.data_option
    for option, known in (("unary", UNARY_OPERATORS), ("binary", BINARY_OPERATORS)):
        words = getattr(args, option) or []
        files = [w for w in words if w not in known and Path(w).is_file()]
        if len(files) == 1 and words[-1] == files[0]:
            setattr(args, option, words[:-1])
            return files[0]
    raise UsageError(
        "no data file: give it first (cadsr fit DATA.csv --target y --unary sin cos) or with "
        "--data DATA.csv; --unary and --binary take every word after them"
    )


def _features(df, args, path: str):
    """The feature columns: ``--columns`` or all but the target, less ``--drop``."""
    for name in [*(args.columns or ()), *args.drop]:
        if name not in df.columns:
            raise UsageError(f"{path}: no column {name!r}; the columns are {list(df.columns)}")
    if args.target in (args.columns or ()):
        raise UsageError(f"--columns: {args.target!r} is the target")
    columns = list(args.columns) if args.columns else [c for c in df.columns if c != args.target]
    return [c for c in columns if c not in set(args.drop)]


def _cmd_fit(args) -> int:
    args.data = _data_path(args)
    df = _read_table(args.data)
    if args.target not in df.columns:
        raise UsageError(
            f"{args.data}: no column {args.target!r}; the columns are {list(df.columns)}"
        )
    df = df[[*_features(df, args, args.data), args.target]]
    unnamed = [i + 1 for i, c in enumerate(df.columns) if not c]
    if unnamed:
        raise UsageError(
            f"{args.data}: column(s) {unnamed} have no name (an index saved by to_csv?); "
            "name or drop them"
        )
    df = _numeric(df, args.data)
    X, y = df.drop(columns=[args.target]), df[args.target].to_numpy(dtype=np.float64)
    if X.shape[1] == 0:
        raise UsageError(f"{args.data}: no feature columns besides the target {args.target!r}")
    _check_operators(args.binary, args.unary)
    device = _check_device(args.device)
    _check_writable(args.out)
    if args.plots:
        _check_plot_folder(args.plots)
    checkpoint = _checkpoint_path(args)

    import joblib

    from .estimator import PAPER_SETTINGS, CADSRRegressor, SmallDataWarning

    params = dict(PAPER_SETTINGS) if args.paper else {}
    params.update(max_time=args.max_time, random_state=args.seed, device=args.device, verbose=1)
    if checkpoint is not None:
        params.update(checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
    for option, name in (("n_epochs", "n_epochs"), ("batch_size", "batch_size"),
                         ("patience", "patience"), ("n_jobs", "n_jobs")):
        if getattr(args, option) is not None:
            params[name] = getattr(args, option)
    if args.binary is not None:
        params["binary_operators"] = tuple(args.binary)
    if args.unary is not None:
        params["unary_operators"] = tuple(args.unary)
    params.update(estimator_params(args.param))  # last: --param overrides the options above
    held_out = None
    if args.validation is not None:
        X, held_out, y, y_held_out = _split(X, y, args.validation, args.seed)
    budget = params["max_time"]
    budget = f"up to {budget:g} s" if isinstance(budget, (int, float)) else "no time limit"
    print(
        f"Fitting {args.target} from {list(X.columns)} ({len(y)} rows"
        + (f", {len(held_out)} held out" if held_out is not None else "")
        + f") for {budget} on {device} ..."
    )
    if checkpoint is not None and Path(checkpoint).exists():
        print(f"Resuming the search saved in {checkpoint} ...")
    try:
        model = CADSRRegressor(**params)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as advice:
            warnings.simplefilter("always", SmallDataWarning)
            model.fit(X, y)
    except (ValueError, TypeError) as err:  # what the estimator rejects that the checks missed
        raise UsageError(str(err).splitlines()[0]) from None
    for note in advice:  # the small-table advice, as a note rather than a Python warning
        if issubclass(note.category, SmallDataWarning):
            print(f"Note: {note.message}\n  (on the command line: --param max_constants=N, "
                  "and --validation F to hold rows out)", file=sys.stderr)
        else:
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    seconds = time.perf_counter() - start
    print()
    _print_formula(model)
    _print_symbols(model)
    if len(y) > 1:  # R² needs at least two rows
        print(f"Training R²: {model.score(X, y):.6f}")
    if held_out is not None and len(y_held_out) > 1:
        print(f"Held-out R²: {model.score(held_out, y_held_out):.6f}  "
              f"({len(y_held_out)} rows, --validation {args.validation:g})")
    _print_run(model, seconds)
    _print_front(model)
    joblib.dump(model, args.out)
    print(f"\nSaved the model to {args.out}; apply it with: cadsr predict {args.out} NEW_DATA.csv")
    if args.plots:
        _write_plots(model, X, y, Path(args.plots))
    return 0


def _checkpoint_path(args) -> str | None:
    """The checkpoint file: ``--resume`` one that must exist, or ``--checkpoint`` any."""
    if args.resume is not None and args.checkpoint is not None and args.resume != args.checkpoint:
        raise UsageError("--resume and --checkpoint name different files; give one")
    if args.resume is not None:
        if not Path(args.resume).is_file():
            raise UsageError(f"--resume {args.resume}: no such checkpoint file")
        return args.resume
    if args.checkpoint is not None:
        _check_writable(args.checkpoint)
    return args.checkpoint


# --------------------------------------------------------- predict / show
def _load_model(path: str):
    import joblib

    from .estimator import CADSRRegressor

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path}: is a folder, not a model file")
    try:
        model = joblib.load(p)
    except ValueError as err:  # e.g. saved by an incompatible cadsr-sklearn version
        raise UsageError(f"{path}: {str(err).splitlines()[0]}") from None
    except ModuleNotFoundError as err:  # e.g. equations_ pickled as a pandas DataFrame
        raise UsageError(
            f"{path}: loading this model needs the module {err.name!r}, which is not installed"
        ) from None
    except Exception as err:  # noqa: BLE001 - any unpickling failure means a bad file
        raise UsageError(f"{path}: not a saved cadsr model ({type(err).__name__})") from None
    if not isinstance(model, CADSRRegressor) or not hasattr(model, "best_expression_"):
        raise UsageError(f"{path}: not a fitted CADSRRegressor (found {type(model).__name__})")
    return model


def _cmd_predict(args) -> int:
    model = _load_model(args.model)
    table = df = _read_table(args.data)
    names = [str(n) for n in getattr(model, "feature_names_in_", [])]
    if names:
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise UsageError(
                f"{args.data}: missing column(s) {missing} that the model was fitted on"
            )
        df = df[names]
    elif df.shape[1] != model.n_features_in_:
        raise UsageError(
            f"{args.data}: {df.shape[1]} columns, but the model was fitted on "
            f"{model.n_features_in_} unnamed features"
        )
    df = _numeric(df, args.data)
    if args.out:
        _check_writable(args.out)
    try:
        pred = model.predict(df if names else df.to_numpy(dtype=np.float64), index=args.index)
    except (ValueError, IndexError) as err:
        raise UsageError(str(err).splitlines()[0]) from None
    import pandas as pd

    if args.keep_columns:
        if "prediction" in table.columns:
            raise UsageError(f"{args.data}: already has a column 'prediction'")
        out = table.assign(prediction=pred)
    else:
        out = pd.DataFrame({"prediction": pred})
    n_nan = int(np.isnan(pred).sum())
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"Wrote {len(out)} predictions to {args.out}")
    else:
        out.to_csv(sys.stdout, index=False)
    if n_nan:
        print(
            f"cadsr: note: {n_nan} prediction(s) are NaN: the formula is undefined there "
            "(e.g. a log of a negative number outside the training domain)",
            file=sys.stderr,
        )
    return 0


def _cmd_show(args) -> int:
    model = _load_model(args.model)
    names = [str(n) for n in getattr(model, "feature_names_in_", [])] or [
        f"x{i}" for i in range(model.n_features_in_)
    ]
    _print_formula(model)
    _print_run(model)
    print(f"Features:   {', '.join(names)}")
    _print_symbols(model)
    print(
        f"Operators:  binary {' '.join(model.binary_operators) or '-'}; "
        f"unary {' '.join(model.unary_operators) or '-'}"
    )
    print(
        f"Settings:   max_time={model.max_time}, batch_size={model.batch_size}, "
        f"reward={model.reward}, random_state={model.random_state}"
    )
    print(f"Saved with: cadsr-sklearn {getattr(model, 'version_', '?')}")
    _print_front(model)
    return 0


# ------------------------------------------------------------------- main
def _positive(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not x > 0 or not np.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {value!r}")
    return x


def _seconds(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 <= x < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {value!r}")
    return x


def _fraction(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {value!r}")
    return x


def _positive_int(value: str) -> int:
    try:
        x = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if x < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value!r}")
    return x


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
        epilog="Model files are pickles: only load (predict, show) files you trust.",
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
        metavar="MODEL.joblib",
        help="also save the fitted model (for cadsr show / predict)",
    )
    _add_hidden(demo)
    demo.set_defaults(run=_cmd_demo)

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
        "tanh abs); give none for no unary operators",
    )
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--device", default="auto", help="auto (default), cpu, cuda or cuda:N")
    fit.add_argument(
        "--out", default="model.joblib", help="where to save the model (default model.joblib)"
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
    fit.set_defaults(run=_cmd_fit)

    pred = sub.add_parser(
        "predict",
        help="apply a saved model to a CSV file",
        description="Evaluate a saved model's formula on the rows of a CSV file.",
    )
    pred.add_argument("model", metavar="MODEL.joblib")
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
    pred.set_defaults(run=_cmd_predict)

    show = sub.add_parser(
        "show", help="print a saved model's formula, Pareto front and run summary"
    )
    show.add_argument("model", metavar="MODEL.joblib")
    show.set_defaults(run=_cmd_show)

    from .benchmarks.command import add_bench_parser

    add_bench_parser(sub)
    return parser


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
