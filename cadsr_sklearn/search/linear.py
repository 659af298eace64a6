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
the values the sum must take there, and forward selection fits them over the monomials
of the features (each exponent within ±2, degree at most 4: ``v**2/c**2``,
``u*v/c**2``). Of all these rewritten formulas, the ``INNER_PROPOSALS`` closest to y
(before their constants are polished) are scored.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..scoring.scorer import Candidate
from ..settings import TrainingSettings
from .genetic import subtree_end
from .inversion import invertible, subtree_target
from .proposers import LINEAR, Proposal

if TYPE_CHECKING:  # the loop's record of a search; it imports the proposers
    from .training import SearchParts

__all__ = ["LinearCombinations", "Term", "forward_selection"]

#: The best formulas of the epoch whose sub-trees join the basis.
SUBTREE_SOURCES = 10
#: The best formulas of the epoch in which a linear leaf takes the place of a sub-tree.
LEAF_SOURCES = 5
#: The formulas with a leaf inside scored each epoch: those closest to y before their
#: constants are polished (of up to LEAF_SOURCES × places × linear_terms written).
INNER_PROPOSALS = 20
#: The monomials of an inner leaf's basis: each exponent within ±MAX_EXPONENT, the sum
#: of their sizes at most MAX_DEGREE, the fewest features first, at most MAX_MONOMIALS.
MAX_EXPONENT, MAX_DEGREE, MAX_MONOMIALS = 2, 4, 1000
#: The rows of the constant fit that an inner leaf's sum is first fitted on (its
#: constants are then polished on all of them).
LEAF_ROWS = 500


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
    ones = np.ones((B.shape[0], 1))
    chosen: list[int] = []
    path = []
    with np.errstate(all="ignore"):  # a column of 1e200s overflows its norm: it is not used
        Bw, yw = B * sqrt_w[:, None], y * sqrt_w
        centred = Bw - Bw.mean(0)
        norms = np.linalg.norm(centred, axis=0)
        finite = np.isfinite(norms)
        usable = finite & (norms > 1e-12 * max(1.0, float(norms[finite].max(initial=0.0))))
        residual = yw - yw.mean()
        for _ in range(min(n_terms, int(usable.sum()))):
            score = np.where(usable, np.abs(centred.T @ residual) / norms, -np.inf)
            score[chosen] = -np.inf
            best = int(np.argmax(score))
            if not np.isfinite(score[best]) or score[best] <= 0:
                break
            chosen.append(best)
            design = np.hstack([B[:, chosen], ones]) * sqrt_w[:, None]
            try:
                coef, *_ = np.linalg.lstsq(design, yw, rcond=None)
            except np.linalg.LinAlgError:  # SVD did not converge: the path ends here
                break
            if not np.all(np.isfinite(coef)):
                break
            residual = yw - design @ coef
            path.append((list(chosen), coef))
    return path


