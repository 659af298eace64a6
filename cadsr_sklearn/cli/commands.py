"""What each sub-command does: ``demo``, ``fit``, ``predict``, ``show`` and ``report``.

Each handler takes the parsed options and returns the exit status; bad input
raises :class:`~cadsr_sklearn.user_input.UsageError`, which
:func:`cadsr_sklearn.cli.main` prints as one line with status 2. Everything a
search needs is checked before it starts (:mod:`.checks`, :mod:`.tables`).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ..front.fitted import column_names
from ..multioutput import outputs_of
from ..user_input import (UsageError, column_units, estimator_params, nested_constraints,
                          operator_complexity)
from .checks import check_device, check_operators, check_plot_folder, check_writable
from .demo import DEMO_BATCH_SIZE, in_names, matches_truth, pendulum_data
from .printing import (print_constants, print_formula, print_front, print_guesses, print_run,
                       print_symbols, write_plots)
from .tables import numeric, read_table

__all__ = ["cmd_demo", "cmd_fit", "cmd_predict", "cmd_show", "cmd_report"]


# -------------------------------------------------------------------- demo
def cmd_demo(args) -> int:
    """``cadsr demo``: fit the pendulum law and say whether it was recovered."""
    import sympy

    from ..estimator import CADSRRegressor

    device = check_device(args.device)
    if args.out:
        check_writable(args.out)
    if args.plots:
        check_plot_folder(args.plots)
    X, T_true, T = pendulum_data(seed=0)
    names = ["L", "g"]
    n_train = int(0.75 * len(X))
    print("CADSR demo: the period of a simple pendulum, T = 2*pi*sqrt(L/g)")
    print(
        f"  {len(X)} measurements of (L, g) -> T with 1% noise; {n_train} to train, "
        f"{len(X) - n_train} to test."
    )
    compile_kernels()
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
    model.fit(_frame(X[:n_train], names), _series(T[:n_train], "T"))
    seconds = time.perf_counter() - start
    output = outputs_of(model)[0]  # a 1-D target: one output
    print()
    print_formula(output)
    r2 = model.score(_frame(X[n_train:], names), T_true[n_train:])
    print(f"Test R²:    {r2:.6f}  (on {len(X) - n_train} held-out rows, noise-free targets)")
    print_run(output, seconds)
    print_front(output)

    L, g = sympy.symbols("L g")
    truth = 2 * sympy.pi * sympy.sqrt(L / g)
    # a cheap numerical gate first: simplify() on a wrong formula can take long
    with np.errstate(all="ignore"):
        close = np.max(np.abs(model.predict(_frame(X[n_train:], names)) / T_true[n_train:] - 1.0))
    found = bool(close <= 0.02) and matches_truth(in_names(model.expression_, names), truth)
    print("\nTruth:      T = 2*pi*sqrt(L/g) = 6.2832*sqrt(L/g)")
    if found:
        print("Recovered:  yes, the same formula up to rounding of the fitted constants.")
    else:
        print("Recovered:  no. Try a longer search (--max-time 300) or another --seed.")
    if args.out:
        _save_model(model, args.out)
        print(f"Saved the model to {args.out} ({_kind_of_file(args.out)})")
    if args.plots:
        write_plots(
            model,
            _frame(X[n_train:], names),
            T_true[n_train:],
            Path(args.plots),
            y_train=T[:n_train],
            data_name=f"the {len(X) - n_train} held-out rows (noise-free)",
        )
    return 0


def _frame(X, names):
    try:
        import pandas as pd
    except ImportError:  # pandas is optional for the demo: fall back to x0, x1
        return X
    return pd.DataFrame(X, columns=names)


def _series(y, name):
    """``y`` named ``name``, which the model then calls its target (without pandas, y)."""
    try:
        import pandas as pd
    except ImportError:
        return y
    return pd.Series(y, name=name)


def compile_kernels() -> None:
    """Compile the numerical kernels before the search's clock starts, saying so when it
    took a while: the first run on a machine compiles them, once (they are cached on disk)."""
    from ..search.session import compile_kernels as compile_all

    start = time.perf_counter()
    compile_all()
    took = time.perf_counter() - start
    if took >= 1.0:
        print(f"  Compiled the numerical kernels in {took:.0f} s (once per machine; not part "
              "of the search's time).")


def _hidden_params(args) -> dict:
    params = {}
    if getattr(args, "epochs", None) is not None:
        params["n_epochs"] = args.epochs
    if getattr(args, "batch_size", None) is not None:
        params["batch_size"] = args.batch_size
    return params


# --------------------------------------------------------------------- fit
def cmd_fit(args) -> int:
    """``cadsr fit``: search a formula for a column of a CSV file and save the model."""
    args.data = _data_path(args)
    df = read_table(args.data)
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
    df = numeric(df, args.data)
    # y a named Series: the model keeps the target's name (target_names_) for what it shows
    X, y = df.drop(columns=[args.target]), df[args.target].astype(np.float64)
    if X.shape[1] == 0:
        raise UsageError(f"{args.data}: no feature columns besides the target {args.target!r}")
    check_operators(args.binary, args.unary)
    device = check_device(args.device)
    check_writable(args.out)
    if args.plots:
        check_plot_folder(args.plots)
    checkpoint = _checkpoint_path(args)

    from ..estimator import PAPER_SETTINGS, CADSRRegressor, SmallDataWarning

    params = dict(PAPER_SETTINGS) if args.paper else {}
    params.update(max_time=args.max_time, random_state=args.seed, device=args.device, verbose=1)
    if checkpoint is not None:
        params.update(checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
    for option, name in (("n_epochs", "n_epochs"), ("batch_size", "batch_size"),
                         ("patience", "patience"), ("n_jobs", "n_jobs"),
                         ("islands", "n_islands"), ("scheduler", "scheduler")):
        if getattr(args, option) is not None:
            params[name] = getattr(args, option)
    if args.binary is not None:
        params["binary_operators"] = tuple(args.binary)
    if args.unary is not None:
        params["unary_operators"] = tuple(args.unary)
    if args.require is not None:
        params["required_features"] = list(args.require)
    if args.nested is not None:
        params["nested_constraints"] = nested_constraints(args.nested)
    if args.complexity is not None:
        params["operator_complexity"] = operator_complexity(args.complexity)
    if args.guesses:
        params["guesses"] = list(args.guesses)
    params.update(estimator_params(args.param))  # last: --param overrides the options above
    units = {} if args.units is None else dict(zip(
        ("X_units", "y_units"), column_units(args.units, list(X.columns), args.target)))
    held_out = None
    if args.validation is not None:
        X, held_out, y, y_held_out = _split(X, y, args.validation, args.seed)
    budget = params["max_time"]
    budget = f"up to {budget:g} s" if isinstance(budget, (int, float)) else "no time limit"
    compile_kernels()
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
            model.fit(X, y, **units)
    except (ValueError, TypeError) as err:  # what the estimator rejects that the checks missed
        raise UsageError(str(err).splitlines()[0]) from None
    for note in advice:  # the small-table advice, as a note rather than a Python warning
        if issubclass(note.category, SmallDataWarning):
            print(f"Note: {note.message}\n  (on the command line: --param max_constants=auto, "
                  "and --validation F to hold rows out)", file=sys.stderr)
        else:
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    seconds = time.perf_counter() - start
    output = outputs_of(model)[0]  # a 1-D target: one output
    print()
    print_formula(output)
    print_symbols(model)
    if len(y) > 1:  # R² needs at least two rows
        print(f"Training R²: {model.score(X, y):.6f}")
    if held_out is not None and len(y_held_out) > 1:
        print(f"Held-out R²: {model.score(held_out, y_held_out):.6f}  "
              f"({len(y_held_out)} rows, --validation {args.validation:g})")
    print_run(output, seconds)
    print_front(output)
    print_guesses(output)
    _save_model(model, args.out)
    print(f"\nSaved the model to {args.out} ({_kind_of_file(args.out)}); apply it with: "
          f"cadsr predict {args.out} NEW_DATA.csv")
    if args.plots:  # on the held-out rows when there are some, saying which rows they are
        if held_out is not None and len(y_held_out) > 0:
            write_plots(model, held_out, y_held_out, Path(args.plots), y_train=y,
                        data_name=f"the {len(y_held_out)} held-out rows (--validation "
                                  f"{args.validation:g})")
        else:
            write_plots(model, X, y, Path(args.plots),
                        data_name=f"the training data ({len(y)} rows)")
    return 0


def _data_path(args) -> str:
    """The data file, wherever on the line it was given.

    ``--unary`` and ``--binary`` take every word after them, so ``cadsr fit
    --unary sin cos data.csv`` hands the file to ``--unary``: a word there that is
    no operator but an existing file is taken as the data.
    """
    from ..expressions.library import BINARY_OPERATORS, UNARY_OPERATORS

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


def _checkpoint_path(args) -> str | None:
    """The checkpoint file: ``--resume`` one that must exist, or ``--checkpoint`` any."""
    if args.resume is not None and args.checkpoint is not None and args.resume != args.checkpoint:
        raise UsageError("--resume and --checkpoint name different files; give one")
    if args.resume is not None:
        if not Path(args.resume).is_file():
            raise UsageError(f"--resume {args.resume}: no such checkpoint file")
        return args.resume
    if args.checkpoint is not None:
        check_writable(args.checkpoint)
    return args.checkpoint


def _split(X, y, fraction: float, seed: int):
    """(X_train, X_held_out, y_train, y_held_out): a seeded split, ``fraction`` held out."""
    from sklearn.model_selection import train_test_split

    n_held_out = math.ceil(fraction * len(y))  # as train_test_split counts
    if len(y) - n_held_out < 1:
        raise UsageError(f"--validation {fraction:g} leaves no training rows of {len(y)}")
    return train_test_split(X, y, test_size=fraction, random_state=seed)


# ------------------------------------------------------ predict / show / report
def cmd_predict(args) -> int:
    """``cadsr predict``: a saved model's predictions on the rows of a CSV file."""
    model = _load_model(args.model)
    table = read_table(args.data)
    X = _model_inputs(model, table, args.data)
    if args.out:
        check_writable(args.out)
    try:
        pred = model.predict(X, index=args.index)
    except (ValueError, IndexError) as err:
        raise UsageError(str(err).splitlines()[0]) from None
    import pandas as pd

    names = _prediction_columns(model, table.columns if args.keep_columns else ())
    predicted = pd.DataFrame(np.reshape(pred, (len(pred), -1)), columns=names,
                             index=table.index)
    out = pd.concat([table, predicted], axis=1) if args.keep_columns else predicted
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


