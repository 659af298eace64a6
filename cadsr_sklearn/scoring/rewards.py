"""Rewards R(τ) of fitted expressions.

Higher is better everywhere. An expression whose predictions are not finite on
every training row (or so large that the squared error overflows) is invalid and
scores ``-inf``, the worst possible reward; the policy update's rank mapping
(:func:`~cadsr_sklearn.search.rank_mapping.rank_weights`) gives it weight 0, so it
never enters the top set.

Rewards
-------
``"bic"`` (the paper's, eq. 10)
    R(τ) = −BIC(τ) = −[k ln S − 2 ln p(τ)], with k = nodes + fitted constants
    (:attr:`Expression.complexity`; with ``operator_complexity`` each node counts
    its operator's complexity), S rows and a Gaussian (or Student-t)
    likelihood of the residuals. The variance σ² is either the variance of the
    training targets (``bic_variance="target"``, the paper's text) or the
    expression's own mean squared residual (``"mle"``, profile likelihood; up to
    the additive constant S(ln 2π + 1) this is the authors' code,
    k ln S + S ln MSE). The Student-t (``likelihood="student_t"``, ν =
    ``student_t_nu``, default 4) has scale² = σ²(ν − 2)/ν, so that its variance
    is the same σ².
``"mdl"`` (the estimator's default ``criterion``)
    R(τ) = −2 L(τ), L the minimum description length of the data with the
    formula, in nats: a two-part code in the manner of Exhaustive Symbolic
    Regression (Bartlett, Desmond & Ferreira 2023), with the noise σ²
    profiled, as the BIC's ``"mle"`` does::

        L(τ) = −ln p(y | θ̂, σ̂)                       fit
             + Σ_k max(0, ½ ln(μ_k / 3))                the fitted constants
             + nodes · ln V                             the tree, V tokens
             + Σ_literals codelength(literal)            each fixed literal
             + Σ_periodic ln max(1, P_j)                 each sin, cos, tan

    μ_k are the eigenvalues of R I R, I = Σ_r w̃_r g_r g_rᵀ / σ̂² the Fisher
    information of the fitted constants (g_r = ∂τ(x_r)/∂θ) and
    R = diag(max(s_y / rms_r g_rk, |θ̂_k|)): each constant's *reach*, the
    change of it that moves the prediction by the targets' spread s_y (their
    standard deviation), or its own magnitude where that is larger. Each
    constant is stated to the precision Δ = √(12/I) the data give it, within
    that range: a constant whose effect is of the targets' size (the 0.5 of
    ½mv²) costs ½ ln(S s_y² / 3σ̂²), the number of values of its effect the
    data tell apart; with several, each direction they determine counts once,
    so c₀·c₁·x costs ½ ln 2 more than c·x, not a second constant. A small
    constant costs as much as one of the targets' size: an additive 0.0082
    the noise put there pays the ~½ ln S of the BIC and more. A large one
    costs its own magnitude, ESR's ln(|θ̂|/Δ) (Exhaustive Symbolic Regression
    states every constant within its own magnitude): the 4241·x − 4238 of an
    interpolating polynomial and the base 0.9996 of 0.9996**x, which must be
    stated to eight digits where the rate of exp(−0.0004·x) takes four. (ESR's
    cost alone charges a constant the noise made small almost nothing: the
    best of the 10⁵ formulas a search fits always holds a "3σ" term, and it
    was chosen.) A direction the data cannot resolve (μ_k < 3) costs nothing.
    A constant the data cannot tell from zero is then worth more as the
    literal 0 (snapping tries it first, :mod:`cadsr_sklearn.search.refinement.snapping`). A
    literal costs its
    :func:`~cadsr_sklearn.expressions.simple_numbers.codelength` (ln|p| + ln q for p/q;
    π, √2 and e^(p/q) are not free). Why it is right for small S: with the
    Gaussian profile likelihood, −ln p = (S/2) ln σ̂² + const, and each
    fitted constant's cost holds −ln σ̂, so σ̂ enters L as (S − q) ln σ̂: a
    formula with q fitted constants gains from a smaller residual only
    through its S − q residual degrees of freedom, and one that interpolates
    (q → S) gains nothing from fitting to round-off. A formula with no
    residual degree of freedom (q ≥ S) scores ``-inf``. Why it is right for
    large S: the codes of all formulas sum to at most one (Kraft), so the
    chance that any of the formulas a search examines beats the law by its
    extra codelength Δ is at most their number times e^(−Δ); a spurious
    ``+ c`` next to a law of n nodes has about n·V² variants, each Δ = 2 ln V
    + ½ ln(S s_y²/3σ̂²) longer, so the chance falls as 1/√S (the same bound
    with ESR's cost, which does not grow with S, is about n). The Fisher
    information is taken on a subsample of the rows (``information_rows``),
    scaled to all S. With the Student-t likelihood the constants' information
    is the Gaussian one (σ² is the Student-t's variance). With
    ``operator_complexity``, "nodes" is :attr:`Expression.node_complexity`: a
    node of complexity w costs w·ln V, as if it took w tokens to write, so
    the criterion that chooses the answer weighs operators as the BIC and the
    front do.
    P_j is the number of periods the argument of periodic node j spans over
    the rows (its range over the ``information_rows``, divided by the period:
    2π, π for tan). ``sin(u)`` is one of the formulas ``sin(ω·u)`` whose
    frequencies the data tell apart: over P periods, P of the frequencies in
    (0, 1] make predictions as different as unrelated formulas (the
    periodogram's resolution, 1/P), and the search could have written any of
    them. So a periodic node pays the look-elsewhere ln P that a fitted
    frequency pays as ESR's ln(|θ̂|/Δ); an angle that spans less than one
    period pays nothing. Below the Nyquist rate, fewer than two rows a period
    (P > S/2), the rows cannot resolve the period at all: the node's value at
    each row is as good as a free number, so the formula claims what the
    data cannot support, and it scores ``-inf`` (a search of 62 mammals, body
    masses from 5 g to 6.6 t in kg, about 1000 periods, answered
    ``x*(1.707 - cos(x - 2/3))`` for the brain's mass: the cosine of each
    large animal's mass is as good as random).
``"nrmse"``
    DSR's 1 / (1 + NRMSE), NRMSE = RMSE / std(y).
``"spl"``
    SPL's η^n / (1 + RMSE), n = number of multiplication tokens.
``"tpsr"``
    TPSR's 1 / (1 + NMSE) + λ exp(−l / L), l = number of nodes (unweighted: a
    length, against the length cap), L = ``max_length``.

Sample weights
--------------
Weights are frequency weights, as scikit-learn means them: a row of weight 2
counts as that row twice, so S, the number of observations in k ln S and in
the likelihood, is Σw (:func:`sample_size`), and the log-likelihood is
Σ wᵢ ln p(yᵢ | τ(xᵢ)); every variance, mean and RMSE below is the w-weighted
one. Weights that only say how much rows count relative to each other are
scaled to the number of rows first (w·n/Σw), or they state another S.

Round-off floor
---------------
σ² is never allowed below ``σ²_min = (1024 · eps · rms(y))²`` (eps = 2.2e-16,
rms over the weighted targets). A float64 prediction carries relative round-off
of order eps per operation, amplified by cancellation, so two expressions that
both reproduce noise-free targets "exactly" differ in MSE by noise of order
(m·eps·|y|)² (1e-32…1e-28 relative in practice; the LM fit itself stops at
(64·eps)², see :mod:`.scoring.constant_fitter`). Without a floor the profile likelihood's
S·ln(MSE) turns that noise into reward gaps of thousands, while one node costs
only ln S, and ln(0) makes an exact fit −inf (the authors' code). With the floor
(applied to σ², and to each r² inside the Student-t), every fit within ~2e-13
relative RMS of the targets has the same likelihood up to ~1e-6 nats, so the
simpler one wins on k; the floor is still ten orders of magnitude below the
smallest error that counts as a miss in SR benchmarks (NMSE 1e-12 ⇔ 1e-6
relative RMS). For ``"target"`` it only matters when y is constant.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import exp, inf, lgamma, log, pi, sqrt
from typing import NamedTuple

import numpy as np

from ..expressions.expression import Expression
from ..expressions.opcodes import PERIODS
from ..expressions.simple_numbers import codelength

__all__ = [
    "REWARDS",
    "BIC_VARIANCES",
    "LIKELIHOODS",
    "CRITERIA",
    "Reward",
    "Residuals",
    "make_reward",
    "sample_size",
    "bic",
    "mdl",
    "mse",
    "nrmse",
]

#: Names accepted by :func:`make_reward`.
REWARDS: tuple[str, ...] = ("mdl", "bic", "nrmse", "spl", "tpsr")
#: σ² of the BIC's likelihood: the expression's own mean squared residual, or Var(y).
BIC_VARIANCES: tuple[str, ...] = ("mle", "target")
LIKELIHOODS: tuple[str, ...] = ("gaussian", "student_t")
#: The options each reward needs (the estimator's parameters of the same names).
_OPTIONS = {"mdl": ("likelihood",), "bic": ("bic_variance", "likelihood"), "nrmse": (),
            "spl": ("spl_eta",), "tpsr": ("tpsr_lambda", "max_length")}
#: What may judge the answer: the description length, or the reward itself (the paper).
CRITERIA: tuple[str, ...] = ("mdl", "reward")

_EPS = float(np.finfo(np.float64).eps)
_ROUNDOFF = 1024.0  # see "Round-off floor" in the module docstring
_TINY = float(np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class _Targets:
    """Statistics of the training targets, computed once per fit."""

    y: np.ndarray  # (n,) one per row
    w: np.ndarray | None  # (n,) frequency weights, or None (all 1)
    n: float  # S, the number of observations: n, or Σw
    variance: float  # weighted variance of y, floored
    floor: float  # σ²_min


def _targets(y, sample_weight=None) -> _Targets:
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    n = y.shape[0]
    if n == 0:
        raise ValueError("y is empty.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite.")
    if sample_weight is None:
        w = None
        mean = float(np.mean(y))
        var = float(np.mean((y - mean) ** 2))
        ms = float(np.mean(y * y))
    else:
        w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        if w.shape != y.shape:
            raise ValueError(f"sample_weight has shape {w.shape}, expected {y.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.sum(w) > 0:
            raise ValueError("sample_weight must be finite, non-negative and not all zero.")
        n = sample_size(n, w)
        mean = float(np.dot(w, y) / n)
        var = float(np.dot(w, (y - mean) ** 2) / n)
        ms = float(np.dot(w, y * y) / n)
    floor = max((_ROUNDOFF * _EPS) ** 2 * ms, _TINY)
    return _Targets(y, w, n, max(var, floor), floor)


def sample_size(n_rows: int, sample_weight: np.ndarray | None = None) -> float:
    """S, the number of observations: ``n_rows``, or with frequency weights their sum."""
    return n_rows if sample_weight is None else float(np.sum(sample_weight))


def _residuals(y_pred, t: _Targets) -> np.ndarray | None:
    """Residuals (S,), or None if the prediction is invalid (not finite everywhere)."""
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_pred.shape != t.y.shape:
        y_pred = np.broadcast_to(y_pred, t.y.shape)
    if not np.all(np.isfinite(y_pred)):
        return None
    with np.errstate(all="ignore"):
        return y_pred - t.y


def _mean_square(r: np.ndarray, t: _Targets) -> float:
    with np.errstate(all="ignore"):
        if t.w is None:
            return float(np.dot(r, r)) / t.n
        return float(np.dot(t.w, r * r)) / t.n


class Residuals(NamedTuple):
    """A valid prediction's residuals against the targets, and their weighted mean square:
    what every reward and the training loss are computed from."""

    r: np.ndarray  # (S,) y_pred − y
    mean_square: float  # the (weighted) training MSE


def _valid_mean_square(y_pred, t: _Targets) -> Residuals | None:
    """The residuals, or None when invalid: a non-finite prediction, or predictions so
    large that the squared error overflows."""
    r = _residuals(y_pred, t)
    if r is None:
        return None
    ms = _mean_square(r, t)
    return Residuals(r, ms) if np.isfinite(ms) else None


def _finite_or_worst(value: float) -> float:
    return float(value) if np.isfinite(value) else -np.inf


# --------------------------------------------------------------------------- rewards
def _log_likelihood(r: np.ndarray, ms: float, t: _Targets, variance: str, likelihood: str,
                    nu: float) -> tuple[float, float]:
    """(ln p(y | τ), σ²) for residuals ``r`` with weighted mean square ``ms``."""
    S = t.n
    # σ² from the targets, or the expression's own MSE; floored at round-off either way
    sigma2 = t.variance if variance == "target" else max(ms, t.floor)
    with np.errstate(all="ignore"):
        if likelihood == "gaussian":
            if variance == "mle":
                # Σ r²/σ² = S exactly at σ² = MSE. Below the floor it is taken as S
                # too, so the likelihood is flat (and continuous) there and
                # round-off cannot separate exact fits.
                quad = float(S)
            else:
                quad = ms * S / sigma2
            return -0.5 * (S * log(2.0 * pi * sigma2) + quad), sigma2
        # Student-t with scale chosen so its variance is σ²
        s2 = sigma2 * (nu - 2.0) / nu
        # A residual below round-off is indistinguishable from 0: flooring each
        # r² keeps exact fits from being ranked by their round-off pattern.
        z = np.maximum(r * r, t.floor) / (nu * s2)
        tail = float(np.dot(t.w, np.log1p(z))) if t.w is not None else float(np.sum(np.log1p(z)))
        const = lgamma((nu + 1.0) / 2.0) - lgamma(nu / 2.0) - 0.5 * log(nu * pi * s2)
        return S * const - 0.5 * (nu + 1.0) * tail, sigma2


def _bic(valid: Residuals | None, t: _Targets, complexity: int, variance: str, likelihood: str,
         nu: float) -> float:
    if valid is None:
        return -np.inf
    loglik, _ = _log_likelihood(*valid, t, variance, likelihood, nu)
    return _finite_or_worst(-(complexity * log(t.n) - 2.0 * loglik))


@dataclass(frozen=True)
class _InformationRows:
    """The rows the Fisher information of the constants is measured on."""

    X: np.ndarray  # (n, d)
    w: np.ndarray  # (n,) weights with mean 1 over these rows


def _information_rows(X, sample_weight, rows) -> _InformationRows:
    X = np.asarray(X, dtype=np.float64)
    rows = np.arange(len(X)) if rows is None else np.asarray(rows)
    w = np.ones(len(rows)) if sample_weight is None else np.asarray(sample_weight)[rows]
    mean = float(np.mean(w)) if len(w) else 0.0
    return _InformationRows(np.ascontiguousarray(X[rows]), w / mean if mean > 0 else w)


def _mdl(valid: Residuals | None, t: _Targets, expression: Expression, rows: _InformationRows,
         likelihood: str, nu: float) -> float:
    if valid is None or expression.n_fitted >= t.n:  # no residual degree of freedom
        return -np.inf
    loglik, sigma2 = _log_likelihood(*valid, t, "mle", likelihood, nu)
    description = (-loglik + _constants_codelength(expression, rows, t.n, sigma2,
                                                   t.variance)
                   + expression.node_complexity * log(len(expression.library))
                   + sum(codelength(v) for v in expression.constants[expression.fixed])
                   + _periods_codelength(expression, rows, t.n))
    return _finite_or_worst(-2.0 * description)


def _periods_codelength(expression: Expression, rows: _InformationRows, S: float) -> float:
    """Σ_j ln max(1, P_j) over the periodic nodes j, P_j the periods their argument spans
    over ``rows``; inf where one is sampled below the Nyquist rate, P_j > S/2 (see
    ``"mdl"``)."""
    ops, args = expression.program
    periodic = [i for i, op in enumerate(ops) if int(op) in PERIODS]
    if not periodic:
        return 0.0
    values = expression.node_values(rows.X)  # (m, n)
    cost = 0.0
    for i in periodic:
        argument = values[args[i]]
        argument = argument[np.isfinite(argument)]
        if len(argument):
            periods = (argument.max() - argument.min()) / PERIODS[int(ops[i])]
            if periods > S / 2.0:
                return inf
            cost += log(periods) if periods > 1.0 else 0.0
    return cost


def _constants_codelength(expression: Expression, rows: _InformationRows, S: float,
                          sigma2: float, spread2: float) -> float:
    """Σ_k max(0, ½ ln(μ_k/3)) over the eigenvalues μ_k of R I R (see ``"mdl"``)."""
    if not expression.n_fitted:
        return 0.0
    fitted = ~expression.fixed
    J = expression.jacobian(rows.X)[fitted]  # (q, n)
    n = max(len(rows.w), 1)
    with np.errstate(all="ignore"):
        gram = ((J * rows.w) @ J.T) / n  # (q, q) mean of g gᵀ over the rows
        effect = np.sqrt(np.diag(gram))  # (q,) rms of each constant's derivative
        # R_k: the change of θ_k that moves the prediction by the targets' spread, or
        # |θ_k| where that is larger (large constants that cancel: each is stated whole)
        reach = np.where(effect > 0, np.sqrt(spread2) / effect, 0.0)  # (q,)
        reach = np.maximum(reach, np.abs(expression.constants[fitted]))
        relative = S * gram / sigma2 * np.outer(reach, reach)  # the information in units of R
    if not np.all(np.isfinite(relative)):  # information beyond float64: the worst
        return np.inf
    try:
        eigenvalues = np.linalg.eigvalsh(relative)
    except np.linalg.LinAlgError:  # no convergence: the worst, rather than a crash
        return np.inf
    with np.errstate(all="ignore"):
        cost = 0.5 * np.log(eigenvalues / 3.0)
    # directions the data cannot resolve within the targets' spread: stated for nothing
    return float(np.sum(np.where(cost > 0, cost, 0.0)))


def _nrmse_reward(valid: Residuals | None, t: _Targets) -> float:
    if valid is None:
        return -np.inf
    return _finite_or_worst(1.0 / (1.0 + sqrt(valid.mean_square / t.variance)))


def _spl_reward(valid: Residuals | None, n_mul: int, eta: float) -> float:
    if valid is None:
        return -np.inf
    return _finite_or_worst(eta**n_mul / (1.0 + sqrt(valid.mean_square)))


def _tpsr_reward(valid: Residuals | None, t: _Targets, length: int, max_length: int,
                 lam: float) -> float:
    if valid is None:
        return -np.inf
    nmse = valid.mean_square / t.variance
    return _finite_or_worst(1.0 / (1.0 + nmse) + lam * exp(-length / max_length))


def bic(
    y_pred: np.ndarray,
    y: np.ndarray,
    complexity: int,
    *,
    sample_weight: np.ndarray | None = None,
    variance: str = "mle",
    likelihood: str = "gaussian",
    nu: float = 4.0,
) -> float:
    """−BIC = −(k ln S − 2 ln p(τ)); ``-inf`` for non-finite predictions.

    Parameters
    ----------
    y_pred, y : ndarray of shape (S,)
        Predictions τ(xᵢ) and targets yᵢ.
    complexity : int
        k, the number of nodes plus the number of fitted constants (a fixed literal is
        a node, not a constant).
    sample_weight : ndarray of shape (n,), optional
        Frequency weights: S = Σw (see "Sample weights" above).
    variance : {"mle", "target"}, default="mle"
        σ² = the mean squared residual, or the variance of y (both floored at
        round-off); the estimator's ``bic_variance``.
    likelihood : {"gaussian", "student_t"}
        Residual model; the Student-t has ν = ``nu`` and scale² = σ²(ν−2)/ν.
    nu : float, default=4.0
        Degrees of freedom of the Student-t (> 2, so that σ² is its variance).
    """
    _check_bic_options(variance, likelihood, nu)
    t = _targets(y, sample_weight)
    return _bic(_valid_mean_square(y_pred, t), t, int(complexity), variance, likelihood, nu)


def mdl(
    y_pred: np.ndarray,
    y: np.ndarray,
    expression: Expression,
    X: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    likelihood: str = "gaussian",
    nu: float = 4.0,
) -> float:
    """−2 × the description length L(τ) of ``y`` with ``expression`` (see ``"mdl"`` above).

    Parameters
    ----------
    y_pred, y : ndarray of shape (S,)
        Predictions τ(xᵢ) of ``expression`` at its fitted constants, and targets.
    expression : Expression
        The formula, with its fitted constants and fixed literals.
    X : ndarray of shape (S, n_features)
        The rows of ``y``: its constants' Fisher information is measured on them.
    sample_weight : ndarray of shape (n,), optional
        Frequency weights: S = Σw (see "Sample weights" above).
    likelihood : {"gaussian", "student_t"}
    nu : float, default=4.0
    """
    _check_bic_options("mle", likelihood, nu)
    rows = _information_rows(X, sample_weight, None)
    t = _targets(y, sample_weight)
    return _mdl(_valid_mean_square(y_pred, t), t, expression, rows, likelihood, nu)


def mse(y_pred: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """(Weighted) mean squared error, the training loss reported to users; inf if invalid."""
    valid = _valid_mean_square(y_pred, _targets(y, sample_weight))
    return np.inf if valid is None else valid.mean_square


def nrmse(y_pred: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """RMSE / std(y) (weighted); inf if invalid."""
    t = _targets(y, sample_weight)
    valid = _valid_mean_square(y_pred, t)
    return np.inf if valid is None else sqrt(valid.mean_square / t.variance)


# --------------------------------------------------------------------------- factory
def _check_bic_options(variance: str, likelihood: str, nu: float) -> None:
    if variance not in BIC_VARIANCES:
        raise ValueError(f"bic_variance must be one of {BIC_VARIANCES}, got {variance!r}.")
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}.")
    if likelihood == "student_t" and not nu > 2:
        raise ValueError(f"student_t_nu must be > 2 so that σ² is the variance, got {nu}.")


class Reward:
    """A reward bound to one training set: ``reward(y_pred, expression) -> float``.

    Built by :func:`make_reward`; picklable, so it can travel to worker processes.
    """

    def __init__(self, name: str, targets: _Targets, options: dict,
                 information_rows: _InformationRows | None = None) -> None:
        self.name = name
        self.targets = targets
        self.options = options
        self.information_rows = information_rows  # "mdl" only

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"Reward({self.name!r}{', ' if opts else ''}{opts})"

    @property
    def n_samples(self) -> float:
        """S, the number of observations in the bound targets (:func:`sample_size`)."""
        return self.targets.n

    @property
    def floor(self) -> float:
        """σ²_min, the round-off floor of the bound targets: the smallest mean squared
        error float64 resolves at their magnitude (the module's "Round-off floor")."""
        return self.targets.floor

    def residuals(self, y_pred: np.ndarray) -> Residuals | None:
        """``y_pred``'s residuals against the bound targets, or None when it is invalid (not
        finite on every row, or so large that the squared error overflows)."""
        return _valid_mean_square(y_pred, self.targets)

    def loss(self, y_pred: np.ndarray) -> float:
        """(Weighted) training MSE of ``y_pred``, as :func:`mse`, against the bound targets
        (their statistics computed once per fit); inf if invalid."""
        valid = self.residuals(y_pred)
        return inf if valid is None else valid.mean_square

    def __call__(self, y_pred: np.ndarray, expression: Expression) -> float:
        return self.of_residuals(self.residuals(y_pred), expression)

    def of_residuals(self, valid: Residuals | None, expression: Expression) -> float:
        """The reward of ``expression`` whose prediction has the residuals ``valid``
        (:meth:`residuals` of this reward or of one that :meth:`shares_targets` with it;
        None: invalid, the worst reward)."""
        t, o = self.targets, self.options
        if self.name == "mdl":
            return _mdl(valid, t, expression, self.information_rows, o["likelihood"], o["nu"])
        if self.name == "bic":
            return _bic(valid, t, expression.complexity, o["variance"], o["likelihood"], o["nu"])
        if self.name == "nrmse":
            return _nrmse_reward(valid, t)
        if self.name == "spl":
            mul = expression.library.names.index("mul") if "mul" in expression.library.names else -1
            n_mul = sum(1 for tok in expression.tokens if tok == mul)
            return _spl_reward(valid, n_mul, o["eta"])
        return _tpsr_reward(valid, t, len(expression.tokens), o["max_length"], o["lam"])

    def shares_targets(self, other: "Reward") -> bool:
        """Whether ``other`` is bound to the same targets and weights as this reward, so that
        one prediction's :meth:`residuals` serve both."""
        mine, theirs = self.targets, other.targets
        return mine is theirs or (
            mine.n == theirs.n and np.array_equal(mine.y, theirs.y)
            and (mine.w is None) == (theirs.w is None)
            and (mine.w is None or np.array_equal(mine.w, theirs.w)))


def make_reward(
    name: str,
    y: np.ndarray,
    *,
    X: np.ndarray | None = None,
    information_rows: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    bic_variance: str | None = None,
    likelihood: str | None = None,
    student_t_nu: float = 4.0,
    spl_eta: float | None = None,
    tpsr_lambda: float | None = None,
    max_length: int | None = None,
) -> Reward:
    """The reward ``R(y_pred, expression)`` named ``name``, bound to the targets ``y``.

    Call once per fit; the target statistics (variance, round-off floor, weights)
    are computed here and reused for every expression.

    Parameters
    ----------
    name : {"mdl", "bic", "nrmse", "spl", "tpsr"}
    y : ndarray of shape (S,)
        Training targets (all rows, as the rewards are scored on all rows).
    X : ndarray of shape (S, n_features), optional
        Training inputs; required by ``"mdl"``, which measures the constants'
        Fisher information on them.
    information_rows : ndarray of int, optional
        The rows of ``X`` the Fisher information is measured on (scaled to all
        S); all of them by default.
    sample_weight : ndarray of shape (S,), optional
    bic_variance : {"mle", "target"}
        ``"bic"`` only (``"mdl"`` always profiles σ²).
    likelihood : {"gaussian", "student_t"}
        ``"bic"`` and ``"mdl"``.
    student_t_nu : float, default=4.0
    spl_eta : float
        SPL's η in (0, 1].
    tpsr_lambda : float
        TPSR's λ ≥ 0.
    max_length : int
        TPSR's L, the maximum number of nodes.

    A reward's own options have no default here: each is the estimator's
    parameter of the same name, where its default is set
    (:class:`~cadsr_sklearn.settings.ScoringSettings`); TypeError names one
    the reward needs and was not given.
    """
    if name not in REWARDS:
        raise ValueError(f"Unknown reward {name!r}. Known rewards: {', '.join(REWARDS)}.")
    given = dict(bic_variance=bic_variance, likelihood=likelihood, spl_eta=spl_eta,
                 tpsr_lambda=tpsr_lambda, max_length=max_length)
    missing = [option for option in _OPTIONS[name] if given[option] is None]
    if missing:
        raise TypeError(f"make_reward({name!r}) needs {', '.join(missing)}.")
    targets = _targets(y, sample_weight)
    rows = None
    if name == "mdl":
        if X is None:
            raise ValueError("The 'mdl' reward needs the training inputs X.")
        _check_bic_options("mle", likelihood, float(student_t_nu))
        options = dict(likelihood=likelihood, nu=float(student_t_nu))
        rows = _information_rows(X, sample_weight, information_rows)
    elif name == "bic":
        _check_bic_options(bic_variance, likelihood, float(student_t_nu))
        options = dict(variance=bic_variance, likelihood=likelihood, nu=float(student_t_nu))
    elif name == "spl":
        if not 0 < spl_eta <= 1:
            raise ValueError(f"spl_eta must be in (0, 1], got {spl_eta}.")
        options = dict(eta=float(spl_eta))
    elif name == "tpsr":
        if not tpsr_lambda >= 0:
            raise ValueError(f"tpsr_lambda must be >= 0, got {tpsr_lambda}.")
        if int(max_length) < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}.")
        options = dict(lam=float(tpsr_lambda), max_length=int(max_length))
    else:
        options = {}
    return Reward(name, targets, options, rows)
