"""Linear leaves: sparse least-squares sums of a small basis, proposed every epoch.

A sum of a few terms is where the policy and the genetic stage are weakest: each term
must be written, token by token, with its own constant. uDSR's ``poly`` token and
PySR's backsolve fit such a sum in closed form instead. Each epoch
(:class:`LinearCombinations`) builds a basis on the constant fit's rows:

- the features x_j, their products x_i·x_j and ratios x_i/x_j;
- the sub-trees of the epoch's best formulas, each with its fitted constants, the
  formulas themselves included;

then greedy forward selection (orthogonal matching pursuit) picks up to
``linear_terms`` of them, each step the column most correlated with the residual, the
coefficients refitted by least squares with an intercept. Every step of that path is
one proposal, ``c0 + c1·b1 + … + cm·bm``: a formula of the search's own tokens whose
every coefficient is a fitted constant, which the criterion charges like any other,
and which Levenberg–Marquardt polishes from the closed-form solution (with the
sub-trees' constants). They then compete in the epoch's selection beside the
policy's samples.

**Inside a formula.** The laws the search misses are mostly such sums *nested* in roots,
quotients and exponentials (``m0/sqrt(1 - v**2/c**2)``, ``Ef*q/(m*(omega_0**2 -
omega**2))``). So the leaf also takes the place of each sub-tree (leaves included) of the
epoch's ``LEAF_SOURCES`` best formulas, as uDSR's ``poly`` token does: the path from the
root down to the place is inverted (:mod:`cadsr_sklearn.search.inversion`), which gives
the values the leaf must take there (its target t). Three kinds of leaf are fitted to
t, each over the monomials of the features (each exponent within ±2, degree at most 4:
``v**2/c**2``, ``u*v/c**2``):

- a sum, by forward selection on t: ``1 - v**2/c**2`` under the root of ``m0/sqrt(…)``;
- a ratio of sums P/Q, by forward selection on the linearised t·Q = P (Q's constant
  fixed to one, so t = P − t·(Q − 1): the columns are the monomials and, for Q, the
  monomials times the sum's fit of t, which has no noise; :meth:`LinearCombinations._leaves`):
  ``1/(4*pi*(1 - v/c))`` beside ``q/(epsilon*r)``;
- u of a sum for each unary operator u of the library with an inverse, fitted to
  u⁻¹(t): ``sqrt(Bx**2 + By**2 + Bz**2)`` beside ``mom``.

Each selection is run over the monomials of one feature, then over all: greedy selection
takes ``x*y*z`` first for ``x**2 + y**2 + z**2`` and never recovers, and the small basis
keeps such sums within reach. Of all these rewritten formulas, the ``INNER_PROPOSALS``
with the best BIC (before their constants are polished) are scored: on noisy data a
sum that is one term longer is always a little closer to y.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..expressions.expression import Expression, node_complexity
from ..expressions.library import Library
from ..expressions.opcodes import jit
from ..expressions.operations import apply_rows
from ..scoring.rewards import Reward
from ..scoring.scorer import Candidate
from ..settings import TrainingSettings
from .genetic import subtree_end
from .inversion import (INVERSES, PathStep, invertible, output_through, path_steps,
                        subtree_target)
from .proposers import LINEAR, Proposal

if TYPE_CHECKING:  # the loop's record of a search; it imports the proposers
    from .training import SearchParts

__all__ = ["LinearCombinations", "Selection", "Term", "forward_selection", "warm_up"]

#: The best formulas of the epoch whose sub-trees join the basis.
SUBTREE_SOURCES = 10
#: The best formulas of the epoch in which a linear leaf takes the place of a sub-tree.
LEAF_SOURCES = 5
#: The formulas with a leaf inside scored each epoch: those with the best BIC before
#: their constants are polished, of all the leaves written in all the places.
INNER_PROPOSALS = 20
#: The monomials of an inner leaf's basis: each exponent within ±MAX_EXPONENT, the sum
#: of their sizes at most MAX_DEGREE, the fewest features first, at most MAX_MONOMIALS.
MAX_EXPONENT, MAX_DEGREE, MAX_MONOMIALS = 2, 4, 1000
#: The rows of the constant fit that an inner leaf is first fitted on (its constants
#: are then polished on all of them).
LEAF_ROWS = 500
#: The sources whose best rewritten formulas are remembered: the epoch's best formulas are
#: often last epoch's (the replay buffer, the policy's favourites), and what their leaves
#: give is a function of the formula, its constants and the leaf's rows alone.
REMEMBERED_SOURCES = 1024
#: Unary operators a leaf does not sit under: a sum absorbs ``neg``, a ratio of sums
#: ``inv``, and ``abs`` of a sum is rarely a law.
_NOT_WRAPPERS = frozenset({"neg", "inv", "abs"})


@dataclass(frozen=True)
class Term:
    """One basis column: a sub-tree in preorder, its constants (preorder) and its values."""

    prefix: list[int]
    constants: list[float]
    values: np.ndarray  # (n,) on the constant fit's rows
    reciprocal: bool = False  # the column is 1 / (the tree of prefix)


def forward_selection(B: np.ndarray, y: np.ndarray, sqrt_w: np.ndarray,
                      n_terms: int) -> list[tuple[list[int], np.ndarray]]:
    """Orthogonal matching pursuit on the columns of ``B`` (n, p) with an intercept.

    Returns, for each step 1 … ``n_terms``, the chosen columns and the weighted
    least-squares coefficients (intercept last).
    """
    return Selection(B, sqrt_w).path(y, n_terms)


class Selection:
    """:func:`forward_selection` over fixed columns ``B`` (n, p) and weights, for many
    targets: the columns' weighted, centred values and norms are computed once."""

    def __init__(self, B: np.ndarray, sqrt_w: np.ndarray) -> None:
        self.B, self.sqrt_w = np.ascontiguousarray(B), sqrt_w
        self.centred, self.inverse_norms = _centred(self.B, sqrt_w)

    def path(self, y: np.ndarray, n_terms: int, defined: np.ndarray | None = None,
             scale: np.ndarray | None = None) -> list[tuple[list[int], np.ndarray]]:
        """The steps for the target ``y`` (rows not ``defined`` left out; the columns'
        centring is not redone without them, so they choose a column a little less
        sharply, and the coefficients are exact), among the columns of ``B`` and, with
        ``scale`` (n,), then those of ``B`` times ``scale``, numbered p, p + 1, …
        after them, one of which the first step takes. A column the chosen ones already
        span (to round-off) ends the path: least squares would only split a
        coefficient between the two.

        The pursuit is compiled (:func:`_matching_pursuit`): the inner leaves take a
        few hundred paths an epoch."""
        return self.path_and_values(y, n_terms, defined, scale)[0]

    def path_and_values(self, y: np.ndarray, n_terms: int, defined: np.ndarray | None = None,
                        scale: np.ndarray | None = None
                        ) -> tuple[list[tuple[list[int], np.ndarray]], np.ndarray]:
        """:meth:`path`, and each step's values (steps, n) on every row, those left out
        included: the sum c0 + Σ c_i·B_i, or with a ``scale`` the ratio P / Q of the
        linearised fit t = P − t·(Q − 1) (P of the plain columns, Q = 1 + Σ q_j·B_j of
        the scaled ones)."""
        sqrt_w = self.sqrt_w if defined is None else np.where(defined, self.sqrt_w, 0.0)
        scale = np.zeros(0) if scale is None else np.ascontiguousarray(scale, float)
        chosen = np.zeros(n_terms, dtype=np.int64)
        coefs = np.zeros((n_terms, n_terms + 1))
        values = np.zeros((n_terms, len(self.B)))
        with np.errstate(all="ignore"):
            steps = _matching_pursuit(self.centred, self.inverse_norms, self.B, scale,
                                      self.sqrt_w, np.ascontiguousarray(y, float), sqrt_w,
                                      chosen, coefs, values)
        return ([(chosen[:k + 1].tolist(), coefs[k, :k + 2].copy()) for k in range(steps)],
                values[:steps])