def _prediction_columns(model, taken) -> list[str]:
    """The output columns of ``cadsr predict``: the targets' names (``target_names_``).

    Where a name is already a column of the input (its true values, kept with
    ``--keep-columns``), ``NAME_predicted``.
    """
    names = [str(n) for n in model.target_names_]
    taken = {str(c) for c in taken}
    names = [f"{n}_predicted" if n in taken else n for n in names]
    clash = sorted(taken.intersection(names))
    if clash:
        raise UsageError(f"the input already has column(s) {clash} for the predictions")
    return names


def cmd_show(args) -> int:
    """``cadsr show``: a saved model's formula, run, features, settings and Pareto front;
    for a model of several outputs, the settings once and then each output's."""
    model = _load_model(args.model)
    outputs = outputs_of(model)
    if len(outputs) == 1:
        output, = outputs
        print_formula(output)
        print_constants(output)
        print_run(output)
        _print_settings(model)
        print_front(output)
        print_guesses(output)
        return 0
    _print_settings(model)
    for j, output in enumerate(outputs):
        print(f"\n=== Output {j}: {output.target} ===\n")
        print_formula(output)
        print_constants(output)
        print_run(output)
        print_front(output)
        print_guesses(output)
    return 0


def _print_settings(model) -> None:
    """The features, their symbols, the operators and the main settings of a saved model."""
    print(f"Features:   {', '.join(column_names(model))}")
    print_symbols(model)
    binary = " ".join(getattr(op, "name", op) for op in model.binary_operators)
    unary = " ".join(getattr(op, "name", op) for op in model.unary_operators)
    print(f"Operators:  binary {binary or '-'}; unary {unary or '-'}")
    print(
        f"Settings:   max_time={model.max_time}, batch_size={model.batch_size}, "
        f"reward={model.reward}, random_state={model.random_state}"
    )
    print(f"Saved with: cadsr-sklearn {model.version_}")


