"""Plots of a fitted :class:`~cadsr_sklearn.CADSRRegressor`: Pareto front, learning curve,
predicted vs. true.

Each ``plot_*`` function takes a fitted estimator (and data where it needs
some) and returns a :class:`matplotlib.figure.Figure`; pass ``ax=`` to draw
into an axes of your own figure instead. :func:`save_all` writes all three as
PNG files. The figures are built without :mod:`matplotlib.pyplot`, so nothing
here touches pyplot's global state or needs a display.

Names are the user's: the target's (``target_names_``, e.g. a pandas Series'
name) in the axis labels and the title, and each column's own name (``a [AU]``,
as :meth:`~cadsr_sklearn.CADSRRegressor.latex` sets it) in the formulas, where
the formula's text has a symbol for it (``a_AU``).

Each plot reads the model's one output through its fitted front
(:class:`~cadsr_sklearn.front.fitted.FittedFront`,
:func:`~cadsr_sklearn.multioutput.outputs_of`); a model of several outputs is
plotted one output at a time (``model.estimators_[j]``).

matplotlib is optional (``pip install 'cadsr-sklearn[plot]'``); it is imported
on first use, so ``import cadsr_sklearn.reporting.plotting`` always works and a missing
matplotlib is reported when a plot is requested.

Example
-------
>>> from cadsr_sklearn import plotting                      # doctest: +SKIP
>>> fig = plotting.plot_pareto_front(model)                 # doctest: +SKIP
>>> fig.savefig("front.png", dpi=150)                       # doctest: +SKIP
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..expressions.notation import labelled_text, r2_from_loss, round_floats, shortened

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..front.fitted import FittedFront
    from ..multioutput import Output

__all__ = [
    "plot_pareto_front",
    "plot_learning_curve",
    "plot_predicted_vs_true",
    "save_all",
    "training_r2",
    "front_rows",
]

_INSTALL_HINT = (
    "cadsr_sklearn.reporting.plotting needs matplotlib, which is not installed. "
    "Install it with: pip install 'cadsr-sklearn[plot]'  (or: pip install matplotlib)"
)
_SELECTED = "#d62728"  # the chosen model, in every plot
_LINE = "#1f77b4"
_SECOND = "#2ca02c"


def _matplotlib():
    """Import matplotlib lazily, with an install hint instead of a bare ModuleNotFoundError."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(_INSTALL_HINT) from err
    return matplotlib, Figure


def _axes(ax: "Axes | None", figsize: tuple[float, float]) -> tuple["Figure", "Axes"]:
    if ax is not None:
        return ax.figure, ax
    _, Figure = _matplotlib()
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _output(model) -> Output:
    """The one output of the fitted ``model``; ValueError for a model of several."""
    from sklearn.utils.validation import check_is_fitted

    from ..multioutput import outputs_of  # the estimator's modules: imported by a fit already

    check_is_fitted(model, "selections_")
    outputs = outputs_of(model)
    if len(outputs) > 1:
        raise ValueError("This model has several outputs: plot one at a time, "
                         "e.g. model.estimators_[0].")
    return outputs[0]


def front_rows(model) -> list:
    """The Pareto front (:attr:`pareto_front_`: :class:`~cadsr_sklearn.front.rows.FrontRow`
    records) sorted by complexity; the chosen formula, :attr:`expression_`, is always
    one of the rows (``selected``)."""
    return _sorted_rows(_output(model).front)


def _sorted_rows(front: FittedFront) -> list:
    return sorted(front.marked, key=lambda r: r.complexity)


def _plain(text: str) -> str:
    """``text`` for a matplotlib label: a ``$`` in a user's name is no mathtext."""
    return text.replace("$", r"\$")


def _formula(front: FittedFront, row) -> str:
    """``row``'s readable formula, each column's own name where its symbol differs."""
    labels = front.labels
    if not labels:
        return row.formula
    return labelled_text(round_floats(row.equation, row.digits), labels)


