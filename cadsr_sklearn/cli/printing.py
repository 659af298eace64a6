"""What the commands show of a fitted model: formula, symbols, run, Pareto front, plots.

``cadsr demo``, ``fit`` and ``show`` print the same blocks, in this wording, so
a model reads the same whichever command shows it. The blocks about a formula
take one output of the model (:func:`~cadsr_sklearn.multioutput.outputs_of`:
its estimator and its fitted front), so a model of several outputs is shown
one output at a time.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..multioutput import Output

__all__ = ["print_formula", "print_constants", "print_symbols", "print_run", "print_front",
           "print_guesses", "write_plots"]


def _pretty(expr) -> str:
    import sympy

    unicode = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "") in (
        "utf8",
        "utf16",
    )
    return sympy.pretty(expr, use_unicode=unicode)


def print_symbols(model) -> None:
    """Which symbol stands for which column, where a column name is not one."""
    symbols = getattr(model, "symbol_names_", None)
    names = getattr(model, "feature_names_in_", None)
    if symbols is None or names is None:
        return
    renamed = [f"{s} = {str(n)!r}" for s, n in zip(symbols, names) if s != str(n)]
    if renamed:
        print(f"Symbols:    {', '.join(renamed)}  (column names that cannot be symbols)")


def print_formula(output: Output) -> None:
    """The chosen formula, drawn and in LaTeX, and its complexity."""
    from ..expressions.notation import DISPLAY_DIGITS

    front = output.front
    print("Discovered formula:\n")
    print(_pretty(front.sympy(precision=DISPLAY_DIGITS)))
    print(f"\nLaTeX:      {front.latex()}")
    nodes = "nodes by operator_complexity" if output.estimator.operator_complexity else "nodes"
    print(f"Complexity: {front.chosen.expression.complexity}  (k = {nodes} + fitted constants)")
    if front.units() is not None:
        print(f"Units:      {front.units()}")


def print_constants(output: Output) -> None:
    """The chosen formula's constants, the rows of ``constants_``: each number the formula
    shows with its standard error and 95 % interval, then those fixed to simple numbers
    with the value, standard error and interval the fit gave them before, and the gap to
    the nearest rival simple number that standard error was judged against."""
    from ..front.rows import constant_rows

    rows = constant_rows(output.front.chosen)
    if not rows:
        print("Constants:  none")
        return
    print("\nConstants of the chosen formula (constants_): c0, c1, … in the order it shows them;"
          "\ns0, s1, … fixed to simple numbers (no parameters), with what the fit gave before"
          "\nand the gap to the nearest rival number, which its standard error must be small"
          "\nbeside:")
    print(f"  {'name':<6}{'as shown':<12}{'value':>12}  {'std. error':>10}  95 % interval")
    for r in rows:
        if r["fixed"]:
            error = "fixed"
            interval = ("" if math.isnan(r["fitted_value"]) else f"fitted "
                        f"{_interval(r['fitted_value'], r['fitted_ci_low'], r['fitted_ci_high'])}"
                        f" ± {r['fitted_std_error']:.3g}")
            interval += "" if math.isnan(r["gap"]) else f", gap {r['gap']:.3g}"
        else:
            error, interval = f"{r['std_error']:.3g}", _interval(None, r["ci_low"], r["ci_high"])
        print(f"  {r['name']:<6}{r['shown']:<12}{r['value']:>12.6g}  {error:>10}  {interval}")


def _interval(value: float | None, low: float, high: float) -> str:
    """``[low, high]`` to six digits (as the HTML report shows them), ``value`` before it."""
    ends = f"[{low:.6g}, {high:.6g}]"
    return ends if value is None else f"{value:.6g} {ends}"


def print_front(output: Output) -> None:
    """The Pareto front, one row per formula, the chosen one marked."""
    front = output.front
    rows = sorted(front.marked, key=lambda r: r.complexity)
    with_r2 = front.r2(0.0) is not None
    print("\nPareto front (* = chosen by model_selection; training loss = MSE; "
          "row: cadsr predict --index ROW):")
    header = "  row    k  train MSE" + ("    train R²" if with_r2 else "") + "  formula"
    print(header)
    for index, row in enumerate(rows):
        mark = "*" if row.selected else " "
        r2 = f"  {front.r2(row.loss):10.6f}" if with_r2 else ""
        print(f"  {index:3d} {mark} {row.complexity:3d}  {row.loss:.3e}{r2}  {row.formula}")


def print_guesses(output: Output) -> None:
    """The formulas of ``--guess`` fitted, and whether the chosen formula beats each on
    the criterion (nothing without guesses)."""
    from ..front.rows import verdict

    front = output.front
    if not front.guesses:
        return
    chosen = front.chosen
    with_r2 = front.r2(0.0) is not None
    print("\nYour guesses (--guess), fitted and scored as the search's formulas:")
    print("  guess    k  train MSE" + ("    train R²" if with_r2 else "")
          + "  formula (as written)")
    for index, guess in enumerate(front.guesses):
        r2 = f"  {front.r2(guess.loss):10.6f}" if with_r2 else ""
        print(f"  {index:5d} {guess.complexity:4d}  {guess.loss:.3e}{r2}  {guess.formula}  "
              f"({guess.guess})")
        print(f"        {verdict(chosen, guess)}")


def print_run(output: Output, seconds: float | None = None) -> None:
    """Epochs, expressions scored, time, device and why the search stopped.

    ``seconds`` is the time the command measured; without it (``cadsr show``),
    the time of the last epoch in the output's history.
    """
    model = output.estimator  # its search's record
    took = (
        seconds if seconds is not None else (model.history_[-1]["time"] if model.history_ else 0.0)
    )
    n_islands = getattr(model, "n_islands", 1)
    epochs = (f"{model.n_epochs_} epochs" if n_islands == 1 else
              f"{model.n_epochs_} epochs on each of {n_islands} islands")
    print(
        f"\nSearch: {epochs}, {model.n_evaluations_} expressions scored, "
        f"{took:.1f} s on {model.device_}, stopped by: {model.stop_reason_}"
    )
    if model.interrupted_:
        print("(interrupted with Ctrl-C: the best formula found so far is kept)")
    reduced = getattr(model, "reduction_", None)
    if reduced is not None:
        sentence = reduced.sentence(model.found_by_)
        print(sentence[0].upper() + sentence[1:])


def write_plots(model, X, y, folder: Path, y_train=None, data_name: str | None = None) -> None:
    """The PNG plots of :func:`.plotting.save_all` in ``folder``, each path printed.

    ``data_name`` says in the predicted-vs-true plot which rows ``X, y`` are (the
    training data, held-out rows). Without matplotlib, one line saying how to
    install it instead.
    """
    from ..reporting import plotting

    try:
        paths = plotting.save_all(model, X, y, folder, y_train=y_train, data_name=data_name)
    except ImportError:
        print("\n(matplotlib is not installed, so no plots: pip install 'cadsr-sklearn[plot]')")
        return
    print()
    for name, path in paths.items():
        print(f"Wrote {name.replace('_', ' ')} plot: {path}")
