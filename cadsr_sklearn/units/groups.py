"""Dimensional reduction: a law as a prefactor times a function of dimensionless groups.

Buckingham's π theorem: a law in n features whose units span r independent base
dimensions is the target's units times a function of n − r dimensionless groups,
the monomials ∏ xᵢ^eᵢ whose exponent vectors e span the null space of the dimension
matrix D (D e = 0; D is base dimensions × features). With the target's units u, a
*prefactor* P = ∏ xᵢ^pᵢ with D p = u carries them, and

    y = P(x) · f(π₁(x), …, π_{n−r}(x)).

``m_0/sqrt(1 - v**2/c**2)`` is ``m_0 · f(v/c)``: three features, one group. The
search for f runs on fewer features, all dimensionless, where the units rule has
nothing left to forbid (:mod:`cadsr_sklearn.search.reduction`).

**Which basis.** Any basis of the null space is a reduction, and the search sees
only the one it is given, so the choice matters: f(v/c) is short, f(v·c/c², …) is
not. :func:`dimensional_reduction` enumerates dimensionless monomials with small
integer exponents (|eᵢ| ≤ 2, at most four features) and takes them greedily, each
the one that adds a dimension to the span and, in this order: has the fewest
features; shares the fewest features with the groups already taken (each feature
in as few groups as possible); has the smallest exponents (so ``v/c``, a ratio of
like quantities, comes first); lies earliest in the column order. Where these do
not complete the basis (a group needing larger exponents), SymPy's rational null
space, scaled to integers, completes it. The prefactor is chosen by the same
ranking among monomials with the target's units, integer exponents before
half-integer ones. Given the data, each ratio of two features is then turned so that
its median magnitude is at most 1 (``v/c``, not ``c/v``: laws expand in small ratios);
other groups keep the enumeration's sign (a dimensionless feature stays itself).

Three or more features with the same units (coordinates and a distance, three
components of a field) are each taken relative to one reference, before the greedy
choice: ``x/r, y/r, z/r``, the reference being the one the prefactor holds (else the
largest on the rows, so that the ratios are below 1), and these ratios are not turned.
A physicist writes ``Bx*sqrt(1 + (By/Bx)**2 + (Bz/Bx)**2)`` and ``z/r * sqrt((x/r)**2 +
(y/r)**2)``; the greedy rule alone, keeping each feature in as few groups as possible,
took ``Bx/By, Bz/Bx`` and ``x/r, z/y, y/r``, in which these laws are longer.

The choice is deterministic; :attr:`Reduction.description` says which it is.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np
import sympy

from ..expressions.expression import Expression
from ..expressions.formula_parser import parse_formula
from ..expressions.library import Library
from .quantities import Units

__all__ = ["Reduction", "dimensional_reduction"]

#: The largest |exponent| and the most features of an enumerated group or prefactor.
MAX_EXPONENT, MAX_FEATURES = 2, 4


@dataclass(frozen=True)
class Reduction:
    """A law's target as ``prefactor · f(groups)``, each a monomial of the features.

    Attributes
    ----------
    names : tuple of str
        The features' symbols, in column order.
    groups : tuple of tuple of Fraction
        One exponent vector per dimensionless group (n_groups, n_features).
    prefactor : tuple of Fraction
        The exponents of the monomial that carries the target's units.
    """

    names: tuple[str, ...]
    groups: tuple[tuple[Fraction, ...], ...]
    prefactor: tuple[Fraction, ...]

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def group_formulas(self) -> list[sympy.Expr]:
        """Each group as a SymPy monomial of the features' symbols (π₁, π₂, …)."""
        return [_monomial(e, self.names) for e in self.groups]

    def prefactor_formula(self) -> sympy.Expr:
        return _monomial(self.prefactor, self.names)

    @property
    def description(self) -> str:
        """``"m_0 * f(v/c)"``: the prefactor and the groups f takes, in that order."""
        groups = ", ".join(str(g) for g in self.group_formulas())
        prefactor = self.prefactor_formula()
        return f"f({groups})" if prefactor == 1 else f"{prefactor} * f({groups})"

    def group_values(self, X: np.ndarray) -> np.ndarray:
        """(S, n_groups) the groups' values at the rows of ``X``."""
        return np.column_stack([_monomial_values(X, e) for e in self.groups]) if self.groups \
            else np.empty((len(X), 0))

    def prefactor_values(self, X: np.ndarray) -> np.ndarray:
        """(S,) the prefactor's values at the rows of ``X``."""
        return _monomial_values(X, self.prefactor)

    def applies_to(self, X: np.ndarray) -> bool:
        """Whether every group and the prefactor are finite, and the prefactor non-zero,
        on every row (a negative feature under a half-integer exponent, or a zero one
        divided by, leaves the reduced target undefined there)."""
        with np.errstate(all="ignore"):
            prefactor, groups = self.prefactor_values(X), self.group_values(X)
        return bool(np.all(np.isfinite(prefactor)) and np.all(prefactor != 0)
                    and np.all(np.isfinite(groups)))

    def rewrite(self, expression: Expression, library: Library) -> Expression:
        """A formula f of the groups (a tree of a library whose features are the groups,
        in order) as ``prefactor · f(groups)``, a tree of ``library`` in the features:
        every group leaf replaced by the group's monomial, the constants where they were.
        Raises ValueError where ``library`` cannot write a monomial (a half-integer
        exponent without ``sqrt``)."""
        inner = expression.library
        variables = {int(t): j for j, t in enumerate(inner.variable_ids)}
        subtrees = [_prefix(g, self.names, library) for g in self.groups]
        tokens, constants = [], []
        values = iter(expression.prefix_constants())
        for token in expression.prefix():
            if token in variables:
                group_tokens, group_constants = subtrees[variables[token]]
                tokens += group_tokens
                constants += group_constants
            else:
                tokens.append(library.index(inner.names[token]))
                if token == inner.const_id:
                    constants.append(float(next(values)))
        if any(self.prefactor):
            prefactor_tokens, prefactor_constants = _prefix(self.prefactor, self.names, library)
            tokens = [library.index("mul")] + prefactor_tokens + tokens
            constants = prefactor_constants + constants
        return Expression.from_prefix(tokens, library, constants)

    def constant_law(self, library: Library) -> Expression:
        """``c · prefactor``, the law where there is no group, as a tree of ``library``
        (c started at 1); ValueError for a library without the constant token."""
        if library.const_id is None:
            raise ValueError("the library has no constant token")
        tokens, constants = _prefix(self.prefactor, self.names, library)
        return Expression.from_prefix([library.index("mul"), library.const_id] + tokens, library,
                                      [1.0] + constants)


