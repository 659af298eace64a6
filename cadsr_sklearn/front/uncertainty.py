"""How well the data pin down a formula's constants, and its predictions.

The constants of a formula f(x; c) are fitted by (weighted) least squares, so
near the optimum the usual nonlinear-regression approximation applies
(Seber & Wild, *Nonlinear Regression*, ch. 2). With J the Jacobian
∂f(x_i; c)/∂c_j on the n rows the constants were fitted on (n × q, q the
fitted constants), W the sample weights and r the residuals,

    s² = rᵀ W r / (Σw − q),        Cov(ĉ) = s² (Jᵀ W J)⁻¹,

the residual variance taken from the fit itself, and confidence intervals
ĉ_j ± t_{Σw−q} · se_j. The weights are frequency weights, as the estimator's
(a row of weight 2 counts as that row twice), so Σw is the number of
observations: doubling every weight shrinks the standard errors by √2, as
repeating every row does. By the delta method, the standard
error of the fitted mean at a new x is √(gᵀ Cov g) with g = ∂f(x; ĉ)/∂c: the
uncertainty of the formula's value there, not of a new observation (add s² for
that).

The Jacobian is the one the constant fit uses (:func:`cadsr_sklearn.expressions.program.jacobian`).
The rows are those least squares saw: the estimator fits constants on a
subsample of at most ``const_fit_samples`` rows, and constants fitted on n rows
are as uncertain as n rows make them, however many more the table has (taken
on all S rows, the standard errors would shrink by about √(n/S)).
Constants fixed to simple numbers by snapping are not parameters any more:
they have no standard error. A constant the data cannot pin down (two that
only enter as a product, c0·c1·x) has an infinite one, while predictions stay
defined: the covariance is the pseudo-inverse's, which gives the
identifiable combinations their right variance. With no degrees of freedom
left (n ≤ q) nothing can be estimated and every standard error is NaN.
These intervals are conditional on the formula: they do not count the search
that chose it.

The same computation applies to any formula written in SymPy, its floats
taken as the parameters (:func:`form_uncertainty`): the reported formula, once
simplified, is a reparametrisation of the tree (``c0*sqrt(c1*x)`` reads
``k*sqrt(x)``), and its own numbers' standard errors come from its own
Jacobian, taken symbolically (numerically where SymPy cannot differentiate a
function). Where the two have as many constants, these are the delta-method
transforms of the tree's (s² (JᵀWJ)⁻¹ is invariant to the parametrisation);
where simplification merged constants, the form has fewer, and n − q more
degrees of freedom.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from scipy import stats

from ..expressions.notation import lambdified
from ..expressions.expression import Expression

__all__ = ["ConstantUncertainty", "constant_uncertainty", "form_uncertainty"]

# Singular values below this fraction of the largest are taken as zero: directions of
# the constants that the data do not determine.
_RCOND = 1e-10

_MODULES = ["scipy", "numpy"]  # what a SymPy formula is evaluated with


@dataclass(frozen=True)
class ConstantUncertainty:
    """The fitted constants of one formula, with their covariance.

    Arrays over all the tree's constants are in BFS order (``c0, c1, …`` of
    :meth:`Expression.to_sympy(symbolic_constants=True) <cadsr_sklearn.Expression.to_sympy>`).
    """

    values: np.ndarray  # (p,) every constant of the tree
    fixed: np.ndarray  # (p,) bool: snapped to a simple number, not fitted
    covariance: np.ndarray  # (q, q) of the fitted constants (q = p − fixed)
    identifiable: np.ndarray  # (q,) bool: the data pin the constant down
    residual_variance: float  # s²
    dof: float  # Σw − q: observations (frequency weights) less fitted constants

    @property
    def standard_errors(self) -> np.ndarray:
        """(p,) standard error of each constant: NaN for a fixed one (or with no
        degrees of freedom, or a formula undefined on a training row), inf for
        one the data do not determine."""
        errors = np.full(len(self.values), np.nan)
        fitted = np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))
        errors[~self.fixed] = np.where(self.identifiable, fitted, np.inf)
        if not self._estimable:
            errors[~self.fixed] = np.nan
        return errors

    @property
    def _estimable(self) -> bool:
        """Whether the residual variance exists: degrees of freedom left, residuals finite."""
        return self.dof > 0 and bool(np.isfinite(self.residual_variance))

    def intervals(self, level: float = 0.95) -> np.ndarray:
        """(p, 2) two-sided confidence intervals at ``level`` (Student's t, n − q dof)."""
        if not 0 < level < 1:
            raise ValueError(f"level must be between 0 and 1, got {level!r}.")
        errors = self.standard_errors
        t = stats.t.ppf(0.5 + level / 2, self.dof) if self.dof > 0 else np.nan
        with np.errstate(invalid="ignore"):  # inf·0 never happens: t > 0
            half = t * errors
        return np.column_stack([self.values - half, self.values + half])

    def prediction_std(self, expression: Expression, X: np.ndarray) -> np.ndarray:
        """(n,) standard error of the fitted mean f(x; ĉ) at the rows of ``X`` (delta method).

        NaN where the formula or its gradient is not finite, and wherever the
        standard errors of the constants are; 0 for a formula without fitted
        constants.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not len(self.covariance):
            return np.where(np.isfinite(expression.evaluate(X)), 0.0, np.nan)
        g = _fitted_jacobian(expression, X, self.fixed)  # (q, n)
        with np.errstate(all="ignore"):
            variance = np.einsum("in,ij,jn->n", g, self.covariance, g)
        std = np.sqrt(np.clip(variance, 0.0, None))
        if not self._estimable:
            std[:] = np.nan
        return np.where(np.isfinite(std), std, np.nan)


def constant_uncertainty(expression: Expression, X: np.ndarray, y: np.ndarray,
                         sample_weight: np.ndarray | None = None,
                         rows: np.ndarray | None = None) -> ConstantUncertainty:
    """The covariance of ``expression``'s fitted constants on the training data ``(X, y)``.

    ``rows`` (indices) are the rows the constants were fitted on, all of them
    when None. Rows with zero weight do not count as observations.
    """
    X, y, w = _fitted_data(X, y, sample_weight, rows)
    fixed = expression.fixed.copy()
    with np.errstate(all="ignore"):
        residuals = y - expression.evaluate(X)
    J = _fitted_jacobian(expression, X, fixed) if fixed.sum() < len(fixed) else None
    return _from_jacobian(expression.constants.copy(), fixed, J, residuals, w)


def form_uncertainty(form: sympy.Expr, parameters: Sequence[sympy.Symbol],
                     values: Sequence[float], features: Sequence[sympy.Symbol], X: np.ndarray,
                     y: np.ndarray, sample_weight: np.ndarray | None = None,
                     rows: np.ndarray | None = None) -> ConstantUncertainty:
    """The covariance of the ``parameters`` of a SymPy formula fitted to ``(X, y)``.

    Parameters
    ----------
    form : sympy.Expr
        The formula, in the ``features`` (one per column of ``X``) and the
        ``parameters``.
    parameters : sequence of sympy.Symbol
        Its constants, taken as fitted, at ``values``.
    values : sequence of float
    features : sequence of sympy.Symbol
    X, y, sample_weight, rows
        As in :func:`constant_uncertainty`: the rows the constants were
        fitted on, and their weights.

    Returns
    -------
    ConstantUncertainty
        Over the parameters, in their order, none fixed. Every standard error is
        NaN when NumPy cannot evaluate ``form``.
    """
    X, y, w = _fitted_data(X, y, sample_weight, rows)
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    q = len(values)
    try:
        prediction, J = _form_jacobian(form, list(parameters), values, list(features), X)
    except Exception:  # noqa: BLE001 - a form NumPy cannot evaluate has no residuals
        prediction, J = np.full(len(y), np.nan), np.full((q, len(y)), np.nan)
    return _from_jacobian(values, np.zeros(q, dtype=bool), J if q else None, y - prediction, w)


def _fitted_data(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None,
                 rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, weights) on the rows the constants were fitted on; unit weights by default."""
    if rows is not None:
        X, y = X[rows], y[rows]
        sample_weight = None if sample_weight is None else sample_weight[rows]
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    return X, y, w


def _from_jacobian(values: np.ndarray, fixed: np.ndarray, J: np.ndarray | None,
                   residuals: np.ndarray, w: np.ndarray) -> ConstantUncertainty:
    """The uncertainty of constants ``values`` whose fitted ones have the (q, n) Jacobian
    ``J`` (NaN where undefined; None when q = 0), at these residuals and weights."""
    q = int((~fixed).sum())
    dof = float(np.sum(w)) - q  # frequency weights: Σw observations
    with np.errstate(all="ignore"):
        s2 = float(np.sum(w * residuals**2) / dof) if dof > 0 else np.nan
    if q == 0:
        return ConstantUncertainty(values, fixed, np.zeros((0, 0)), np.zeros(0, dtype=bool), s2,
                                   dof)
    covariance, identifiable = _scaled_pseudo_inverse(J.T * np.sqrt(w)[:, None], s2)  # √W J
    return ConstantUncertainty(values, fixed, covariance, identifiable, s2, dof)


def _form_jacobian(form: sympy.Expr, parameters: list[sympy.Symbol], values: np.ndarray,
                   features: list[sympy.Symbol], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``form`` (n,) and its (q, n) Jacobian in the ``parameters`` at the rows of ``X``,
    NaN where either is not finite (or not real)."""
    # Real symbols: the derivative of |c·x| is then sign(c·x)·x, not a formula in re and im
    real_features = [sympy.Dummy(s.name, real=True) for s in features]
    real_parameters = [sympy.Dummy(p.name, real=True) for p in parameters]
    form = form.xreplace({**dict(zip(features, real_features)),
                          **dict(zip(parameters, real_parameters))})
    columns = [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]
    n = X.shape[0]

    def as_rows(values) -> np.ndarray:
        values = np.asarray(values)
        if np.iscomplexobj(values) or values.dtype == object:
            raise ValueError("the formula is not real-valued on these rows")
        out = np.array(np.broadcast_to(values.astype(np.float64), (n,)))
        out[~np.isfinite(out)] = np.nan
        return out

    # SciPy first: the special functions of user operators (erf, gamma) are SciPy's
    f = lambdified(form, real_features, real_parameters, _MODULES)
    with np.errstate(all="ignore"):
        prediction = as_rows(f(*columns, *values))
        try:
            gradient = sympy.Tuple(*(sympy.diff(form, p) for p in real_parameters))
            if gradient.has(sympy.Derivative, sympy.Subs):
                raise ValueError("SymPy cannot differentiate a function of the formula")
            g = lambdified(gradient, real_features, real_parameters, _MODULES)
            J = np.array([as_rows(d) for d in g(*columns, *values)]).reshape(len(values), n)
        except Exception:  # noqa: BLE001 - a function SymPy cannot differentiate: numerically
            J = _central_differences(lambda v: as_rows(f(*columns, *v)), values, n)
    J[:, np.isnan(prediction)] = np.nan  # where the formula is undefined it has no gradient
    return prediction, J


def _central_differences(f, values: np.ndarray, n: int) -> np.ndarray:
    """(q, n) central differences of ``f`` at ``values``, steps ∛ε relative (the optimum for
    an O(h²) scheme evaluated to round-off; absolute at 0)."""
    J = np.empty((len(values), n))
    for j, v in enumerate(values):
        h = np.cbrt(np.finfo(float).eps) * (abs(v) or 1.0)
        up, down = values.copy(), values.copy()
        up[j], down[j] = v + h, v - h
        J[j] = (f(up) - f(down)) / (up[j] - down[j])
    return J


def _fitted_jacobian(expression: Expression, X: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """(q, n) ∂f/∂c of the fitted constants at the rows of ``X``; NaN where not finite."""
    J = expression.jacobian(X)[~fixed]
    with np.errstate(all="ignore"):
        # the Jacobian zeroes non-finite entries (the fit's convention); here a row where
        # the formula is not finite has no gradient
        J[:, ~np.isfinite(expression.evaluate(X))] = np.nan
    return J


def _scaled_pseudo_inverse(J: np.ndarray, s2: float) -> tuple[np.ndarray, np.ndarray]:
    """s²·(JᵀJ)⁺ and, per constant, whether it lies in the determined directions."""
    finite = np.all(np.isfinite(J), axis=1)
    q = J.shape[1]
    # Thin SVD: the right singular vectors are all that is needed. The full one would
    # also build the (rows × rows) left factor: 75 GiB at 100k rows.
    _, singular, vt = np.linalg.svd(J[finite], full_matrices=False)  # vt (min(n, q), q)
    if len(vt) < q:  # fewer finite rows than constants: complete the basis of directions
        vt = _completed_basis(vt, q)
    singular = np.concatenate([singular, np.zeros(q - len(singular))])
    kept = singular > _RCOND * singular[0] if singular[0] > 0 else np.zeros(q, dtype=bool)
    inverse = np.zeros(q)
    inverse[kept] = 1.0 / singular[kept] ** 2
    covariance = (vt.T * inverse) @ vt * s2
    # a constant is determined when no direction the data leave free moves it
    free = vt[~kept]  # (q − rank, q)
    identifiable = np.all(np.abs(free) < 1e-8, axis=0) if len(free) else np.ones(q, dtype=bool)
    return covariance, identifiable


def _completed_basis(vt: np.ndarray, q: int) -> np.ndarray:
    """(q, q) orthonormal rows: ``vt``'s (r, q) rows, then the complement's."""
    if not len(vt):
        return np.eye(q)
    # the null space of vt: the last q − r right singular vectors of vt itself (q × q, small)
    _, _, full = np.linalg.svd(vt, full_matrices=True)
    return np.vstack([vt, full[len(vt):]])