def cmd_report(args) -> int:
    """``cadsr report``: a saved model's report, one self-contained HTML file."""
    from ..reporting.html_report import write_report

    model = _load_model(args.model)
    check_writable(args.output)
    if (args.data is None) != (args.target is None):
        raise UsageError("--data and --target go together: the table, and its column of "
                         "true values to plot the predictions against")
    X = y = None
    if args.data is not None:
        table = read_table(args.data)
        for name in args.target:
            if name not in table.columns:
                raise UsageError(f"{args.data}: no column {name!r}; the columns are "
                                 f"{list(table.columns)}")
        n_outputs = model.n_outputs_
        if len(args.target) != n_outputs:
            raise UsageError(f"--target: the model has {n_outputs} output(s), "
                             f"got {len(args.target)} column(s)")
        X = _model_inputs(model, table.drop(columns=args.target), args.data)
        y = numeric(table[args.target], args.data)
        y = y.iloc[:, 0] if n_outputs == 1 else y  # a Series: it names the target
    write_report(model, args.output, X, y,
                 data_name=None if args.data is None else Path(args.data).name)
    print(f"Wrote the report to {args.output}")
    return 0


def _model_inputs(model, table, path: str):
    """The columns of ``table`` the model was fitted on, in its order, checked numeric.

    A model fitted on named columns takes them by name (others are ignored);
    one fitted on an array takes every column, so their number must match.
    """
    names = [str(n) for n in getattr(model, "feature_names_in_", [])]
    if names:
        missing = [n for n in names if n not in table.columns]
        if missing:
            raise UsageError(f"{path}: missing column(s) {missing} that the model was fitted on")
        return numeric(table[names], path)
    if table.shape[1] != model.n_features_in_:
        raise UsageError(
            f"{path}: {table.shape[1]} columns, but the model was fitted on "
            f"{model.n_features_in_} unnamed features"
        )
    return numeric(table, path).to_numpy(dtype=np.float64)