class LinearCombinations:
    """The linear-leaf proposer (see the module's docstring)."""

    origin = LINEAR

    def __init__(self, library: Library, max_length: int) -> None:
        self.library, self.max_length = library, max_length
        self._features: list[Term] | None = None  # the features, products, ratios
        self._features_of: np.ndarray | None = None  # the rows they were computed on
        self._monomials: list[Term] | None = None  # an inner leaf's basis
        self._monomials_of: np.ndarray | None = None

    def __getstate__(self) -> dict:
        # the bases are functions of the rows: computed again, not kept in a checkpoint
        return dict(self.__dict__, _features=None, _features_of=None, _monomials=None,
                    _monomials_of=None)

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
        expressions += self._inner_sums(sources, fitter, search.config.linear_terms)
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
        lib, arity, cid = self.library, self.library.arity_by_id, self.library.const_id
        seen, terms = set(), []
        for cand in sources[:SUBTREE_SOURCES]:
            prefix = cand.expression.prefix()
            constants = list(cand.expression.prefix_constants())
            first_constant = np.cumsum([0] + [t == cid for t in prefix])
            for i, token in enumerate(prefix):
                end = subtree_end(prefix, i, arity)
                key = tuple(prefix[i:end])
                if not arity[token] or key in seen:
                    continue
                seen.add(key)
                held = constants[first_constant[i]:first_constant[end]]
                sub = Expression.from_prefix(prefix[i:end], lib, held)
                values = sub.evaluate(X)
                if np.all(np.isfinite(values)):
                    terms.append(Term(prefix[i:end], held, values))
        return terms

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
        lib = self.library
        needed = {"add", "mul"} | ({"div"} if any(t.reciprocal for t in terms) else set())
        if not needed <= set(lib.names):
            return None
        add, c = lib.index("add"), lib.const_id
        prefix: list[int] = []
        constants: list[float] = []
        for term, k in zip(terms, coef[:-1]):
            prefix += [add, lib.index("div" if term.reciprocal else "mul"), c] + term.prefix
            constants += [float(k)] + list(term.constants)
        prefix.append(c)
        constants.append(float(coef[-1]))
        if not np.all(np.isfinite(constants)):
            return None
        return prefix, constants

    def _inner_sums(self, sources: list[Candidate], fitter, n_terms: int) -> list[Expression]:
        """The best ``sources`` with a linear leaf in place of one of their sub-trees: the
        ``INNER_PROPOSALS`` of them closest to y on the constant fit's rows."""
        if "add" not in self.library.names or "mul" not in self.library.names:
            return []
        # evenly spread over the rows (a table sorted by x keeps its whole range)
        rows = np.unique(np.linspace(0, len(fitter.target) - 1, LEAF_ROWS).astype(int))
        X, y, weights = fitter.X[rows], fitter.target[rows], fitter.sqrt_w[rows]
        monomials = self._monomial_terms(X)
        if not monomials:
            return []
        B = np.column_stack([t.values for t in monomials])
        written: dict[tuple, tuple[float, Expression]] = {}
        for cand in sources[:LEAF_SOURCES]:
            for expression in self._with_leaves(cand.expression, X, y, weights, monomials, B,
                                                n_terms):
                with np.errstate(all="ignore"):
                    residual = (expression.evaluate(X) - y) * weights
                    loss = float(residual @ residual)
                if math.isfinite(loss) and loss < written.get(expression.key, (math.inf,))[0]:
                    written[expression.key] = (loss, expression)
        closest = sorted(written.values(), key=lambda pair: pair[0])[:INNER_PROPOSALS]
        return [expression for _, expression in closest]

    def _with_leaves(self, source: Expression, X: np.ndarray, y: np.ndarray,
                     weights: np.ndarray, monomials: list[Term], B: np.ndarray,
                     n_terms: int) -> Iterator[Expression]:
        """``source`` with a sum of ``monomials`` (the columns of ``B``) in place of each of
        its invertible sub-trees in turn, the sum fitted to the values it must take there
        (each step of the forward selection's path, up to ``n_terms`` terms)."""
        lib, arity = self.library, self.library.arity_by_id
        names = [t.name for t in lib.tokens]
        prefix, constants = source.prefix(), list(source.prefix_constants())
        first_constant = np.cumsum([0] + [t == lib.const_id for t in prefix])
        ends = [subtree_end(prefix, i, arity) for i in range(len(prefix))]
        values = [Expression.from_prefix(
            prefix[i:ends[i]], lib, constants[first_constant[i]:first_constant[ends[i]]]
        ).evaluate(X) for i in range(len(prefix))]
        for place in range(1, len(prefix)):
            if not invertible(names, prefix, arity, place):
                continue
            target = subtree_target(prefix, arity, names, values, place, y)
            defined = np.isfinite(target)
            if defined.mean() < 0.9:  # the formula cannot reach y on many rows
                continue
            for columns, coef in forward_selection(B, np.where(defined, target, 0.0),
                                                   np.where(defined, weights, 0.0), n_terms):
                leaf = self._sum_prefix([monomials[j] for j in columns], coef)
                tokens = None if leaf is None else prefix[:place] + leaf[0] + prefix[ends[place]:]
                if tokens is None or len(tokens) > self.max_length:
                    continue
                yield Expression.from_prefix(
                    tokens, lib, constants[:first_constant[place]] + leaf[1]
                    + constants[first_constant[ends[place]]:])

    def _monomial_terms(self, X: np.ndarray) -> list[Term]:
        """The monomials ∏ x_j^e_j of an inner leaf's basis (see the constants above),
        finite on every row; built once for the rows ``X``."""
        if self._monomials_of is None or not np.array_equal(self._monomials_of, X):
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
                        terms.append(Term(_product(denominator, mul), [], values,
                                          reciprocal=True))
                    elif not denominator:
                        terms.append(Term(_product(numerator, mul), [], values))
                    else:
                        terms.append(Term([div] + _product(numerator, mul)
                                          + _product(denominator, mul), [], values))
            self._monomials, self._monomials_of = terms, X
        return self._monomials


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
