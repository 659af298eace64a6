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
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..expressions.expression import Expression
from ..expressions.library import Library
from ..scoring.scorer import Candidate
from ..settings import TrainingSettings
from .genetic import subtree_end
from .proposers import LINEAR, Proposal

if TYPE_CHECKING:  # the loop's record of a search; it imports the proposers
    from .training import SearchParts

__all__ = ["LinearCombinations", "Term", "forward_selection"]

#: The best formulas of the epoch whose sub-trees join the basis.
SUBTREE_SOURCES = 10


@dataclass(frozen=True)
class Term:
    """One basis column: a sub-tree in preorder, its constants (preorder) and its values."""

    prefix: list[int]
    constants: list[float]
    values: np.ndarray  # (n,) on the constant fit's rows


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

    def __getstate__(self) -> dict:
        # the basis is a function of the rows: computed again, not kept in a checkpoint
        return dict(self.__dict__, _features=None, _features_of=None)

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
        lib = self.library
        if "add" not in lib.names or "mul" not in lib.names:
            return None
        add, mul, c = lib.index("add"), lib.index("mul"), lib.const_id
        prefix: list[int] = []
        constants: list[float] = []
        for term, k in zip(terms, coef[:-1]):
            prefix += [add, mul, c] + term.prefix
            constants += [float(k)] + list(term.constants)
        prefix.append(c)
        constants.append(float(coef[-1]))
        if len(prefix) > self.max_length or not np.all(np.isfinite(constants)):
            return None
        return Expression.from_prefix(prefix, lib, constants)
