"""The shortest SymPy form that equals τ* on the training data.

The search's formula is a token tree written the way the policy happened to
build it: ``sqrt(x**4)``, ``log(2.71828182845905*exp(x))``,
``cos(u + 1.5707963267949)``, a golden-ratio factorisation of a polynomial with
integer coefficients. A reader wants ``x**2``, ``x + 1``, ``-sin(u)`` and the
polynomial. This module rewrites the SymPy form of τ* and keeps a rewrite only
when it predicts what the tree predicts on the training rows to within
round-off, so the formula it reports is the same function on the data, shorter.

The rewrites, each an identity over the reals or a numerically checked one:

1. Features are real: ``sqrt(x**4) = x**2`` and ``log(exp(x)) = x``, which SymPy
   cannot assume for complex symbols.
2. Constants within round-off of a simple number become that number (fractions
   of two-digit numbers, 2π, π/2, 4π², √2, 1/√(2π), powers e^(p/q): see
   :mod:`cadsr_sklearn.expressions.simple_numbers`), and 0 for constants next to nothing.
   SymPy then folds ``cos(u + π/2)`` into ``-sin(u)`` and
   ``7.38905609893065**log(x)`` (e² to round-off) into ``x**2`` by itself.
3. ``expand_log`` splits logarithms of products and powers (checked on the data:
   ``log(a·b) = log a + log b`` needs a, b > 0 there), and a power of a
   reciprocal, ``(1/a)**p``, is written as one, ``a**(-p)``, also once a sum's
   leading minus is taken out: ``sqrt(-1/(-1 + x))`` is ``1/sqrt(1 - x)``.
4. ``expand`` multiplies out products of sums, when the result is small, and a
   power of a positive feature moves into the square root of a sum beside it when that
   is shorter: ``Bx*sqrt(1 + By**2/Bx**2)`` is ``sqrt(Bx**2 + By**2)`` where Bx > 0 on
   the rows (a search on dimensionless groups writes such forms back).
5. ``trigsimp`` joins sines and cosines by the trigonometric identities, when
   there are several or a snapped phase (π) stands in one, and the formula is
   small: ``sin(x)*sin(y + 7*pi/6) + sin(y)*sin(x + pi/6) - sin(y)`` is
   ``-sin(y) - sin(x - y)/2``.

Among the forms that pass the check on every training row, the one with the
fewest nodes in SymPy's preorder traversal (SRBench's complexity) is kept: a
structural rewrite only when strictly shorter than the formula as found (off
the training rows, a split log may be undefined where the product's log is not),
snapped constants alone also at equal size, each simple number counted as the
one constant it replaces (``2*pi*sqrt(L/g)`` for ``6.28318530717959*sqrt(L/g)``,
though SymPy counts 2 and π apart).

Last, for the reader rather than for size: a constant raised to a power that
varies, b**u, is an exponential in disguise and is written as one, exp(ln(b)·u):
``0.9996**x`` is ``exp(-0.0004*x)``, ``0.1835**sqrt(x)`` is
``exp(-1.695*sqrt(x))``, the rate a scientist looks for (one node longer). So is
a snapped base that is no integer: ``(3/pi)**(0.0817*x)`` (a base and a rate
that only act together, so any base fits) is ``exp(-0.00380*x)``, with no π
that is not there; but a rate that is itself round-off from a simple number is
written as that number, as any constant is: ``1.17252**(h*omega/(T*kb))`` (the base
e^(1/(2π))) is ``exp(h*omega/(2*pi*T*kb))``, and a base raised to ``0.6546*log(u)``,
which SymPy merges into ``u**(-0.5000000000000073)``, is ``1/sqrt(u)``. Integer
bases stay: ``2**x`` is a doubling. So does a power with no fitted number in it,
``(7/2)**x``: its rate would be a decimal that reads as fitted, though it is
fixed. And a quotient by a sum that reads negative has the sign moved up:
``-39.56/(-g - 0.02629)`` is ``39.56/(g + 0.02629)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import sympy

from ..expressions.notation import sympy_values
from ..expressions.expression import sympy_complexity
from ..expressions.simple_numbers import is_small_rational, snap_number

__all__ = ["simplest_equivalent", "round_off_equal"]

PREDICTION_RTOL = 1e-10
"""A rewrite may move no prediction by more than this times the largest |ŷ|."""

MAX_TRIGSIMP_OPS = 30
"""Trigonometric identities are tried on formulas of at most this many SymPy operations."""

MAX_EXPANDED_TERMS = 64
"""``expand`` is skipped when any product or power in the formula, at any depth
(inside functions and denominators too), could multiply out to more terms than this."""


def round_off_equal(
    candidate: np.ndarray, reference: np.ndarray, rtol: float = PREDICTION_RTOL
) -> bool:
    """Whether ``candidate`` is real, finite and within round-off of the finite ``reference``."""
    candidate = np.asarray(candidate)
    if np.iscomplexobj(candidate) or candidate.dtype == object:
        return False
    candidate = np.broadcast_to(candidate.astype(np.float64), reference.shape)
    if not np.all(np.isfinite(candidate)):
        return False
    scale = float(np.max(np.abs(reference))) if reference.size else 0.0
    return bool(np.max(np.abs(candidate - reference), initial=0.0) <= rtol * scale)


def _snap_constants(expr: sympy.Expr, matches: Callable[[sympy.Expr], bool]) -> sympy.Expr:
    """Every float that is round-off from a simple number, replaced by it where the data agree."""
    snaps = {f: s for f in expr.atoms(sympy.Float)
             if (s := snap_number(float(f))) is not None}
    if not snaps:
        return expr
    snapped = expr.xreplace(snaps)
    if matches(snapped):
        return snapped
    for f, s in snaps.items():  # all at once was too much: take those that hold one by one
        trial = expr.xreplace({f: s})
        if matches(trial):
            expr = trial
    return expr


class _TooLarge(Exception):
    pass


def _expansion_is_small(expr: sympy.Expr) -> bool:
    """Whether ``sympy.expand`` stays within :data:`MAX_EXPANDED_TERMS` terms everywhere.

    An upper bound on the terms each subexpression multiplies out to, checked at
    every depth: ``expand`` also multiplies out arguments of functions and
    denominators, so ``1/(x + y + z + 1)**60`` inside a ``sin`` counts.
    """

    def terms(e: sympy.Expr) -> int:
        if e.is_Add:
            n = sum(terms(a) for a in e.args)
        elif e.is_Mul:
            n = math.prod(terms(a) for a in e.args)
        elif e.is_Pow and e.exp.is_Integer:
            base, k = terms(e.base), abs(int(e.exp))
            n = 1 if base == 1 else (
                math.inf if k > MAX_EXPANDED_TERMS else math.comb(base + k - 1, k)
            )
        else:  # a function, a symbol, a number: one term, its arguments expanded on their own
            for a in e.args:
                terms(a)
            n = 1
        if n > MAX_EXPANDED_TERMS:
            raise _TooLarge
        return n

    try:
        terms(expr)
    except _TooLarge:
        return False
    return True


def _rewrites(expr: sympy.Expr, snap: Callable[[sympy.Expr], sympy.Expr]) -> list[sympy.Expr]:
    """Rewritten forms of ``expr`` (real symbols, constants snapped), preferred first at equal size.

    Between rewrites of equal size, the multiplied-out form comes first: a
    polynomial's coefficients then stand on their own. Expanding makes new
    near-integers (a golden-ratio factorisation's coefficients), so expanded
    forms are snapped again.
    """
    logs = sympy.expand_log(expr, force=True)
    expanded = [snap(sympy.expand(f)) for f in (expr, logs) if _expansion_is_small(f)]
    # |u| as u where the data say it is (a positive target: sqrt(f**2) is f), checked
    unsigned = expr.replace(sympy.Abs, lambda argument: argument)
    # 0**u as 0 where u > 0 on the rows (a base snapped to 0), checked
    zero_powers = expr.replace(lambda e: e.is_Pow and e.base == 0, lambda e: sympy.Integer(0))
    trigonometric = [snap(sympy.trigsimp(expr))] if _trigonometry_to_join(expr) else []
    # the sign out of a reciprocal's sum first: sqrt(-1/(-1 + x)) is 1/sqrt(1 - x)
    denested = _denested_powers(_signs_out_of_sums(expr))
    return expanded + [snap(logs), snap(_denested_powers(expr)), snap(denested),
                       snap(sympy.factor_terms(expr)),
                       snap(_factors_into_roots(expr)), snap(unsigned),
                       snap(zero_powers)] + trigonometric


def _factors_into_roots(expr: sympy.Expr) -> sympy.Expr:
    """In every product with the square root of a sum, a power of a positive feature
    beside it taken into the root where that is shorter: ``Bx*sqrt(1 + By**2/Bx**2)`` is
    ``sqrt(Bx**2 + By**2)`` (the form a search on the groups ``By/Bx`` writes back), while
    ``c**2*m/sqrt(1 - v**2/c**2)`` stays: a root of a dimensionless sum is how its law is
    written, and ``c**3*m/sqrt(c**2 - v**2)`` is no identity over the complex numbers
    SRBench's judge assumes. Only the whole power of one feature moves, so that nothing
    outside the root grows, and only where it clears the feature from the root's
    denominators, or where it gives a sum with no number in it its one at no greater
    size: ``c*m/sqrt(c**2 - v**2)`` is ``m/sqrt(1 - v**2/c**2)``."""
    def is_sum_root(e: sympy.Expr) -> bool:
        return e.is_Pow and e.base.is_Add and e.exp in (sympy.S.Half, -sympy.S.Half)

    def absorbed(product: sympy.Expr) -> sympy.Expr:
        best, size = product, sympy_complexity(product)
        for root in filter(is_sum_root, product.args):
            for factor in product.args:
                feature, power = factor.as_base_exp()
                if factor == root or not (feature.is_Symbol and feature.is_positive
                                          and power.is_Integer):
                    continue
                # s**k * A**(±1/2) = (A * s**(±2k))**(±1/2) for s > 0
                inside = sympy.expand(root.base * feature ** (2 * power / (2 * root.exp)))
                # a move that gives the sum its 1 (c/sqrt(c**2 - v**2) is 1/sqrt(1 - v**2/c**2))
                normalises = not _has_number(root.base) and _has_number(inside)
                if _holds_reciprocal(inside, feature) and not normalises:
                    continue  # otherwise, only a move that clears a denominator
                trial = product / (factor * root) * inside ** root.exp
                if sympy_complexity(trial) < size + normalises:
                    best, size = trial, sympy_complexity(trial)
        return best

    return expr.replace(lambda e: e.is_Mul and any(map(is_sum_root, e.args)), absorbed)


def _ones(expr: sympy.Expr) -> int:
    """The square roots of sums with a number term in ``expr`` (``sqrt(1 - v**2/c**2)``)."""
    return sum(1 for p in expr.atoms(sympy.Pow)
               if p.exp in (sympy.S.Half, -sympy.S.Half) and _has_number(p.base))


def _has_number(total: sympy.Expr) -> bool:
    """Whether the sum ``total`` has a term that is a number."""
    return total.is_Add and any(term.is_Number for term in total.args)


def _holds_reciprocal(expr: sympy.Expr, symbol: sympy.Symbol) -> bool:
    """Whether ``symbol`` appears in ``expr`` raised to a negative power."""
    return any(p.base == symbol and p.exp.is_negative for p in expr.atoms(sympy.Pow))


def _trigonometry_to_join(expr: sympy.Expr) -> bool:
    """Whether ``trigsimp`` may shorten ``expr``: several sines and cosines, or one whose
    argument holds π (a phase the snap fixed), in a formula small enough for it (it takes
    about 0.05–0.4 s at MAX_TRIGSIMP_OPS)."""
    calls = [f for f in expr.atoms(sympy.sin, sympy.cos, sympy.tan)]
    return (bool(calls) and (len(calls) > 1 or calls[0].args[0].has(sympy.pi))
            and sympy.count_ops(expr) <= MAX_TRIGSIMP_OPS)


def _denested_powers(expr: sympy.Expr) -> sympy.Expr:
    """(1/a)**p as a**(-p), which SymPy cannot assume: equal for every real a (a < 0 and
    a non-integer p give NaN both ways). (a**2)**p is left alone: it is |a|**(2p), not
    a**(2p); and so is a power of a product, ``(L/g)**0.5`` reading as the ratio it is."""
    return expr.replace(lambda e: e.is_Pow and e.base.is_Pow and e.base.exp == -1,
                        lambda e: e.base.base ** (-e.exp))


def simplest_equivalent(
    expr: sympy.Expr,
    X: np.ndarray,
    reference: np.ndarray,
    symbols: Sequence[sympy.Symbol],
    keep: Sequence[sympy.Symbol] = (),
) -> sympy.Expr:
    """The shortest rewrite of ``expr`` that predicts ``reference`` on every row of ``X``.

    Parameters
    ----------
    expr : sympy.Expr
        A formula in ``symbols`` (plain SymPy symbols, one per column of X).
    X : ndarray of shape (n_samples, n_features)
        Rows to check rewrites on (all of them: a rewrite such as a split log
        can fail on a single row).
    reference : ndarray of shape (n_samples,)
        What ``expr`` must keep predicting there (the token tree's output); finite.
    symbols : sequence of sympy.Symbol
        The feature symbols, in column order.
    keep : sequence of sympy.Symbol, optional
        Symbols no rewrite may drop (those of ``required_features`` that
        ``expr`` holds): a feature whose terms cancel on the training rows, or
        whose factor is round-off from 0, stays in the formula.

    Returns
    -------
    sympy.Expr
        In the same plain symbols. Snapping constants alone is kept at equal
        size (``1`` reads better than ``0.999999999999997``); a structural
        rewrite only when it is strictly shorter. ``expr`` itself when no
        rewrite qualifies.
    """
    reference = np.asarray(reference, dtype=np.float64)
    if not np.all(np.isfinite(reference)):
        return expr
    # Real features, positive where every training value is: sqrt(x**4) = x**2 needs
    # the first, sqrt(x**3) = x**(3/2) the second (sympy_values takes them as real too)
    positive = np.all(X > 0, axis=0) if len(X) else np.zeros(len(symbols), bool)
    real = [sympy.Dummy(s.name, positive=True) if is_positive else sympy.Dummy(s.name, real=True)
            for s, is_positive in zip(symbols, positive)]
    to_real = dict(zip(symbols, real))
    to_plain = dict(zip(real, symbols))

    kept = [to_real[s] for s in keep if s in expr.free_symbols]

    def matches(candidate: sympy.Expr) -> bool:
        if not all(candidate.has(s) for s in kept):
            return False
        try:
            return round_off_equal(sympy_values(candidate, real, X), reference)
        except Exception:  # noqa: BLE001 - a form NumPy cannot evaluate is simply not kept
            return False

    try:
        realised = expr.xreplace(to_real)
        snap = partial(_snap_constants, matches=matches)
        snapped = snap(realised)
        rewrites = _rewrites(snapped, snap)
    except Exception:  # noqa: BLE001 - SymPy failing on an odd form leaves the formula as it is
        return expr
    best, best_size = expr, sympy_complexity(expr)
    plain = snapped.xreplace(to_plain)
    if _reading_size(plain) <= _reading_size(expr) and matches(snapped):
        best, best_size = plain, sympy_complexity(plain)
    for form in rewrites:
        plain = form.xreplace(to_plain)
        size = sympy_complexity(plain)
        if size < best_size and matches(form):
            best, best_size = plain, size
    # A root that only the rewrites above laid bare (x*sqrt(1 + y**2/x**2) out of
    # ((1 + sqrt(1 + (y/x)**2))*z - z)*x, or a number common to its sum) takes the
    # powers beside it now
    if any(p.exp in (sympy.S.Half, -sympy.S.Half) for p in best.atoms(sympy.Pow)):
        moved = _factors_into_roots(sympy.factor_terms(snap(best.xreplace(to_real))))
        plain = moved.xreplace(to_plain)
        size = sympy_complexity(plain)
        normalised = size == best_size and _ones(plain) > _ones(best)
        if (size < best_size or normalised) and matches(moved):
            best, best_size = plain, size
    # Plain symbols again: SymPy splits the root of a product of positive symbols,
    # sqrt(L)/sqrt(g), which is joined again as laws are written, sqrt(L/g) (a split
    # root is also no identity over the complex numbers SRBench's judge assumes)
    joined = _joined_roots(best)
    if joined != best and matches(joined.xreplace(to_real)):
        best = joined
    for rewrite in (_constant_bases_as_exponentials, _small_bases, _signs_out_of_sums):
        readable = rewrite(best)
        if readable != best and matches(readable.xreplace(to_real)):
            best = readable
    # A rate or exponent that these rewrites made, SymPy merging ln(b) with the fitted
    # number beside it, may be round-off from a simple number: 1.17252**u is exp(u/(2π))
    # (on the plain symbols: positive ones would split sqrt(L/g) again)
    resnapped = _snap_constants(best, lambda form: matches(form.xreplace(to_real)))
    if _reading_size(resnapped) <= _reading_size(best):
        best = resnapped
    return _plain_large_numbers(best)


def _reading_size(expr: sympy.Expr) -> int:
    """Nodes as a reader counts them: SymPy's preorder count, with the numbers among the
    arguments of a sum or product, and any subtree that is a number, counted as one."""
    if expr.is_number:
        return 1
    if expr.is_Add or expr.is_Mul:
        numbers = [a for a in expr.args if a.is_number]
        return 1 + min(len(numbers), 1) + sum(_reading_size(a) for a in expr.args
                                               if not a.is_number)
    return 1 + sum(_reading_size(a) for a in expr.args)


def _constant_bases_as_exponentials(expr: sympy.Expr) -> sympy.Expr:
    """Every b**u with a constant base b > 0 that is no integer and a varying u as exp(ln(b)·u),
    where b or u holds a fitted number (a float).

    A power of exact numbers only, ``(7/2)**x`` with the base snapped, stays: its rate
    ln(7/2) could only be shown as the decimal 1.253, which reads, and would be listed in
    ``constants_``, as a fitted constant with a standard error, though nothing was fitted.
    """
    def is_constant_base(e: sympy.Expr) -> bool:
        return (e.is_Pow and e.base.is_number and not e.base.is_Integer
                and bool(e.base.is_positive) and not e.exp.is_number
                and bool(e.atoms(sympy.Float)))

    return expr.replace(is_constant_base,
                        lambda e: sympy.exp(sympy.log(e.base).evalf(16) * e.exp))


_SMALL_BASES = (2, 3, 10)


def _small_bases(expr: sympy.Expr) -> sympy.Expr:
    """exp(c·u) as b**(r·u) where c is round-off away from r·ln b, b in {2, 3, 10} and r a
    fraction of one-digit numbers: ``exp(-0.693147180559945*x)`` is ``2**(-x)``, a halving."""
    def as_small_base(e: sympy.Expr) -> sympy.Expr | None:
        rate, u = e.args[0].as_coeff_Mul()
        if not rate.is_Float or u.is_number:
            return None
        for base in _SMALL_BASES:
            ratio = snap_number(float(rate) / math.log(base))
            if ratio is not None and ratio.is_Rational and ratio != 0 and (
                    abs(ratio.p) < 10 and ratio.q < 10):
                return sympy.Integer(base) ** (ratio * u)
        return None

    def rewritten(e: sympy.Expr) -> sympy.Expr:
        power = as_small_base(e)
        return e if power is None else power

    return expr.replace(lambda e: e.func is sympy.exp, rewritten)


def _signs_out_of_sums(expr: sympy.Expr) -> sympy.Expr:
    """Every integer power of a sum whose text begins with a minus with the sign taken out
    of the sum: ``-39.56/(-g - 0.02629)`` as ``39.56/(g + 0.02629)``, ``(-a - b)**2`` as
    ``(a + b)**2`` (equal wherever either is defined), which SymPy keeps as they are where
    no rewrite is shorter. A sum such as ``0.02629 - g`` is left as it reads."""
    def reads_negative(e: sympy.Expr) -> bool:
        return (e.is_Pow and e.base.is_Add and e.exp.is_Integer
                and e.base.as_ordered_terms()[0].could_extract_minus_sign())

    return expr.replace(reads_negative,
                        lambda e: sympy.Integer(-1) ** e.exp * (-e.base) ** e.exp)


def _plain_large_numbers(expr: sympy.Expr) -> sympy.Expr:
    """Every number that holds a fraction with more than two digits above or below, as a
    decimal: ``sqrt(158)/2``, SymPy's way of taking 79/2 out of a root, is 6.2849, and
    a reader recognises no ``sqrt(3013074890)``."""
    def is_large(e: sympy.Expr) -> bool:
        return e.is_Rational and not is_small_rational(e)

    def holds_large(e: sympy.Expr) -> bool:
        return e.is_number and not e.is_Atom and any(is_large(a) for a in e.atoms(sympy.Rational))

    expr = expr.replace(holds_large, lambda e: sympy.Float(e.evalf(17), 17))
    return expr.xreplace({a: sympy.Float(a, 17) for a in expr.atoms(sympy.Rational)
                          if is_large(a) and not a.is_Integer})


def _joined_roots(expr: sympy.Expr) -> sympy.Expr:
    """In every product, the powers with one fractional exponent up to sign joined into one
    root: ``sqrt(L)/sqrt(g)`` as ``sqrt(L/g)``, ``sqrt(G)*sqrt(m1 + m2)`` as
    ``sqrt(G*(m1 + m2))`` (equal where the bases are positive)."""
    def is_root(e: sympy.Expr) -> bool:
        return (e.is_Pow and e.exp.is_Rational and not e.exp.is_Integer
                and not e.base.is_number)

    def join(product: sympy.Expr) -> sympy.Expr:
        groups: dict[sympy.Rational, list[sympy.Expr]] = {}
        for factor in product.args:
            if is_root(factor):
                groups.setdefault(abs(factor.exp), []).append(factor)
        joined = [f for f in product.args if not is_root(f) or len(groups[abs(f.exp)]) < 2]
        for exponent, roots in groups.items():
            if len(roots) >= 2:
                sign = -1 if all(r.exp < 0 for r in roots) else 1  # 1/sqrt(G*M), not sqrt(1/…)
                inside = sympy.Mul(*(r.base ** (sign * sympy.sign(r.exp)) for r in roots))
                joined.append(sympy.Pow(inside, sign * exponent, evaluate=False))
        return sympy.Mul(*joined)

    return expr.replace(lambda e: e.is_Mul and sum(map(is_root, e.args)) >= 2, join)