def training_r2(model, y=None) -> np.ndarray | None:
    """Training R² of the best expression after each epoch, ``1 − best_loss / Var(y)``.

    Uses the estimator's ``y_variance_`` when it has one; otherwise the variance
    of ``y`` (pass the training targets). Returns None when neither is available.
    """
    return _training_r2(_output(model), y)


def _training_r2(output: Output, y=None) -> np.ndarray | None:
    variance = output.front.y_variance
    if variance is None and y is not None:
        variance = float(np.var(np.asarray(y, dtype=np.float64)))
    if variance is None or not variance > 0:
        return None
    loss = np.array([h["best_loss"] for h in output.estimator.history_], dtype=np.float64)
    return r2_from_loss(loss, variance)


# --------------------------------------------------------------------- pareto
def plot_pareto_front(
    model, ax: "Axes | None" = None, table: bool = True, max_rows: int = 12
) -> "Figure":
    """Complexity vs. training loss of the Pareto front, the chosen model marked.

    Parameters
    ----------
    model : CADSRRegressor
        A fitted estimator; its :attr:`equations_` are plotted.
    ax : matplotlib Axes, optional
        Draw into this axes instead of a new figure (without the table).
    table : bool, default=True
        Below the plot, list the formulas of the front (complexity, loss,
        formula), the chosen one in red.
    max_rows : int, default=12
        Most rows of that table: the chosen formula and the simplest others.

    Returns
    -------
    matplotlib.figure.Figure
    """
    front = _output(model).front
    rows = _sorted_rows(front)
    listed = _table_rows(rows, max_rows) if (table and ax is None) else []
    if ax is None:
        _, Figure = _matplotlib()
        fig = Figure(
            figsize=(8.0, 4.6 + (0.21 * (len(listed) + 1) + 0.3 if listed else 0.0)),
            layout="constrained",
        )
        if listed:
            ax, ax_table = fig.subplots(
                2, 1, gridspec_kw={"height_ratios": [4.4, 0.21 * (len(listed) + 1) + 0.3]}
            )
        else:
            ax = fig.add_subplot()
    else:
        fig = ax.figure

    k = np.array([r.complexity for r in rows], dtype=float)
    loss = np.array([r.loss for r in rows], dtype=float)
    positive = loss[np.isfinite(loss) & (loss > 0)]
    # an exact fit has loss 0, which a log axis cannot show: draw it on a floor
    floor = positive.min() / 10 if positive.size else 1e-12
    shown = np.where(loss > 0, loss, floor)

    ax.step(k, shown, where="post", color=_LINE, alpha=0.35, linewidth=1.2, zorder=1)
    ax.plot(k, shown, "o", color=_LINE, markersize=6, zorder=2, label="Pareto front")
    chosen = [i for i, r in enumerate(rows) if r.selected]
    for i in chosen:
        ax.plot(
            k[i],
            shown[i],
            marker="*",
            color=_SELECTED,
            markersize=17,
            linestyle="none",
            zorder=3,
            label="chosen (model_selection)",
        )
        ax.annotate(
            _plain(shortened(_formula(front, rows[i]), 45)),
            (k[i], shown[i]),
            xytext=(10, 10),
            textcoords="offset points",
            fontsize=9,
            color=_SELECTED,
            fontweight="bold",
            zorder=4,
            bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.8),
        )
    ax.set_yscale("log")
    ax.margins(x=0.04, y=0.15)
    ax.set_xlabel("complexity k (nodes + fitted constants)")
    ax.set_ylabel("training loss (MSE)")
    ax.set_title("Pareto front: complexity vs. training loss")
    ax.grid(True, which="major", alpha=0.3)
    if np.any(loss <= 0):
        ax.text(
            0.99,
            0.01,
            f"loss 0 (exact) drawn at {floor:.1e}",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="0.4",
        )
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)

    if listed:
        _draw_table(ax_table, [(row, _plain(_formula(front, row))) for row in listed])
    return fig


def _table_rows(rows: list[dict], max_rows: int) -> list[dict]:
    """The chosen row and the simplest others, at most ``max_rows``, by complexity."""
    chosen = [r for r in rows if r.selected]
    others = [r for r in rows if not r.selected]
    keep = chosen + others[: max(0, max_rows - len(chosen))]
    return sorted(keep, key=lambda r: r.complexity)