def dimensional_reduction(units: Units, names: Sequence[str],
                          X: np.ndarray | None = None) -> Reduction | None:
    """The reduction of a law with ``units`` (:mod:`the module <.groups>` says which basis),
    each group turned to a median magnitude of at most 1 on the rows of ``X`` where given;
    None where there is none to make: no target units, every feature dimensionless, or a
    target whose units no monomial of the features has (a dimensional constant)."""
    if units.target is None or not units.constrains:
        return None
    D = units.features.T.astype(float)  # (d, n): base dimensions × features
    n = D.shape[1]
    rank = np.linalg.matrix_rank(D)
    if rank == 0:
        return None
    prefactor = _prefactor(D, units.target.astype(float))
    if prefactor is None:
        return None
    shared = _shared_references(D, prefactor, X)
    groups = _groups(D, n - rank, shared)
    if X is not None:
        with np.errstate(all="ignore"):
            groups = [-g if _is_ratio(g) and not any(np.array_equal(g, r) for r in shared)
                      and np.median(np.abs(_monomial_values(X, g))) > 1 else g
                      for g in groups]
    return Reduction(tuple(names), tuple(tuple(Fraction(int(v)) for v in g) for g in groups),
                     prefactor)


def _shared_references(D: np.ndarray, prefactor: Sequence[Fraction],
                       X: np.ndarray | None) -> list[np.ndarray]:
    """The ratios xⱼ/x_ref of every class of three or more features with the same units
    to one reference of the class: the member the prefactor holds, else the largest on
    the rows of X (the ratios below 1), else the first."""
    n = D.shape[1]
    ratios = []
    for units in np.unique(D.T, axis=0):
        members = [j for j in range(n) if np.array_equal(D[:, j], units)]
        if len(members) < 3 or not np.any(units):
            continue
        in_prefactor = [j for j in members if prefactor[j] != 0]
        if in_prefactor:
            reference = in_prefactor[0]
        elif X is not None:
            with np.errstate(all="ignore"):
                reference = max(members, key=lambda j: float(np.median(np.abs(X[:, j]))))
        else:
            reference = members[0]
        for j in members:
            if j != reference:
                e = np.zeros(n)
                e[j], e[reference] = 1.0, -1.0
                ratios.append(e)
    return ratios


