"""The ``cadsr`` command: ``demo``, ``fit``, ``predict`` and ``show``.

Bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["main"]


class UsageError(Exception):
    """A problem with the user's input: reported in one line, exit status 2."""


# ------------------------------------------------------------------- demo
def pendulum_data(n: int = 300, noise: float = 0.01, seed: int = 0):
    """Period of a simple pendulum, T = 2π·sqrt(L/g), on several planets.

    L (m) in [0.1, 2], g (m/s²) in [1.6, 25] (the Moon to Jupiter); Gaussian noise
    of ``noise`` times the RMS of T on the training targets.
    """
    rng = np.random.default_rng(seed)
    L = rng.uniform(0.1, 2.0, n)
    g = rng.uniform(1.6, 25.0, n)
    T = 2 * np.pi * np.sqrt(L / g)
    X = np.column_stack([L, g])
    return X, T, T + rng.normal(0, noise * np.sqrt(np.mean(T**2)), n)


def _cmd_demo(args) -> int:
    import sympy

    from .estimator import CADSRRegressor

    X, T_true, T = pendulum_data(seed=args.seed)
    n_train = int(0.75 * len(X))
    print("CADSR demo: the period of a simple pendulum, T = 2*pi*sqrt(L/g)")
    print(f"  {len(X)} measurements of (L, g) -> T with 1% noise; {n_train} to train, the rest to test.")
    print(f"  Searching for up to {args.max_time:g} s …\n")
    model = CADSRRegressor(
        max_time=args.max_time, random_state=args.seed, verbose=1, device=args.device
    )
    model.fit(_frame(X[:n_train], ["L", "g"]), T[:n_train])
    _report(model, X[n_train:], T_true[n_train:], ["L", "g"])
    truth = 2 * sympy.pi * sympy.sqrt(sympy.Symbol("L") / sympy.Symbol("g"))
    print(f"\nTruth:   T = {truth}  (2*pi = {2 * np.pi:.4f})")
    if args.plots:
        _write_plots(model, _frame(X[n_train:], ["L", "g"]), T_true[n_train:], Path(args.plots))
    return 0


def _frame(X, names):
    try:
        import pandas as pd
    except ImportError:
        return X
    return pd.DataFrame(X, columns=names)


def _report(model, X_test, y_test, names) -> None:
    import sympy

    from .estimator import CADSRRegressor  # noqa: F401  (for type readers)

    expr = model.expression_
    print("\nDiscovered formula:")
    print(sympy.pretty(sympy.Float(1) * expr if expr.is_Number else expr.evalf(4)))
    print(f"LaTeX:   {model.latex()}")
    if X_test is not None:
        print(f"Test R²: {model.score(_frame(X_test, names), y_test):.6f}")
    print(f"Complexity k (nodes + constants): {model.best_expression_.complexity}")
    print(f"Epochs: {model.n_epochs_}, expressions scored: {model.n_evaluations_}, stop: {model.stop_reason_}")
    print("\nPareto front (complexity, training MSE, formula):")
    for row in _rows(model.equations_):
        mark = "*" if row["selected"] else " "
        print(f" {mark} {row['complexity']:3d}  {row['loss']:.4e}  {row['equation'].evalf(4)}")


def _rows(equations):
    if isinstance(equations, list):
        return equations
    return equations.to_dict("records")


def _write_plots(model, X_test, y_test, folder: Path) -> None:
    try:
        from . import plotting
    except ImportError:
        print("(matplotlib is not installed: no plots; pip install 'cadsr-sklearn[plot]')")
        return
    folder.mkdir(parents=True, exist_ok=True)
    for name, path in plotting.save_all(model, X_test, y_test, folder).items():
        print(f"Wrote {name}: {path}")


# ------------------------------------------------------------ fit / predict
def _read_table(path: str):
    try:
        import pandas as pd
    except ImportError as err:  # pragma: no cover
        raise UsageError("reading CSV files needs pandas: pip install 'cadsr-sklearn[pandas]'") from err
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    try:
        df = pd.read_csv(p, sep=None, engine="python")
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot be read as CSV ({err})") from None
    if df.empty:
        raise UsageError(f"{path}: the file has no data rows")
    return df


def _numeric(df, path: str):
    bad = [c for c in df.columns if not np.issubdtype(df[c].dtype, np.number)]
    if bad:
        raise UsageError(f"{path}: non-numeric column(s) {bad}; encode or drop them")
    values = df.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(values)):
        rows = np.flatnonzero(~np.all(np.isfinite(values), axis=1))[:5]
        raise UsageError(f"{path}: NaN or infinite values (rows {list(rows)}…); clean or drop them")
    return df