@jit()
def _matching_pursuit(centred, inverse_norms, B, scale, column_w, y, sqrt_w, chosen, coefs,
                      values):
    """Orthogonal matching pursuit with an intercept (:meth:`Selection.path`): writes
    step k's column in ``chosen[k]``, its coefficients (intercept last) in
    ``coefs[k, :k + 2]`` and its values on every row in ``values[k]``
    (:meth:`Selection.path_and_values`); returns the number of steps taken.

    Column j < p is ``B[:, j]``, its centred values (:func:`_centred`, with the
    weights' roots ``column_w``) ``centred[:, j]`` and the inverse of their norm
    ``inverse_norms[j]``; with a ``scale`` (n,), column p + j is ``scale * B[:, j]``,
    centred here alike, and the first step takes one of those. Rows where ``sqrt_w``
    is 0 are left out. Each step takes the column whose correlation with the residual
    is largest, refits every chosen column by least squares, and ends the path where no
    column correlates, the fit is not finite, or the column is one the chosen ones
    span. The least squares are a QR of the weighted design grown a column a step
    (Gram–Schmidt, twice), not a fresh factorisation each step."""
    n, p = B.shape
    q = p if len(scale) else 0
    extra_mean, extra_inverse_norms = _scaled_centring(B, scale, column_w)
    yw = np.zeros(n)
    for i in range(n):
        if sqrt_w[i] > 0:
            yw[i] = y[i] * sqrt_w[i]
    # the weighted design's QR, grown a column a step: the intercept first, then the
    # chosen columns; its coefficients solve R·c = Qᵀ·yw
    m = len(chosen) + 1
    Q, R, projections = np.zeros((n, m)), np.zeros((m, m)), np.zeros(m)
    if not _add_column(Q, R, projections, 0, sqrt_w.copy(), yw):
        return 0
    # the residual of the intercept's weighted fit: y less its weighted mean (exactly 0
    # for a constant y, where Q's projection would leave round-off to correlate with)
    total, mean = 0.0, 0.0
    for i in range(n):
        total += sqrt_w[i] * sqrt_w[i]
        mean += sqrt_w[i] * yw[i]
    mean /= total
    residual = np.zeros(n)
    for i in range(n):
        if sqrt_w[i] > 0:
            residual[i] = sqrt_w[i] * (y[i] - mean)
    score = np.zeros(p + q)
    for step in range(len(chosen)):
        score[:] = 0.0
        scored = p if not (q and step == 0) else 0  # the first step takes a scaled column
        for i in range(n):
            r = residual[i]
            for j in range(scored):
                score[j] += centred[i, j] * r
            if q:
                a, root = scale[i], column_w[i]
                for j in range(q):
                    score[p + j] += root * (a * B[i, j] - extra_mean[j]) * r
        best, best_score = -1, 0.0
        for j in range(p + q):
            inverse_norm = inverse_norms[j] if j < p else extra_inverse_norms[j - p]
            taken = inverse_norm == 0 or (q > 0 and step == 0 and j < p)
            for k in range(step):
                taken = taken or chosen[k] == j
            if taken:
                continue
            s = abs(score[j]) * inverse_norm
            if s != s:  # not a number: the path ends here
                return step
            if s > best_score:
                best, best_score = j, s
        if best < 0:  # no usable column left, or none correlates
            return step
        chosen[step] = best
        column = np.empty(n)
        for i in range(n):
            column[i] = (B[i, best] if best < p else scale[i] * B[i, best - p]) * sqrt_w[i]
        if not _add_column(Q, R, projections, step + 1, column, yw):
            return step  # a column the chosen ones already span: nothing more to fit
        coef = _back_substitution(R[:step + 2, :step + 2], projections[:step + 2])
        if not np.all(np.isfinite(coef)):
            return step
        coefs[step, :step + 1] = coef[1:]
        coefs[step, step + 1] = coef[0]
        for i in range(n):
            numerator, denominator = coef[0], 1.0
            for k in range(step + 1):
                if chosen[k] < p:
                    numerator += coef[k + 1] * B[i, chosen[k]]
                else:
                    denominator += coef[k + 1] * B[i, chosen[k] - p]
            values[step, i] = numerator / denominator
        for i in range(n):
            fitted = 0.0
            for k in range(step + 2):
                fitted += Q[i, k] * projections[k]
            residual[i] = yw[i] - fitted
    return len(chosen)