#: The names ``--out`` saves a pickle under; any other is a formula file.
PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle")


def _save_model(model, path: str) -> None:
    """Save ``model`` to ``path``: a joblib pickle when the name ends in ``.joblib``,
    ``.pkl`` or ``.pickle`` (the whole estimator, for Python and a later fit to continue),
    else a formula file (JSON that is data: the default, to show, apply and share)."""
    if str(path).lower().endswith(PICKLE_SUFFIXES):
        import joblib

        joblib.dump(model, path)
    else:
        model.save_formula(path)


def _kind_of_file(path: str) -> str:
    """What ``_save_model`` writes to ``path``, in words."""
    if str(path).lower().endswith(PICKLE_SUFFIXES):
        return "a pickle of the whole estimator: it runs code when loaded, load it only yourself"
    return "a formula file: JSON that is data, to share"


def _file_kind(path: Path) -> str:
    """What ``path`` holds, from its first bytes: "formula" (JSON), "checkpoint" or
    "pickle" (anything else: joblib tells a pickle from junk)."""
    from ..search.checkpoint import HEADER

    with open(path, "rb") as file:
        start = file.read(64)
    if start.lstrip()[:1] == b"{":
        return "formula"
    return "checkpoint" if start.startswith(HEADER) else "pickle"


def _load_model(path: str):
    """The fitted CADSRRegressor saved in ``path``: a formula file (read as data) or a joblib
    pickle (which runs the code it holds: the user's own, trusted), told apart by their
    first bytes, whatever the name; any other file is a usage error."""
    import joblib

    from ..estimator import CADSRRegressor

    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path}: is a folder, not a model file")
    kind = _file_kind(p)
    if kind == "formula":
        try:
            return CADSRRegressor.load_formula(p)
        except ValueError as err:
            raise UsageError(str(err).splitlines()[0]) from None
    if kind == "checkpoint":
        raise UsageError(f"{path}: a checkpoint of a search, not a model: go on with it with "
                         f"cadsr fit DATA.csv --target COLUMN --resume {path}")
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
    if not isinstance(model, CADSRRegressor) or "selections_" not in vars(model):
        raise UsageError(f"{path}: not a fitted CADSRRegressor (found {type(model).__name__})")
    return model