def _draw_table(ax: "Axes", rows: list[tuple]) -> None:
    """The rows (each a front row and its formula as shown) as a table under the plot."""
    ax.axis("off")
    n = len(rows) + 1
    step = 1.0 / n
    columns = (
        (0.0, "k", "right", 0.035),
        (0.05, "training MSE", "left", 0.0),
        (0.2, "formula", "left", 0.0),
    )
    for x, title, align, shift in columns:
        ax.text(
            x + shift,
            1.0 - 0.5 * step,
            title,
            ha=align,
            va="center",
            fontsize=8.5,
            fontweight="bold",
            transform=ax.transAxes,
            color="0.2",
        )
    for n_row, (row, formula) in enumerate(rows, start=1):
        y = 1.0 - (n_row + 0.5) * step
        style = dict(color=_SELECTED, fontweight="bold") if row.selected else dict(color="0.15")
        cells = (
            f"{row.complexity}",
            f"{row.loss:.3e}",
            shortened(formula, 85),
        )
        for (x, _, align, shift), text in zip(columns, cells, strict=True):
            ax.text(
                x + shift,
                y,
                text,
                ha=align,
                va="center",
                fontsize=8,
                family="monospace",
                transform=ax.transAxes,
                **style,
            )


# ------------------------------------------------------------- learning curve
def plot_learning_curve(model, y=None) -> "Figure":
    """Best reward and training R² of the best expression after each epoch.

    Parameters
    ----------
    model : CADSRRegressor
        A fitted estimator; its :attr:`history_` is plotted.
    y : array-like of shape (n_samples,), optional
        The training targets, for R² = 1 − best_loss / Var(y) when the
        estimator does not record ``y_variance_`` itself. Without either, only
        the reward panel is drawn.

    Returns
    -------
    matplotlib.figure.Figure
    """
    output = _output(model)
    _, Figure = _matplotlib()
    history = output.estimator.history_
    r2 = _training_r2(output, y)
    n_panels = 2 if r2 is not None else 1
    fig = Figure(figsize=(7.5, 2.6 + 2.2 * n_panels), layout="constrained")
    axes = fig.subplots(n_panels, 1, sharex=True, squeeze=False)[:, 0]
    if not history:
        axes[0].text(
            0.5,
            0.5,
            "no search ran (constant target)",
            ha="center",
            va="center",
            transform=axes[0].transAxes,
        )
        return fig
    epoch = np.array([h["epoch"] for h in history]) + 1
    best = np.array([h["best_criterion"] for h in history], dtype=float)  # what chose τ*
    # epochs where τ* changed: a new best expression was found
    improved = np.flatnonzero(np.r_[True, best[1:] != best[:-1]] & np.isfinite(best))

    ax = axes[0]
    ax.plot(
        epoch, best, color=_LINE, linewidth=2, drawstyle="steps-post", label="best so far"
    )
    ax.plot(
        epoch[improved], best[improved], "o", color=_LINE, markersize=4, label="new best expression"
    )
    estimator = output.estimator  # its parameters: the reward and the criterion
    judge = estimator.reward if estimator.criterion == "reward" else estimator.criterion
    ax.set_ylabel(f"τ* by {judge}")
    ax.set_title("Learning curve")
    ax.grid(True, alpha=0.3)
    ax.margins(y=0.12)
    ax.legend(loc="lower right", fontsize=8)

    if r2 is not None:
        ax = axes[1]
        ax.plot(
            epoch,
            r2,
            color=_SECOND,
            linewidth=2,
            drawstyle="steps-post",
            label=f"R² of the best expression (final {r2[-1]:.6f})",
        )
        ax.plot(epoch[improved], r2[improved], "o", color=_SECOND, markersize=4)
        finite = r2[np.isfinite(r2)]
        if finite.size:
            lo = max(float(finite.min()), -1.0)
            span = max(1.0 - lo, 1e-6)
            ax.set_ylim(lo - 0.15 * span, 1.0 + 0.1 * span)
            ax.axhline(1.0, color="0.6", linewidth=0.8, linestyle=":")
        ax.set_ylabel("training R²")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    axes[-1].set_xlabel("epoch")
    return fig