@jit()
def _add_column(Q, R, projections, m, column, yw):
    """Orthonormalises ``column`` against ``Q[:, :m]`` (twice: Gram–Schmidt's second
    pass restores the orthogonality the first loses) into ``Q[:, m]``, its
    coordinates into ``R[:m + 1, m]`` and yw's new coordinate into ``projections[m]``;
    False, and nothing written, where the column is (to round-off) in their span."""
    n = len(column)
    size = np.sqrt(np.sum(column * column))
    for _ in range(2):
        for k in range(m):
            dot = 0.0
            for i in range(n):
                dot += Q[i, k] * column[i]
            for i in range(n):
                column[i] -= dot * Q[i, k]
            R[k, m] += dot
    norm = np.sqrt(np.sum(column * column))
    if not (norm > np.finfo(np.float64).eps * n * size):
        R[:m, m] = 0.0
        return False
    R[m, m] = norm
    projection = 0.0
    for i in range(n):
        Q[i, m] = column[i] / norm
        projection += Q[i, m] * yw[i]
    projections[m] = projection
    return True


@jit()
def _back_substitution(R, b):
    """x with R·x = b, R upper triangular."""
    x = np.zeros(len(b))
    for k in range(len(b) - 1, -1, -1):
        total = b[k]
        for j in range(k + 1, len(b)):
            total -= R[k, j] * x[j]
        x[k] = total / R[k, k]
    return x


@jit()
def _scaled_centring(B, scale, column_w):
    """The weighted means and the inverse norms (:func:`_centred`'s rule) of the columns
    of ``B`` times ``scale``, without making them; none without a ``scale``."""
    n, p = B.shape
    if not len(scale):
        return np.zeros(0), np.zeros(0)
    mean, square = np.zeros(p), np.zeros(p)
    total = 0.0
    for i in range(n):
        w = column_w[i] * column_w[i]
        total += w
        for j in range(p):
            mean[j] += w * scale[i] * B[i, j]
    mean /= total
    for i in range(n):
        for j in range(p):
            d = column_w[i] * (scale[i] * B[i, j] - mean[j])
            square[j] += d * d
    norms = np.sqrt(square)
    largest = 1.0
    for j in range(p):
        if np.isfinite(norms[j]) and norms[j] > largest:
            largest = norms[j]
    inverse_norms = np.zeros(p)
    for j in range(p):
        if np.isfinite(norms[j]) and norms[j] > 1e-12 * largest:
            inverse_norms[j] = 1.0 / norms[j]
    return mean, inverse_norms


