"""What a fit shows while it runs: a bar that never goes backwards and the formula
as people write it.

With ``verbose=1`` a single line::

    CADSR  42%|████▏     | [00:25<00:35], R2=0.99731 k=9  y = 2.001*m*v**2 + 0.5

The bar measures the budget used so far: the larger of the fraction of
``n_epochs`` run and the fraction of ``max_time`` spent, so it only moves
forward and ends at 100 % when a budget runs out (earlier on an exact fit or
``patience``). The best formula τ* is shown in infix, in the feature names, its
constants faithful (:mod:`cadsr_sklearn.display`), the line cut to the
terminal's width. With ``verbose=2`` the current Pareto front is printed above
the bar as a small table every few seconds, as PySR users know it.
"""

from __future__ import annotations

import shutil
import time

import numpy as np
import sympy

from .display import faithful_digits, r2_from_loss, round_floats

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
    """

    def __init__(self, n_epochs: int, max_time: float | None, verbose: int, y_variance: float,
                 feature_names: list[str], X: np.ndarray):
        self.n_epochs, self.max_time, self.verbose = n_epochs, max_time, verbose
        self.y_variance = y_variance
        self.names = feature_names
        self.symbols = [sympy.Symbol(n) for n in feature_names]
        self.X = np.asarray(X, dtype=np.float64)[:_DISPLAY_ROWS]
        self.texts: dict = {}  # (key, constants) -> faithful infix text
        self.last_front = -np.inf
        self.bar = None
        if verbose:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=_PERMILLE, desc="CADSR ", bar_format=_BAR_FORMAT, leave=True,
                            mininterval=0.5)

    def update(self, record: dict, state) -> None:
        """After each epoch: the call's budget used, τ*, and (``verbose=2``) the front now
        and then. ``state`` is the loop's :class:`~cadsr_sklearn.training.LoopState`."""
        if self.bar is None:
            return
        used = state.call.epochs / self.n_epochs
        if self.max_time is not None:
            used = max(used, record["time"] / self.max_time)
        done = min(_PERMILLE, int(used * _PERMILLE))
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)
        self.show(state.best, refresh=False)
        now = time.monotonic()
        if self.verbose >= 2 and now - self.last_front >= FRONT_EVERY:
            self.last_front = now
            table = self.front_table(state.hall_of_fame.pareto_front(keep=state.best))
            self.bar.write(table, file=self.bar.fp)  # above the bar, on its stream

    def show(self, best, refresh: bool = True) -> None:
        """τ* on the bar's line, cut to the terminal's width."""
        if self.bar is None or best is None:
            return
        text = (
            f"R2={self._r2(best.loss):.5f} k={best.complexity}  "
            f"y = {self.formula(best.expression)}"
        )
        room = shutil.get_terminal_size((80, 24)).columns - _BAR_WIDTH - 1
        self.bar.set_postfix_str(_cut(text, room), refresh=refresh)

    def front_table(self, front) -> str:
        """The front as a small table: complexity, training R², formula."""
        width = shutil.get_terminal_size((80, 24)).columns - 1
        lines = [f"{'k':>4}  {'R2':>8}  formula"]
        for cand in front:
            line = (
                f"{cand.complexity:>4}  {self._r2(cand.loss):8.5f}  "
                f"{self.formula(cand.expression)}"
            )
            lines.append(_cut(line, width))
        return "\n".join(lines)

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

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def _r2(self, loss: float) -> float:
        return r2_from_loss(loss, self.y_variance)


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, an ellipsis where it was cut."""
    width = max(width, 1)
    return text if len(text) <= width else text[: width - 1] + "…"
