"""What a fit shows while it runs: a bar that never goes backwards and the formula
as people write it.

With ``verbose=1`` a single line::

    CADSR  42%|████▏     | [00:25<00:35], R2=0.99731 k=9  E = 2.001*m*v**2 + 0.5

The bar measures the budget used so far: the larger of the fraction of
``n_epochs`` run and the fraction of ``max_time`` spent, so it only moves
forward and ends at 100 % when a budget runs out (earlier on an exact fit or
``patience``). The best formula τ* is shown in infix, in the feature names, its
constants faithful (:mod:`cadsr_sklearn.expressions.notation`), the line cut to the
terminal's width, named after the target (a pandas Series' name; ``y``
without one). With ``verbose=2`` the current Pareto front is printed above
the bar as a small table every few seconds, as PySR users know it; in a Jupyter
notebook it is one HTML table, updated in place (IPython's display handles),
and left showing the last front when the fit ends or is interrupted.
"""

from __future__ import annotations

import shutil
import time

import numpy as np
import sympy

from ..expressions.notation import faithful_digits, html_text, r2_from_loss, round_floats, shortened

__all__ = ["Progress"]

FRONT_EVERY = 5.0
"""Seconds between two printings of the front table (``verbose=2``)."""

_DISPLAY_ROWS = 256  # training rows the displayed constants are checked on
_PERMILLE = 1000  # the bar counts thousandths of the budget
_BAR_FORMAT = "{desc}{percentage:3.0f}%|{bar:10}| [{elapsed}<{remaining}]{postfix}"
_BAR_WIDTH = len("CADSR 100%|          | [00:00<00:00], ")


class Progress:
    """The display of one fit; silent with ``verbose=0``.

    Parameters
    ----------
    n_epochs : int
        The epoch budget.
    max_time : float or None
        The time budget in seconds.
    verbose : int
        0 nothing, 1 the bar, 2 the bar and the front table.
    y_variance : float
        Variance of the training targets: training R² = 1 − loss / y_variance.
    feature_names : list of str
    X : ndarray of shape (n_samples, n_features)
        Training rows; the displayed constants are checked on a few of them.
    target : str, default="y"
        The target's name, left of the formula.
    """

    def __init__(self, n_epochs: int, max_time: float | None, verbose: int, y_variance: float,
                 feature_names: list[str], X: np.ndarray, *, target: str = "y"):
        self.n_epochs, self.max_time, self.verbose = n_epochs, max_time, verbose
        self.target = target
        self.y_variance = y_variance
        self.names = feature_names
        self.symbols = [sympy.Symbol(n) for n in feature_names]
        self.X = np.asarray(X, dtype=np.float64)[:_DISPLAY_ROWS]
        self.texts: dict = {}  # (key, constants) -> faithful infix text
        self.last_front = -np.inf
        self.bar = None
        self.live = _notebook_handle() if verbose >= 2 else None  # None outside Jupyter
        if verbose:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=_PERMILLE, desc="CADSR ", bar_format=_BAR_FORMAT, leave=True,
                            mininterval=0.5)

    def update(self, record, state) -> None:
        """After each epoch: the call's budget used, τ*, and (``verbose=2``) the front now
        and then. ``record`` is the epoch's :class:`~cadsr_sklearn.search.training.EpochRecord`,
        ``state`` the loop's :class:`~cadsr_sklearn.search.training.LoopState`."""
        if self.bar is None:
            return
        used = state.call.epochs / self.n_epochs
        if self.max_time is not None:
            used = max(used, record.time / self.max_time)
        done = min(_PERMILLE, int(used * _PERMILLE))
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)
        self.show(state.best, refresh=False)
        now = time.monotonic()
        if self.verbose >= 2 and now - self.last_front >= FRONT_EVERY:
            self.last_front = now
            self.show_front(state.hall_of_fame.pareto_front(keep=state.best))

    def show_front(self, front) -> None:
        """The front: in place in a notebook, else as text above the bar."""
        if self.live is not None:
            self.live.update(_HTML(self.front_html(front)))
        elif self.bar is not None:
            self.bar.write(self.front_table(front), file=self.bar.fp)  # on the bar's stream

    def show(self, best, refresh: bool = True) -> None:
        """τ* on the bar's line, cut to the terminal's width."""
        if self.bar is None or best is None:
            return
        text = (
            f"R2={self._r2(best.loss):.5f} k={best.complexity}  "
            f"{self.target} = {self.formula(best.expression)}"
        )
        room = shutil.get_terminal_size((80, 24)).columns - _BAR_WIDTH - 1
        self.bar.set_postfix_str(shortened(text, room), refresh=refresh)

    def front_table(self, front) -> str:
        """The front as a small table: complexity, training R², formula."""
        width = shutil.get_terminal_size((80, 24)).columns - 1
        lines = [f"{'k':>4}  {'R2':>8}  formula"]
        for cand in front:
            line = (
                f"{cand.complexity:>4}  {self._r2(cand.loss):8.5f}  "
                f"{self.formula(cand.expression)}"
            )
            lines.append(shortened(line, width))
        return "\n".join(lines)

    def front_html(self, front) -> str:
        """The front as an HTML table: complexity, training R², formula."""
        rows = "".join(
            f"<tr><td>{cand.complexity}</td><td>{self._r2(cand.loss):.5f}</td>"
            f"<td style='text-align:left'><code>{html_text(self.formula(cand.expression))}"
            "</code></td></tr>" for cand in front)
        return ("<table><thead><tr><th>k</th><th>R²</th><th style='text-align:left'>formula"
                f"</th></tr></thead><tbody>{rows}</tbody></table>")

    def formula(self, expression) -> str:
        """``expression`` in infix, its constants as few digits as stay faithful on the rows."""
        key = (expression.key, expression.constants.tobytes())
        text = self.texts.get(key)
        if text is None:
            formula = expression.to_sympy(self.names)
            with np.errstate(all="ignore"):
                reference = expression.evaluate(self.X)
            digits = faithful_digits(formula, self.symbols, self.X, reference)
            text = self.texts[key] = str(round_floats(formula, digits))
        return text

    def close(self, front=None) -> None:
        """End the display; in a notebook the table keeps ``front``, the fit's last one."""
        if self.live is not None and front is not None:
            self.show_front(front)
        if self.bar is not None:
            self.bar.close()

    def _r2(self, loss: float) -> float:
        return r2_from_loss(loss, self.y_variance)


class _HTML:
    """HTML for IPython's display (its ``_repr_html_`` protocol), without importing IPython."""

    def __init__(self, text: str):
        self.text = text

    def _repr_html_(self) -> str:
        return self.text


def _notebook_handle():
    """A display handle for a table updated in place, in a Jupyter kernel; else None."""
    import sys

    if "IPython" not in sys.modules:  # no IPython running: not a notebook
        return None
    from IPython import get_ipython
    from IPython.display import display

    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":  # a terminal IPython
        return None
    return display(_HTML("<i>CADSR: the Pareto front appears here.</i>"), display_id=True)