def _cmd_fit(args) -> int:
    import joblib

    from .estimator import CADSRRegressor

    df = _read_table(args.data)
    if args.target not in df.columns:
        raise UsageError(f"{args.data}: no column {args.target!r}; columns are {list(df.columns)}")
    df = _numeric(df, args.data)
    X, y = df.drop(columns=[args.target]), df[args.target].to_numpy()
    if X.shape[1] == 0:
        raise UsageError(f"{args.data}: no feature columns besides the target {args.target!r}")
    params = dict(max_time=args.max_time, random_state=args.seed, device=args.device, verbose=1)
    if args.binary is not None:
        params["binary_operators"] = tuple(args.binary)
    if args.unary is not None:
        params["unary_operators"] = tuple(args.unary)
    if args.epochs is not None:
        params["n_epochs"] = args.epochs
    try:
        model = CADSRRegressor(**params)
        model.fit(X, y)
    except ValueError as err:
        raise UsageError(str(err).splitlines()[0]) from None
    _report(model, None, None, list(X.columns))
    if model.interrupted_:
        print("(interrupted: kept the best formula found so far)")
    joblib.dump(model, args.out)
    print(f"\nSaved the model to {args.out}")
    return 0


def _load_model(path: str):
    import joblib

    if not Path(path).exists():
        raise UsageError(f"{path}: no such file")
    try:
        return joblib.load(path)
    except ValueError as err:
        raise UsageError(f"{path}: {err}") from None
    except Exception as err:  # noqa: BLE001 - any unpickling failure is a bad file
        raise UsageError(f"{path}: not a saved cadsr model ({type(err).__name__})") from None


def _cmd_predict(args) -> int:
    model = _load_model(args.model)
    df = _numeric(_read_table(args.data), args.data)
    names = [str(n) for n in getattr(model, "feature_names_in_", [])]
    if names:
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise UsageError(f"{args.data}: missing column(s) {missing} the model was fitted on")
        X = df[names]
    else:
        X = df.to_numpy()
    try:
        pred = model.predict(X)
    except ValueError as err:
        raise UsageError(str(err).splitlines()[0]) from None
    import pandas as pd

    out = pd.DataFrame({"prediction": pred})
    if args.out:
        out.to_csv(args.out, index=False)
        print(f"Wrote {len(out)} predictions to {args.out}")
    else:
        out.to_csv(sys.stdout, index=False)
    return 0


def _cmd_show(args) -> int:
    model = _load_model(args.model)
    _report(model, None, None, None)
    return 0


# ------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cadsr", description="Symbolic regression with CADSR.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="find the pendulum law on a built-in dataset")
    demo.add_argument("--max-time", type=float, default=60.0, help="search budget in seconds")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--device", default="auto")
    demo.add_argument("--plots", default="cadsr-demo-plots", help="folder for PNG plots ('' for none)")
    demo.set_defaults(run=_cmd_demo)

    fit = sub.add_parser("fit", help="search a formula for a CSV file")
    fit.add_argument("data")
    fit.add_argument("--target", required=True, help="name of the column to predict")
    fit.add_argument("--max-time", type=float, default=300.0)
    fit.add_argument("--epochs", type=int, default=None)
    fit.add_argument("--binary", nargs="+", default=None, help="binary operators, e.g. add sub mul div pow")
    fit.add_argument("--unary", nargs="*", default=None, help="unary operators, e.g. sin cos log sqrt exp")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--device", default="auto")
    fit.add_argument("--out", default="model.joblib")
    fit.set_defaults(run=_cmd_fit)

    pred = sub.add_parser("predict", help="apply a saved model to a CSV file")
    pred.add_argument("model")
    pred.add_argument("data")
    pred.add_argument("--out", default=None)
    pred.set_defaults(run=_cmd_predict)

    show = sub.add_parser("show", help="print a saved model's formula and Pareto front")
    show.add_argument("model")
    show.set_defaults(run=_cmd_show)

    try:
        from .benchmarks.runner import add_bench_parser
    except ModuleNotFoundError as err:  # the runner is optional while it is being written
        if err.name != f"{__package__}.benchmarks.runner":
            raise
    else:
        add_bench_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as err:
        print(f"cadsr: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