# ---------------------------------------------------------- predicted vs true
def plot_predicted_vs_true(
    model, X, y, ax: "Axes | None" = None, title: str | None = None,
    data_name: str | None = None,
) -> "Figure":
    """Predictions of the chosen formula against the true targets.

    Parameters
    ----------
    model : CADSRRegressor
        A fitted estimator.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    ax : matplotlib Axes, optional
    title : str, optional
        Defaults to the formula, ``T = …`` for a target named ``T``.
    data_name : str, optional
        What ``X, y`` are ("the training data", "the held-out rows"), said in
        the plot: predictions on the training data look better than the
        formula will do on new rows.

    Returns
    -------
    matplotlib.figure.Figure
    """
    front = _output(model).front
    fig, ax = _axes(ax, (5.6, 5.4))
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    pred = np.reshape(model.predict(X), -1)  # a column vector's one output too
    ok = np.isfinite(pred)
    # bigger dots for few rows: six planets drawn at the size that suits hundreds are specks
    size = float(np.clip(1500.0 / max(len(y), 1), 14.0, 60.0))
    ax.scatter(y[ok], pred[ok], s=size, alpha=0.65, color=_LINE, edgecolors="none",
               label="samples")
    values = np.concatenate([y, pred[ok]])
    lo, hi = float(values.min()), float(values.max())
    pad = 0.04 * (hi - lo if hi > lo else 1.0)
    ax.plot(
        [lo - pad, hi + pad],
        [lo - pad, hi + pad],
        color="0.3",
        linewidth=1,
        linestyle="--",
        label="predicted = true",
    )
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal", adjustable="box")
    target = front.target
    ax.set_xlabel(_plain(f"true {target}"))
    ax.set_ylabel(_plain(f"predicted {target}"))
    ax.grid(True, alpha=0.3)
    r2 = _r2(y[ok], pred[ok]) if ok.any() else float("nan")
    note = f"R² = {r2:.6f}   n = {ok.sum()}"
    if data_name is not None:
        note = _plain(f"on {data_name}") + "\n" + note
    if not ok.all():
        note += f"\n{(~ok).sum()} NaN predictions (outside the formula's domain) not shown"
    ax.text(
        0.03,
        0.97,
        note,
        transform=ax.transAxes,
        va="top",
        fontsize=8.5,
        bbox=dict(boxstyle="round", facecolor="white", edgecolor="0.8"),
    )
    formula = _formula(front, front.chosen)
    ax.set_title(title if title is not None else _plain(shortened(f"{target} = {formula}", 60)),
                 fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0:
        return math.nan
    return 1.0 - float(np.sum((y - pred) ** 2)) / ss_tot


# ---------------------------------------------------------------------- all
def save_all(
    model, X, y, folder: str | Path, dpi: int = 150, y_train: Any = None,
    data_name: str | None = None,
) -> dict[str, Path]:
    """Write the three plots as PNG files into ``folder`` (created if needed).

    Parameters
    ----------
    model : CADSRRegressor
        A fitted estimator.
    X, y : array-like
        Data for the predicted-vs-true plot (held-out data is the honest choice).
    folder : str or Path
    dpi : int, default=150
    y_train : array-like, optional
        Training targets for the learning curve's R², when the estimator does
        not record ``y_variance_``; defaults to ``y``.
    data_name : str, optional
        What ``X, y`` are, said in the predicted-vs-true plot (see
        :func:`plot_predicted_vs_true`).

    Returns
    -------
    dict of str to Path
        ``{"pareto_front": …, "learning_curve": …, "predicted_vs_true": …}``.
    """
    _matplotlib()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figures = {
        "pareto_front": plot_pareto_front(model),
        "learning_curve": plot_learning_curve(model, y if y_train is None else y_train),
        "predicted_vs_true": plot_predicted_vs_true(model, X, y, data_name=data_name),
    }
    paths = {}
    for name, fig in figures.items():
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=dpi)
        paths[name] = path
    return paths