def _centred(B: np.ndarray, sqrt_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``B`` less their weighted means, times the weights' roots (the
    columns of a weighted least squares with an intercept, so that a row of weight k
    counts as k rows), and the inverses of their norms: 0 for a column that is
    constant, or not finite (a column of 1e200s overflows its norm), whose centred
    values are then 0 too."""
    with np.errstate(all="ignore"):
        w = sqrt_w * sqrt_w
        centred = (B - (w @ B) / w.sum()) * sqrt_w[:, None]
        norms = np.linalg.norm(centred, axis=0)
        finite = np.isfinite(norms)
        usable = finite & (norms > 1e-12 * max(1.0, float(norms[finite].max(initial=0.0))))
        if not usable.all():
            centred[:, ~usable] = 0.0
        return centred, np.where(usable, 1.0 / np.where(usable, norms, 1.0), 0.0)


@dataclass
class _LeafRows:
    """The rows an inner leaf is fitted on, the basis of monomials on them, its forward
    selections (:meth:`LinearCombinations._leaves`), and the best rewritten formulas of
    each source already seen on these rows (:meth:`LinearCombinations._inner_sums`)."""

    X: np.ndarray  # (n, d)
    y: np.ndarray  # (n,)
    sqrt_w: np.ndarray  # (n,)
    monomials: list[Term]
    selections: list[Selection]
    # (preorder, constants, n_terms, S, σ²_min) of a source -> its best (BIC, preorder,
    # constants)
    best_of: dict[tuple, list[tuple[float, tuple[int, ...], list[float]]]]
    # the shape of a leaf (:attr:`_SumLeaf.shape`, :attr:`_RatioLeaf.shape`) -> the size
    # of what it writes, or None where the library cannot write it
    sizes: dict[tuple, "_Size | None"] = field(default_factory=dict)

    def same_rows(self, X: np.ndarray, y: np.ndarray, sqrt_w: np.ndarray) -> bool:
        return (np.array_equal(self.X, X) and np.array_equal(self.y, y)
                and np.array_equal(self.sqrt_w, sqrt_w))


@dataclass(frozen=True)
class _Place:
    """A sub-tree of a formula: its span in the formula's preorder, its tokens and
    constants, and the span of those in the formula's constants."""

    start: int
    end: int
    prefix: list[int]
    constants: list[float]
    first_constant: int
    end_constant: int


@dataclass(frozen=True)
class _SumLeaf:
    """A step of a forward selection's path as a leaf: c0 + Σ c_i·m_i over monomials,
    under the unary operator ``wrap`` where there is one."""

    wrap: int | None
    columns: tuple[int, ...]
    coef: np.ndarray  # (len(columns) + 1,), the intercept last

    @property
    def shape(self) -> tuple:
        return ("sum", self.wrap, self.columns)


@dataclass(frozen=True)
class _RatioLeaf:
    """A step of the path of a ratio of sums as a leaf: P / Q with P = p0 + Σ p_i·m_i
    and Q = 1 + Σ q_j·m_j, each a (monomial, coefficient) pair."""

    numerator: tuple[tuple[int, float], ...]
    p0: float
    denominator: tuple[tuple[int, float], ...]

    @property
    def shape(self) -> tuple:
        return ("ratio", tuple(j for j, _ in self.numerator),
                tuple(j for j, _ in self.denominator))


@dataclass(frozen=True)
class _Leaves:
    """The leaves fitted to one target, and their values (L, n) on the leaf's rows. A
    leaf is written as tokens only if its formula is among the best
    (:meth:`LinearCombinations._best_rewritten`)."""

    leaves: list[_SumLeaf | _RatioLeaf]
    values: np.ndarray  # (L, n)


@dataclass(frozen=True)
class _Size:
    """What a leaf of one shape adds to a formula: its tokens, and its complexity (nodes
    weighed as :func:`node_complexity` weighs them, and its fitted constants)."""

    length: int
    complexity: int


