"""Fitting the values of the constant tokens ``c`` (appendix Algorithm 4, "OptimizeConstants").

Every sampled expression with constant tokens has its constants fitted by
Levenberg–Marquardt (LM) least squares before it is scored, as in the paper.
The whole fit of an expression — forward pass, reverse-mode Jacobian, damped
normal equations, the retry from all ones and the integer-exponent path — runs
in compiled code (:mod:`.scoring.levenberg_marquardt`); this module decides what to fit, from
where, on which rows and on how many threads, and keeps the results.

Fitting uses a random subsample of at most ``const_fit_samples`` rows, drawn once
per fitter; results are cached by the expression's canonical key
(:func:`fit_key`) for the fitter's lifetime. A fixed literal
(:attr:`Expression.fixed <cadsr_sklearn.expressions.expression.Expression.fixed>`) keeps its
value: only the other constants are fitted.

A fit that fails — non-finite output at every starting point tried, or an error
inside — sets all constants of that expression to NaN, so it evaluates to NaN
and scores ``-inf``; the :class:`ConstantFits` a call returns says which fits
failed, :attr:`ConstantFitter.n_failed_` counts errors and
:attr:`ConstantFitter.first_error_` keeps the first. The compiled kernels raise no
exception on a numerical fault (NumPy's error model), so an error is a bug: the
estimator reports it after the search (a RuntimeWarning), never a numerical fault.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from . import levenberg_marquardt
from ..expressions import operations
from .levenberg_marquardt import FitBatch, FitOutputs, FitRows, LMSettings
from ..expressions.expression import Expression
from ..expressions.parallel import run_in_threads

__all__ = ["ConstantFitter", "ConstantFits", "fit_key"]

logger = logging.getLogger(__name__)

_INITS = ("near_one", "uniform", "ones")
_NO_CONSTANTS = object()


@dataclass(frozen=True)
class ConstantFits:
    """What one :meth:`ConstantFitter.fit` call found, parallel to its input.

    It reads as the sequence of fitted expressions (``(fitted,) = fitter.fit([e])``).
    """

    expressions: list[Expression]  # with fitted constants; NaN ones where the fit failed
    #: (n,) bool: False where the fit failed. Expressions with no constant to fit count as
    #: successes: there is nothing to fit (whether they are valid is the reward's call).
    success: np.ndarray
    #: With ``keep_outputs``: the output (an ``(n_rows,)`` array on the fitter's rows
    #: ``rows_``) of every expression fitted in the call (cache hits and failures
    #: excluded), keyed by :func:`fit_key`. LM computes it anyway; when ``rows_`` is every
    #: row, it is the expression's prediction, bit for bit.
    outputs: dict = field(default_factory=dict)

    def __iter__(self) -> Iterator[Expression]:
        return iter(self.expressions)

    def __len__(self) -> int:
        return len(self.expressions)

    def __getitem__(self, index):
        return self.expressions[index]


def fit_key(expression: Expression):
    """The fitter's cache key for an expression: its key, packed into bytes where it is
    only token ids (~5x smaller than a tuple)."""
    key = expression.key
    try:
        return bytes(key)
    except (ValueError, TypeError):  # more than 256 tokens, or fixed literals
        return key


def _pack(programs: list[tuple[np.ndarray, np.ndarray]], starts: list[np.ndarray],
          fixed: list[np.ndarray]) -> FitBatch:
    """The programs, their starting points (one row per start) and held constants, packed."""
    sizes = [len(ops) for ops, _ in programs]
    n_constants = [s.shape[1] for s in starts]
    n_starts = [s.shape[0] for s in starts]
    table = np.zeros((sum(n_starts), max(n_constants)))
    row = 0
    for s in starts:
        table[row:row + s.shape[0], :s.shape[1]] = s
        row += s.shape[0]
    return FitBatch(
        ops=np.concatenate([ops for ops, _ in programs]),
        args=np.concatenate([args for _, args in programs]),
        node_start=np.concatenate(([0], np.cumsum(sizes))).astype(np.int64),
        starts=table,
        start_row=np.concatenate(([0], np.cumsum(n_starts))).astype(np.int64),
        const_start=np.concatenate(([0], np.cumsum(n_constants))).astype(np.int64),
        fixed=np.concatenate(fixed + [np.zeros(0, dtype=bool)]),
    )


class ConstantFitter:
    """Fits the constant tokens of expressions to one training set.

    Build one per ``fit`` call of the estimator; call :meth:`fit` on every batch.

    Parameters
    ----------
    X : ndarray of shape (S, n_features)
        Training inputs.
    y : ndarray of shape (S,)
        Training targets.
    sample_weight : ndarray of shape (S,), optional
        Non-negative row weights; residuals are scaled by ``sqrt(w)`` so LM
        minimises the weighted sum of squares.
    const_fit_samples : int
        LM sees a random subsample of at most this many rows, drawn once per
        fitter from ``random_state`` (all rows, in order, when ``S`` is smaller).
    random_state : None, int or numpy.random.Generator
        Source of the subsample and of the starting constants.
    n_jobs : int or None, default=None
        Threads that fit a batch's expressions in parallel (the compiled fit
        releases the GIL): ``None`` or −1 every core this process may use, 1
        serial. Results do not depend on ``n_jobs``.
    init : {"near_one", "uniform", "ones"}, default="near_one"
        Starting constants: Uniform(0.5, 1.5) per constant; Uniform(0, 1) (the
        authors' choice); or all ones (DSO's). When the first start gives
        non-finite output, all ones is tried once more; when an exponent of
        ``pow`` sits over a negative base, it is also fitted as an integer.
    n_restarts : int, default=0
        Extra starting points per expression, drawn like ``init`` (Uniform(0.5,
        1.5) for ``"ones"``); the lowest cost wins.
    max_nfev : int, default=100
        Forward passes per LM run (accepted and rejected steps). A start may add
        up to three more runs: from all ones (once per expression), on the
        relaxed ``pow``, and the refit after rounding; then up to 3 sweeps of
        moves of each of the k rounded exponents to the 6 integers within 3,
        each move tried costing a refit of at most 10 passes (so at most
        180·k passes), and one full refit at the end if any move was kept.
    xtol, ftol : float, default=1e-10
        Relative step and relative cost-decrease tolerances.

    Attributes
    ----------
    rows_ : ndarray of int
        The subsample used for fitting.
    n_fitted_ : int
        Number of distinct structures fitted so far (cache misses).
    n_failed_ : int
        Number of fits that ended in an error (not merely non-finite output);
        each is logged at debug level with its reason.
    first_error_ : str or None
        The first such error, as ``repr``; None while there is none.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        *,
        const_fit_samples: int,
        random_state: int | np.random.Generator | None = None,
        n_jobs: int | None = None,
        init: str = "near_one",
        n_restarts: int = 0,
        max_nfev: int = 100,
        xtol: float = 1e-10,
        ftol: float = 1e-10,
    ) -> None:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        if X.ndim != 2 or X.shape[0] != y.shape[0]:
            raise ValueError(f"X of shape {X.shape} and y of shape {y.shape} do not match.")
        if init not in _INITS:
            raise ValueError(f"init must be one of {_INITS}, got {init!r}.")
        if int(const_fit_samples) < 1:
            raise ValueError(f"const_fit_samples must be >= 1, got {const_fit_samples}.")
        if int(max_nfev) < 1 or int(n_restarts) < 0:
            raise ValueError("max_nfev must be >= 1 and n_restarts >= 0.")
        self.rng = (random_state if isinstance(random_state, np.random.Generator)
                    else np.random.default_rng(random_state))
        S = X.shape[0]
        if S > const_fit_samples:
            rows = np.sort(self.rng.choice(S, size=int(const_fit_samples), replace=False))
        else:
            rows = np.arange(S)
        self.rows_ = rows
        self.X = np.ascontiguousarray(X[rows])  # (n, d)
        self.target = np.ascontiguousarray(y[rows])
        if sample_weight is None:
            self.sqrt_w = np.ones(len(rows))  # × 1.0 is exact: one code path for both
        else:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape != y.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
                raise ValueError("sample_weight must be finite, non-negative and one per row.")
            self.sqrt_w = np.sqrt(w[rows])
        # Stop once the residual is at float64 round-off of the targets, RMS below
        # 64·eps·rms(y): further steps only chase noise. (The BIC reward treats
        # everything below 1024·eps·rms(y) as exact, see rewards.py.)
        wy = self.target * self.sqrt_w
        scale2 = float(np.mean(wy * wy)) if len(wy) else 0.0
        floor = 0.5 * len(wy) * (64 * np.finfo(float).eps) ** 2 * scale2
        self.settings = LMSettings(
            max_nfev=int(max_nfev), xtol=float(xtol), ftol=float(ftol), floor=floor,
            stall_window=10, stall_fraction=1e-2, fallback_ones=init != "ones",
            trial_nfev=10, integer_radius=3, integer_sweeps=3,
        )
        self.n_jobs = n_jobs
        self.init = init
        self.n_restarts = int(n_restarts)
        self.n_fitted_ = 0
        self.n_failed_ = 0
        self.first_error_: str | None = None

    def screening_fitter(self, screen_samples: int) -> "ConstantFitter | None":
        """A fitter on a subsample of at most ``screen_samples`` of this one's rows, same settings.

        None when this fitter has no more rows than that: screening would save nothing.
        """
        if len(self.rows_) <= screen_samples:
            return None
        screen = ConstantFitter(self.X, self.target, sample_weight=self.sqrt_w ** 2,
                                const_fit_samples=screen_samples, random_state=self.rng,
                                n_jobs=self.n_jobs, init=self.init, n_restarts=self.n_restarts,
                                max_nfev=self.settings.max_nfev, xtol=self.settings.xtol,
                                ftol=self.settings.ftol)
        screen.rows_ = self.rows_[screen.rows_]  # rows of the training set, as this one's
        return screen

    def _starts(self, p: int) -> np.ndarray:
        """Starting constants (1 + n_restarts, p), BFS order."""
        if self.init == "ones":
            first = np.ones((1, p))
        elif self.init == "uniform":
            first = self.rng.random((1, p))
        else:
            first = self.rng.uniform(0.5, 1.5, (1, p))
        if not self.n_restarts:
            return first
        lo, hi = (0.0, 1.0) if self.init == "uniform" else (0.5, 1.5)
        return np.vstack([first, self.rng.uniform(lo, hi, (self.n_restarts, p))])

    def fit(self, expressions: Sequence[Expression], keep_outputs: bool = False,
            from_held: bool = False, fresh_starts: bool = True) -> ConstantFits:
        """Expressions with fitted constants, parallel to ``expressions``.

        Expressions with no constant to fit are returned as they are. A failed
        fit gives NaN constants and a False in :attr:`ConstantFits.success`. With
        ``keep_outputs``, :attr:`ConstantFits.outputs` holds the fitted expressions'
        outputs on the rows ``rows_``. With ``from_held``, every structure is fitted
        afresh, first from the constants the expression holds (1 in place of a
        non-finite one; of a structure given twice, the first copy's), then
        from the usual starting points: for edits of a fitted formula, whose
        other constants are already right. With ``fresh_starts`` false as well,
        only the held constants are a start: to polish constants fitted on
        other rows. A structure given twice in one call is fitted once; nothing
        is kept between calls (the :class:`~cadsr_sklearn.scoring.scorer.Scorer`
        keeps the scored candidates).
        """
        expressions = list(expressions)
        keys = [fit_key(e) for e in expressions]
        cache: dict = {}  # key -> fitted constants (BFS order), or None if the fit failed
        todo: dict = {}
        for e, key in zip(expressions, keys):
            if key not in cache and key not in todo and e.n_fitted:
                # Starting points are drawn here, in input order, so results do
                # not depend on how the work is split across threads.
                starts = self._starts(e.n_constants) if fresh_starts or not from_held else None
                if from_held:  # a non-finite value held is started at 1
                    held = np.where(np.isfinite(e.constants), e.constants, 1.0)[None, :]
                    starts = held if starts is None else np.vstack([held, starts])
                starts[:, e.fixed] = e.constants[e.fixed]  # literals start, and stay, as they are
                todo[key] = (e, starts)
        kept_outputs = {}
        if todo:
            jobs = list(todo.values())
            constants, fitted, outputs = self._run(jobs, keep_outputs)
            for j, key in enumerate(todo):
                if fitted[j]:
                    cache[key] = constants[j]
                    if keep_outputs:
                        kept_outputs[key] = outputs[j]
                else:
                    cache[key] = None
            self.n_fitted_ += len(jobs)

        out, success = [], np.ones(len(expressions), dtype=bool)
        for j, (e, key) in enumerate(zip(expressions, keys)):
            c = cache.get(key, _NO_CONSTANTS)
            if c is _NO_CONSTANTS:
                out.append(e)
            elif c is None:
                success[j] = False
                out.append(e.with_constants(np.full(e.n_constants, np.nan)))
            else:
                out.append(e.with_constants(c.copy()))  # duplicates get their own copy
        return ConstantFits(out, success, kept_outputs)

    def _run(self, jobs: list, keep_outputs: bool):
        """(constants per job, fitted flags, outputs or None) for (expression, starts) jobs."""
        library = jobs[0][0].library
        other = [j for j, (e, _) in enumerate(jobs)
                 if e.library is not library and e.library != library]
        if other:  # one batch per operator table
            return self._run_apart(jobs, other, self._run, keep_outputs)
        batch = _pack([e.program for e, _ in jobs], [starts for _, starts in jobs],
                      [e.fixed for e, _ in jobs])
        rows = FitRows(self.X, self.target, self.sqrt_w, library.operator_table)
        out = FitOutputs(np.full(batch.const_start[-1], np.nan),
                         np.zeros(len(jobs), dtype=np.bool_),
                         np.empty((len(jobs) if keep_outputs else 0, len(self.target))))
        errors = run_in_threads(len(jobs), self.n_jobs,
                                lambda share: self._fit_share(batch, share, rows, out))
        operations.raise_if_interrupted()  # a Ctrl-C caught in an operator's callback
        self.n_failed_ += sum(errors)
        parts = np.split(out.constants, batch.const_start[1:-1])
        outputs = list(out.Y) if keep_outputs else None
        return parts, out.fitted, outputs

    def _run_apart(self, jobs: list, apart: list[int], run_apart, keep_outputs: bool):
        """:meth:`_run` with the jobs in ``apart`` run by ``run_apart`` (of _run's form)."""
        parts, fitted = [None] * len(jobs), np.zeros(len(jobs), dtype=np.bool_)
        outputs = [None] * len(jobs) if keep_outputs else None
        chosen = set(apart)
        rest = [j for j in range(len(jobs)) if j not in chosen]
        for indices, run in ((rest, self._run), (apart, run_apart)):
            if not indices:
                continue
            c, f, o = run([jobs[j] for j in indices], keep_outputs)
            for k, j in enumerate(indices):
                parts[j], fitted[j] = c[k], f[k]
                if keep_outputs:
                    outputs[j] = o[k]
        return parts, fitted, outputs

    def _fit_share(self, batch: FitBatch, share: np.ndarray, rows: FitRows,
                   out: FitOutputs) -> int:
        """Fit the jobs in ``share``; the number that raised (each retried alone, then failed)."""
        try:
            levenberg_marquardt.fit_batch(batch, share, rows, self.settings, out)
            return 0
        except Exception as error:  # noqa: BLE001 - isolated below, counted, logged
            logger.debug("a batch of constant fits raised %r; refitting one at a time", error)
        errors = 0
        for j in share:
            try:
                levenberg_marquardt.fit_batch(batch, np.array([j]), rows, self.settings, out)
            except Exception as error:  # noqa: BLE001 - one fit must not end the search
                out.fitted[j] = False
                errors += 1
                self.first_error_ = self.first_error_ or repr(error)
                logger.debug("constant fit %d failed: %r", j, error)
        return errors