def _groups(D: np.ndarray, k: int, shared: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
    """k integer exponent vectors spanning the null space of D: the ``shared`` ratios
    first, then chosen greedily."""
    candidates = _monomials(D, np.zeros(D.shape[0]), np.arange(-MAX_EXPONENT, MAX_EXPONENT + 1))
    candidates = candidates[_first_nonzero(candidates) > 0]  # π and 1/π are one group
    chosen: list[np.ndarray] = [np.asarray(r, dtype=float) for r in shared][:k]
    while len(chosen) < k:
        used = np.any(np.array(chosen) != 0, axis=0) if chosen else np.zeros(D.shape[1], bool)
        ranked = sorted((c for c in candidates if _adds_rank(chosen, c)),
                        key=lambda e: _cost(e, used))
        if not ranked:
            break
        chosen.append(ranked[0])
    for vector in _integer_null_space(D):  # exponents larger than the enumeration's
        if len(chosen) == k:
            break
        if _adds_rank(chosen, vector):
            chosen.append(vector)
    return chosen


def _prefactor(D: np.ndarray, target: np.ndarray) -> tuple[Fraction, ...] | None:
    """The exponents of the cheapest monomial with the target's units, integers first."""
    n = D.shape[1]
    if not np.any(target):
        return tuple(Fraction(0) for _ in range(n))
    integers = np.arange(-MAX_EXPONENT - 1, MAX_EXPONENT + 2, dtype=float)  # r**-3: a dipole
    halves = np.arange(-2 * MAX_EXPONENT, 2 * MAX_EXPONENT + 1) / 2
    for values, most in ((integers, MAX_FEATURES), (halves, MAX_FEATURES - 1)):
        found = _monomials(D, target, values, most)
        if len(found):
            best = min(found, key=lambda p: _cost(p, np.zeros(n, bool)))
            return tuple(Fraction(v).limit_denominator(2) for v in best)
    return None


def _monomials(D: np.ndarray, units: np.ndarray, values: np.ndarray,
               most: int = MAX_FEATURES) -> np.ndarray:
    """(m, n) every exponent vector with at most ``most`` non-zero entries taken from
    ``values`` whose monomial has ``units`` (D e = units)."""
    n = D.shape[1]
    nonzero = np.asarray([v for v in values if v != 0], dtype=float)
    found = []
    for size in range(1, min(n, most) + 1):
        exponents = np.array(list(itertools.product(nonzero, repeat=size)))  # (m, size)
        for support in itertools.combinations(range(n), size):
            hits = exponents[np.all(np.abs(exponents @ D[:, support].T - units) < 1e-9, axis=1)]
            for row in hits:
                e = np.zeros(n)
                e[list(support)] = row
                found.append(e)
    return np.array(found).reshape(-1, n)


def _cost(e: np.ndarray, used: np.ndarray) -> tuple:
    """The ranking of the module's docstring: features, overlap, exponents, position."""
    support = np.flatnonzero(e != 0)
    magnitude = float(np.abs(e).sum())
    fractional = bool(np.any(e != np.round(e)))
    return (len(support), int(used[support].sum()), fractional, magnitude,
            float(np.abs(e).max()), tuple(support))


def _first_nonzero(E: np.ndarray) -> np.ndarray:
    """The first non-zero entry of each row of E (m, n), or of one vector."""
    E = np.atleast_2d(E)
    return E[np.arange(len(E)), np.argmax(E != 0, axis=1)]


def _is_ratio(e: np.ndarray) -> bool:
    """Whether e is xᵢ/xⱼ."""
    return sorted(e[e != 0].tolist()) == [-1.0, 1.0]


def _adds_rank(chosen: list[np.ndarray], e: np.ndarray) -> bool:
    stack = np.array([*chosen, e], dtype=float)
    return np.linalg.matrix_rank(stack) == len(chosen) + 1


def _integer_null_space(D: np.ndarray) -> list[np.ndarray]:
    """SymPy's rational null space of D, each vector scaled to coprime integers."""
    rational = sympy.Matrix([[sympy.Rational(Fraction(v).limit_denominator(1000)) for v in row]
                             for row in D])
    out = []
    for vector in rational.nullspace():
        scale = sympy.ilcm(*[sympy.fraction(v)[1] for v in vector])
        integers = [int(v * scale) for v in vector]
        divisor = int(np.gcd.reduce(np.abs(integers)))
        e = np.array([v // divisor for v in integers], dtype=float)
        out.append(e if _first_nonzero(e)[0] > 0 else -e)
    return out


def _monomial(exponents: Sequence[Fraction], names: Sequence[str]) -> sympy.Expr:
    return sympy.Mul(*[sympy.Symbol(name) ** sympy.Rational(e.numerator, e.denominator)
                       for name, e in zip(names, exponents) if e != 0])


def _monomial_values(X: np.ndarray, exponents: Sequence[Fraction]) -> np.ndarray:
    values = np.ones(len(X))
    with np.errstate(all="ignore"):
        for column, e in zip(X.T, exponents):
            if e != 0:
                values = values * np.power(column, float(e))
    return values


def _prefix(exponents: Sequence[Fraction], names: Sequence[str],
            library: Library) -> tuple[list, list]:
    """A monomial as preorder tokens of ``library`` and its constants (none): integer
    powers as repeated products, so that no exponent becomes a fitted ``pow`` constant
    (which the units rule forbids on a dimensional base), half-integer ones with ``sqrt``."""
    factors = []
    for name, e in zip(names, exponents):
        symbol = sympy.Symbol(name)
        whole, half = divmod(abs(e), 1)
        powers = [symbol] * int(whole) + ([sympy.sqrt(symbol)] if half else [])
        factors += powers if e > 0 else [sympy.Pow(f, -1, evaluate=False) for f in powers]
    factors.sort(key=lambda f: f.is_Pow and f.exp == -1)  # numerator first: div, not inv
    formula = factors[0] if len(factors) == 1 else sympy.Mul(*factors, evaluate=False)
    tree = parse_formula(formula, names, library)
    return tree.prefix(), [float(v) for v in tree.prefix_constants()]