class LinearCombinations:
    """The linear-leaf proposer (see the module's docstring)."""

    origin = LINEAR

    def __init__(self, library: Library, max_length: int) -> None:
        self.library, self.max_length = library, max_length
        self._features: list[Term] | None = None  # the features, products, ratios
        self._features_of: np.ndarray | None = None  # the rows they were computed on
        self._leaf_rows: _LeafRows | None = None  # an inner leaf's rows and basis

    def __getstate__(self) -> dict:
        # the bases are functions of the rows: computed again, not kept in a checkpoint
        return dict(self.__dict__, _features=None, _features_of=None, _leaf_rows=None)

    def active(self, config: TrainingSettings) -> bool:
        return config.linear_terms > 0 and self.library.const_id is not None

    def propose(self, search: "SearchParts", earlier: list[Proposal]) -> Proposal:
        start, fitter = time.perf_counter(), search.scorer.fitter
        sources = sorted((c for p in earlier for c in p.candidates if math.isfinite(c.reward)),
                         key=lambda c: -c.reward)
        terms = self._feature_terms(fitter.X) + self._subtrees(sources, fitter.X)
        B = np.column_stack([t.values for t in terms])
        expressions = []
        for columns, coef in forward_selection(B, fitter.target, fitter.sqrt_w,
                                               search.config.linear_terms):
            expression = self._sum([terms[j] for j in columns], coef)
            if expression is not None:
                expressions.append(expression)
        expressions += self._inner_sums(sources, fitter, search.scorer.reward,
                                        search.config.linear_terms)
        constraints, units = search.sampler.constraints, search.sampler.constraints.units
        admitted = constraints.admits([e.tokens for e in expressions]) if expressions else []
        expressions = [e for e, ok in zip(expressions, admitted)
                       if ok and (units is None or units.consistent(e))]
        candidates: list[Candidate] = search.scorer.score_given(expressions) if expressions else []
        return Proposal(self.origin, candidates, evaluations=len(expressions),
                        seconds=time.perf_counter() - start)

    def _feature_terms(self, X: np.ndarray) -> list[Term]:
        """x_j, x_i·x_j (i ≤ j) and x_i/x_j (i ≠ j), finite on every row; built once for
        the rows ``X`` (a warm start on new data brings new rows)."""
        if self._features_of is not X:
            lib = self.library
            var = [int(v) for v in lib.variable_ids]
            mul = lib.index("mul") if "mul" in lib.names else None
            div = lib.index("div") if "div" in lib.names else None
            terms = [Term([v], [], X[:, lib[v].feature]) for v in var]
            with np.errstate(all="ignore"):
                for a, va in enumerate(var):
                    xa = X[:, lib[va].feature]
                    for vb in var[a:] if mul is not None else ():
                        terms.append(Term([mul, va, vb], [], xa * X[:, lib[vb].feature]))
                    for vb in var if div is not None else ():
                        if vb != va:
                            terms.append(Term([div, va, vb], [], xa / X[:, lib[vb].feature]))
            self._features = [t for t in terms if np.all(np.isfinite(t.values))]
            self._features_of = X
        return self._features

    def _subtrees(self, sources: list[Candidate], X: np.ndarray) -> list[Term]:
        """The operator sub-trees (whole formulas included) of the best ``sources``, each
        with its fitted constants, finite on every row, each once."""
        lib, arity = self.library, self.library.arity_by_id
        seen, terms = set(), []
        for cand in sources[:SUBTREE_SOURCES]:
            for sub in self._subtrees_of(cand.expression):
                key = tuple(sub.prefix)
                if not arity[sub.prefix[0]] or key in seen:
                    continue
                seen.add(key)
                values = Expression.from_prefix(sub.prefix, lib, sub.constants).evaluate(X)
                if np.all(np.isfinite(values)):
                    terms.append(Term(sub.prefix, sub.constants, values))
        return terms

    def _subtrees_of(self, expression: Expression) -> list[_Place]:
        """Each sub-tree of ``expression`` (the whole first), in preorder, with its
        constants."""
        prefix, constants = expression.prefix(), list(expression.prefix_constants())
        first_constant = np.cumsum([0] + [t == self.library.const_id for t in prefix])
        places = []
        for i in range(len(prefix)):
            end = subtree_end(prefix, i, self.library.arity_by_id)
            places.append(_Place(i, end, prefix[i:end],
                                 constants[first_constant[i]:first_constant[end]],
                                 int(first_constant[i]), int(first_constant[end])))
        return places

    def _sum(self, terms: list[Term], coef: np.ndarray) -> Expression | None:
        """``c1·b1 + … + cm·bm + c0`` as a tree of the library, its constants at ``coef``;
        None where the library lacks add or mul, or the tree is too long."""
        written = self._sum_prefix(terms, coef)
        if written is None or len(written[0]) > self.max_length:
            return None
        return Expression.from_prefix(written[0], self.library, written[1])

    def _sum_prefix(self, terms: list[Term],
                    coef: np.ndarray) -> tuple[list[int], list[float]] | None:
        """The preorder tokens and constants of ``c1·b1 + … + cm·bm + c0`` (``c/b`` for
        a reciprocal term); None where the library lacks add, mul or div, or a
        constant is not finite."""
        return self._written_sum(list(zip(terms, coef[:-1])) + [(None, coef[-1])])

    def _written_sum(self, parts: list[tuple[Term | None, float | None]]
                     ) -> tuple[list[int], list[float]] | None:
        """The preorder tokens and constants of a sum of ``parts``: ``(b, k)`` is k·b
        (k/b for a reciprocal term), ``(b, None)`` is b itself, ``(None, k)`` the
        constant k; None where the library lacks an operator the sum needs, a bare
        term is a reciprocal (1/b needs a one), or a constant is not finite."""
        lib = self.library
        reciprocal = any(t is not None and t.reciprocal for t, _ in parts)
        needed = ("mul",) + (("add",) if len(parts) > 1 else ()) + (("div",) if reciprocal else ())
        if any(name not in lib.names for name in needed) or reciprocal and any(
                t is not None and t.reciprocal and k is None for t, k in parts):
            return None
        c, add = lib.const_id, lib.index("add") if len(parts) > 1 else None
        prefix: list[int] = []
        constants: list[float] = []
        for i, (term, k) in enumerate(parts):
            if i < len(parts) - 1:
                prefix.append(add)
            if term is None:
                prefix.append(c)
            elif k is None:
                prefix += term.prefix
                constants += term.constants
                continue
            else:
                prefix += [lib.index("div" if term.reciprocal else "mul"), c] + term.prefix
            constants.append(float(k))
            if term is not None:
                constants += term.constants
        if not all(map(math.isfinite, constants)):
            return None
        return prefix, constants

    def _rational(self, numerator: list[tuple[Term, float]], p0: float,
                  denominator: list[tuple[Term, float]]) -> tuple[list[int], list[float]] | None:
        """The preorder tokens and constants of P / Q, P = p0 + Σ p_i·b_i and
        Q = 1 + Σ q_j·b_j, with the first numerator term's coefficient (else the first
        denominator term's) divided out of both: that term is written bare and Q's one
        becomes a constant, so that every constant written is identifiable and no one
        token is needed."""
        if "div" not in self.library.names:
            return None
        terms = numerator + denominator  # the pivot by its place: a monomial may be in both
        plain = [i for i, (term, _) in enumerate(terms) if not term.reciprocal]
        if not plain or terms[plain[0]][1] == 0:
            return None
        pivot = terms[plain[0]][1]
        scaled = [(term, None if i == plain[0] else k / pivot) for i, (term, k) in enumerate(terms)]
        P, Q = scaled[:len(numerator)], scaled[len(numerator):]
        written = [self._written_sum(P + [(None, p0 / pivot)]),
                   self._written_sum(Q + [(None, 1.0 / pivot)])]
        if written[0] is None or written[1] is None:
            return None
        return ([self.library.index("div")] + written[0][0] + written[1][0],
                written[0][1] + written[1][1])

    def _leaves(self, target: np.ndarray, rows: _LeafRows, n_terms: int,
                parent: str | None) -> _Leaves:
        """The leaves fitted to ``target`` (NaN on a row no value reaches):

        - each step of the forward selection's path over the monomials, a sum;
        - each step of its path over the monomials and ``target`` times them, from a
          first step that puts one in the denominator, a ratio of sums (the linearised
          fit of t = P / Q, Q's constant fixed to one: t = P − t·(Q − 1));
        - for each unary operator u of the library with an inverse (``sqrt``, ``exp``…;
          not the ``parent`` of the place, not ``neg``, ``inv`` or ``abs``, which the
          two above cover), u of a sum fitted to u⁻¹(t): ``sqrt(x**2 + y**2)``.

        Each path is taken once for each of the rows' selections: over the monomials of
        one feature, then over all (greedy selection takes ``x*y*z`` first for
        ``x**2 + y**2 + z**2`` and never recovers). None of them where the target is
        undefined on more than a tenth of the rows.
        """
        leaves: list[_SumLeaf | _RatioLeaf] = []
        values_of_leaves: list[np.ndarray] = []  # (L_i, n) each
        weight = rows.sqrt_w ** 2  # a row of weight k counts as k rows
        for name, values in [(None, target)] + [
                (u, self._inverse(u, target)) for u in self._wrappers if u != parent]:
            defined = np.isfinite(values)
            if weight @ defined < 0.9 * weight.sum():  # the formula cannot reach y on many rows
                continue
            t = np.where(defined, values, 0.0)
            wrap = None if name is None else self.library.index(name)
            for selection in rows.selections:
                path, sums = selection.path_and_values(t, n_terms, defined)
                if not path:
                    continue
                leaves += [_SumLeaf(wrap, tuple(columns), coef) for columns, coef in path]
                with np.errstate(all="ignore"):
                    values_of_leaves.append(sums if wrap is None else self._apply(
                        wrap, sums.ravel(), sums.ravel()).reshape(sums.shape))
                if wrap is not None:
                    continue
                # the denominator's columns are the monomials times the sum's fit of t, not
                # t: with the noisy target there, t·m for a monomial m that barely varies is
                # nearly t itself, and the fit t ≈ p0 + a·t·m drives Q = 1 − a·m to zero
                width = selection.B.shape[1]
                path, ratios = selection.path_and_values(t, n_terms, defined, -sums[-1])
                leaves += [_RatioLeaf(
                    tuple((j, float(k)) for j, k in zip(columns, coef) if j < width),
                    float(coef[-1]),
                    tuple((j - width, float(k)) for j, k in zip(columns, coef) if j >= width))
                    for columns, coef in path]
                values_of_leaves.append(ratios)
        return _Leaves(leaves, np.concatenate(values_of_leaves) if leaves
                       else np.zeros((0, len(target))))

    def _written_leaf(self, leaf: _SumLeaf | _RatioLeaf,
                      rows: _LeafRows) -> tuple[list[int], list[float]] | None:
        """The preorder tokens and constants of ``leaf``; None where the library cannot
        write it, or a constant is not finite."""
        m = rows.monomials
        if isinstance(leaf, _RatioLeaf):
            return self._rational([(m[j], k) for j, k in leaf.numerator], leaf.p0,
                                  [(m[j], k) for j, k in leaf.denominator])
        written = self._sum_prefix([m[j] for j in leaf.columns], leaf.coef)
        if written is None or leaf.wrap is None:
            return written
        return [leaf.wrap] + written[0], written[1]

    def _size(self, leaf: _SumLeaf | _RatioLeaf, rows: _LeafRows) -> _Size | None:
        """What ``leaf`` adds to a formula, from its shape alone (written once, with
        coefficients of one); None where the library cannot write it."""
        shape = leaf.shape
        if shape not in rows.sizes:
            if isinstance(leaf, _RatioLeaf):
                unit = _RatioLeaf(tuple((j, 1.0) for j, _ in leaf.numerator), 1.0,
                                  tuple((j, 1.0) for j, _ in leaf.denominator))
            else:
                unit = _SumLeaf(leaf.wrap, leaf.columns, np.ones(len(leaf.coef)))
            written = self._written_leaf(unit, rows)
            rows.sizes[shape] = None if written is None else _Size(
                len(written[0]), node_complexity(written[0], self.library) + len(written[1]))
        return rows.sizes[shape]

    def _apply(self, token: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The operator ``token``'s value on rows, as a formula's program computes it."""
        return apply_rows(self.library.opcodes[token], a, b, self.library.operator_table)

    @property
    def _wrappers(self) -> list[str]:
        """The library's unary operators a leaf may sit under (see :meth:`_leaves`)."""
        return [t.name for t in self.library.tokens
                if t.arity == 1 and t.name in INVERSES and t.name not in _NOT_WRAPPERS]

    @staticmethod
    def _inverse(name: str, target: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            values = INVERSES[name](target, None, 0)
        return np.where(np.isfinite(values), values, np.nan)

    def _inner_sums(self, sources: list[Candidate], fitter, reward: Reward,
                    n_terms: int) -> list[Expression]:
        """The ``LEAF_SOURCES`` best ``sources`` with a leaf in place of one of their
        sub-trees: the ``INNER_PROPOSALS`` of them with the best BIC on ``LEAF_ROWS`` of
        the constant fit's rows (:func:`_leaf_bic`). A source seen before on these rows
        gives back its best without a new fit."""
        if "add" not in self.library.names or "mul" not in self.library.names:
            return []
        rows = self._rows_for_leaves(fitter)
        if not rows.monomials:
            return []
        written: dict[tuple, tuple[float, list[float]]] = {}
        for cand in sources[:LEAF_SOURCES]:
            source = cand.expression
            key = (tuple(source.prefix()), tuple(source.prefix_constants()), n_terms,
                   reward.n_samples, reward.floor)  # what the BIC of the leaves weighs
            if key not in rows.best_of:
                if len(rows.best_of) >= REMEMBERED_SOURCES:
                    del rows.best_of[next(iter(rows.best_of))]  # the first remembered
                rows.best_of[key] = self._best_rewritten(source, rows, reward, n_terms)
            for bic, prefix, constants in rows.best_of[key]:
                if bic < written.get(prefix, (math.inf,))[0]:
                    written[prefix] = (bic, constants)
        closest = sorted(written.items(), key=lambda item: item[1][0])[:INNER_PROPOSALS]
        return [Expression.from_prefix(list(prefix), self.library, constants)
                for prefix, (_, constants) in closest]

    def _rows_for_leaves(self, fitter) -> _LeafRows:
        """``LEAF_ROWS`` of the constant fit's rows, evenly spread (a table sorted by x
        keeps its whole range), with their basis; made again when the rows change."""
        rows = np.unique(np.linspace(0, len(fitter.target) - 1, LEAF_ROWS).astype(int))
        X, y, sqrt_w = fitter.X[rows], fitter.target[rows], fitter.sqrt_w[rows]
        if self._leaf_rows is None or not self._leaf_rows.same_rows(X, y, sqrt_w):
            monomials, one_feature = self._monomial_terms(X)
            B = np.column_stack([t.values for t in monomials]) if monomials else None
            selections = [Selection(B[:, :width], sqrt_w)
                          for width in sorted({one_feature, len(monomials)}) if width]
            self._leaf_rows = _LeafRows(X, y, sqrt_w, monomials, selections, {})
        return self._leaf_rows

    def _best_rewritten(self, source: Expression, rows: _LeafRows, reward: Reward,
                        n_terms: int) -> list[tuple[float, tuple[int, ...], list[float]]]:
        """The ``INNER_PROPOSALS`` formulas of ``source`` with a leaf of the rows' monomials
        (:meth:`_leaves`) in place of one of its invertible sub-trees, with the best BIC
        on the leaf's rows, each once.

        Each leaf is fitted to the values its place must take, and its values are carried
        back up the path to the formula's output (nothing is compiled); its complexity
        comes from its shape (:meth:`_size`). Only the best are written as tokens: a
        formula written twice (one tree, one preorder) is kept at its best BIC."""
        lib, arity = self.library, self.library.arity_by_id
        names = [t.name for t in lib.tokens]
        prefix, constants = source.prefix(), list(source.prefix_constants())
        with np.errstate(all="ignore"):
            values = source.node_values(rows.X)[source.preorder()]  # (n_nodes, n), preorder
        whole = node_complexity(prefix, lib) + len(constants)
        n_rows = float(rows.sqrt_w @ rows.sqrt_w)
        ranked: list[tuple[float, _Place, _SumLeaf | _RatioLeaf]] = []
        for place in self._subtrees_of(source)[1:]:
            if not invertible(names, prefix, arity, place.start):
                continue
            steps = path_steps(prefix, arity, values, place.start)
            target = subtree_target(steps, names, rows.y)
            rest = whole - node_complexity(place.prefix, lib) - len(place.constants)
            room = self.max_length - len(prefix) + len(place.prefix)
            leaves = self._leaves(target, rows, n_terms, names[steps[-1].token])
            L = len(leaves.leaves)
            if not L:
                continue
            # all the place's leaves carried up the path at once: their rows one after
            # another, the branches held beside repeated for each
            held = [PathStep(s.token, s.child, None if s.other is None else np.tile(s.other, L))
                    for s in steps]
            with np.errstate(all="ignore"):
                output = output_through(held, leaves.values.ravel(), self._apply)
                residual = (output.reshape(L, -1) - rows.y) * rows.sqrt_w  # (L, n)
                losses = np.einsum("ij,ij->i", residual, residual) / n_rows
            for leaf, loss in zip(leaves.leaves, losses.tolist()):
                size = self._size(leaf, rows)
                if size is not None and size.length <= room and math.isfinite(loss):
                    ranked.append((_leaf_bic(loss, rest + size.complexity, reward), place, leaf))
        ranked.sort(key=lambda entry: entry[0])
        best: dict[tuple[int, ...], tuple[float, list[float]]] = {}
        for bic, place, leaf in ranked:
            written = self._written_leaf(leaf, rows)
            if written is None:
                continue
            key = tuple(prefix[:place.start] + written[0] + prefix[place.end:])
            if key not in best:
                best[key] = (bic, constants[:place.first_constant] + written[1]
                             + constants[place.end_constant:])
                if len(best) == INNER_PROPOSALS:
                    break
        return [(bic, key, written) for key, (bic, written) in best.items()]

    def _monomial_terms(self, X: np.ndarray) -> tuple[list[Term], int]:
        """The monomials ∏ x_j^e_j of an inner leaf's basis on the rows ``X`` (see the
        constants above), finite on every row, and how many of them hold one feature
        (they come first)."""
        lib = self.library
        var = [int(v) for v in lib.variable_ids]
        terms = []
        if "mul" in lib.names and "div" in lib.names:
            mul, div = lib.index("mul"), lib.index("div")
            for exponents in _exponent_vectors(len(var)):
                numerator = [v for v, e in zip(var, exponents) for _ in range(max(e, 0))]
                denominator = [v for v, e in zip(var, exponents) for _ in range(max(-e, 0))]
                with np.errstate(all="ignore"):
                    values = np.prod([X[:, lib[v].feature] ** float(e)
                                      for v, e in zip(var, exponents) if e], axis=0)
                if not np.all(np.isfinite(values)):
                    continue
                if not numerator:
                    terms.append(Term(_product(denominator, mul), [], values, reciprocal=True))
                elif not denominator:
                    terms.append(Term(_product(numerator, mul), [], values))
                else:
                    terms.append(Term([div] + _product(numerator, mul)
                                      + _product(denominator, mul), [], values))
        variables = set(var)
        one_feature = next((i for i, t in enumerate(terms)
                            if len(variables & set(t.prefix)) > 1), len(terms))
        return terms, one_feature


def warm_up() -> None:
    """Compile the linear leaves' kernels (or load them from the disk cache), with the
    types a search passes: the forward selection, plain and with scaled columns, and an
    operator's values on rows."""
    x = np.linspace(1.0, 2.0, 8)
    B, defined = np.column_stack([x, x * x]), np.ones(8, dtype=bool)
    selection = Selection(B, np.ones(8))
    selection.path(x ** 3, 2, defined)
    selection.path(x ** 3, 2, defined, -x)
    library = Library(1)
    LinearCombinations(library, 8)._apply(library.index("add"), x, x)


def _leaf_bic(mean_square: float, complexity: int, reward: Reward) -> float:
    """The BIC that ranks the formulas with an inner leaf before their constants are
    polished: their mean square on the leaf's rows (no lower than the round-off floor),
    and their complexity k, as the criterion weighs them on all S observations.

    Ranked by the mean square alone, each step of a forward selection beats the one
    before on noisy data, and sums with a term that fits only the noise crowd out
    the law."""
    S = reward.n_samples
    return S * math.log(max(mean_square, reward.floor)) + complexity * math.log(S)


def _product(factors: list[int], mul: int) -> list[int]:
    """The preorder tokens of x1·(x2·(…·xk))."""
    return [token for f in factors[:-1] for token in (mul, f)] + factors[-1:]


def _exponent_vectors(n_features: int) -> list[tuple[int, ...]]:
    """The exponents of the monomials of an inner leaf's basis: by the number of features
    in them, then by degree, at most MAX_MONOMIALS (made lazily: a wide table has
    millions of degree 4)."""
    return list(itertools.islice(_by_size(n_features), MAX_MONOMIALS))


def _by_size(n_features: int) -> Iterator[tuple[int, ...]]:
    nonzero = [e for e in range(-MAX_EXPONENT, MAX_EXPONENT + 1) if e]
    for k in range(1, min(MAX_DEGREE, n_features) + 1):
        for degree in range(k, MAX_DEGREE + 1):
            for features in itertools.combinations(range(n_features), k):
                for exponents in itertools.product(nonzero, repeat=k):
                    if sum(map(abs, exponents)) == degree:
                        vector = [0] * n_features
                        for j, e in zip(features, exponents):
                            vector[j] = e
                        yield tuple(vector)
