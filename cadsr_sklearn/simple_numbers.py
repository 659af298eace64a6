"""Simple numbers: the constants a scientist writes down.

Integers, fractions p/q with q ≤ 12, multiples p·π/q and p/(q·π) with q in
{1, 2, 3, 4, 6, 8} (π/2, 1/(4π)), and powers e^(p/q) with p/q between −4 and
4. Two steps replace a fitted constant by one of them:

* :mod:`cadsr_sklearn.simplification` takes a constant that is round-off away
  from a simple number to be that number (:func:`snap_number`, powers e^(p/q)
  with q ≤ 12): the same function, written as a reader would;
* :mod:`cadsr_sklearn.snapping` tries the simple numbers a noisy constant lies
  near (:func:`nearby`), simplest first, and keeps one when the criterion says
  the data cannot tell it from the fitted value. The set is narrower there
  (fractions p/q with q ≤ 6 or 8; p·π/q and p/(q·π) with a numerator of at
  most 4; no powers of e): a denser one always holds a number within the noise
  of any value, 20/11 for 1.82, 11/(2π) for 1.75, and none of those is simpler
  than the value itself. A power of e is no number a noisy constant of a law
  is: e enters laws through ``exp``, which the search writes as such, while an
  ``E`` snapped in for 2.7 or a factor e^(1/2) for 1.65 reads as meaning that
  is not there (π does stand in laws as a number: 2π, 4π, π/2).

Each number carries a *cost*, the size of its denominator, plus one for a
factor π (or 1/π) and two for a power of e: 2 before 5/3, π before π/2, 1/2
before e: the order in which snapping tries them.

What writing a literal down costs the criterion is its :func:`codelength` in
nats: ln|p| + ln q for p/q, ln 2 more for a minus sign and ln 4 more for the
family (π·p/q, p/(q·π) or e^(p/q)), the code of Exhaustive Symbolic Regression
(Bartlett, Desmond & Ferreira 2023) for integers and fractions. 1 costs
nothing, 1/2 and 2 cost ln 2, π costs ln 4, 17459/2 costs 10.5 nats: a large
number is not free, and a literal that is no simple number costs the 52 bits of
a float64 mantissa.
"""

from __future__ import annotations

import itertools
import math
from typing import Iterator, NamedTuple

import sympy

__all__ = ["SimpleNumber", "snap_number", "nearby", "codelength", "SNAP_RTOL", "MAX_SNAPPED"]

SNAP_RTOL = 1e-10
"""Relative distance within which a constant is taken to be a simple number."""

MAX_SNAPPED = 1e6
"""Larger constants are left alone: a float past 2**52 is an integer anyway."""

_MAX_DENOMINATOR = 12
_PI_DIVISORS = (1, 2, 3, 4, 6, 8)
_MAX_LOG = 4.0  # e^(p/q) for |p/q| <= 4 only
# Noisy constants are snapped to fewer numbers: p/q with q in 1..6 or 8, p·π/q and
# p/(q·π) with |p| <= 4, no powers of e. Denser sets always hold a number within the
# noise of any value (20/11, 11/(2π)), and such a number is no simpler.
_NEARBY_DENOMINATORS = (1, 2, 3, 4, 5, 6, 8)
_NEARBY_PI_NUMERATOR = 4


class SimpleNumber(NamedTuple):
    """A simple number: its float64 value, its exact SymPy form and its cost."""

    value: float
    symbol: sympy.Expr
    cost: int


def _closest(value: float, noisy: bool = False) -> Iterator[SimpleNumber]:
    """The non-zero simple number closest to ``value`` of every family and denominator.

    ``noisy`` narrows the families to what a noisy constant may be snapped to.
    """
    max_pi_numerator = _NEARBY_PI_NUMERATOR if noisy else math.inf
    for q in _NEARBY_DENOMINATORS if noisy else range(1, _MAX_DENOMINATOR + 1):
        p = round(value * q)
        if p:
            yield SimpleNumber(p / q, sympy.Rational(p, q), q)
    for q in _PI_DIVISORS:
        p = round(value * q / math.pi)
        if p and abs(p) <= max_pi_numerator:
            yield SimpleNumber(p * math.pi / q, sympy.Rational(p, q) * sympy.pi, q + 1)
    for q in _PI_DIVISORS:
        p = round(value * q * math.pi)
        if p and abs(p) <= max_pi_numerator:
            yield SimpleNumber(p / (q * math.pi), sympy.Rational(p, q) / sympy.pi, q + 1)
    if value > 0 and abs(math.log(value)) <= _MAX_LOG and not noisy:
        for q in range(1, _MAX_DENOMINATOR + 1):
            p = round(math.log(value) * q)
            if p:
                yield SimpleNumber(math.exp(p / q), sympy.exp(sympy.Rational(p, q)), q + 2)


def _roots_and_squares(value: float) -> Iterator[SimpleNumber]:
    """±√s and s² for the simple numbers s of :func:`_closest` near value² and √|value|:
    √2, √(2π), 1/√(2π), π², 4π², 1/π²; a square root or square costs two more."""
    sign = 1 if value > 0 else -1
    for number in _closest(value * value):
        if number.value > 0:
            yield SimpleNumber(sign * math.sqrt(number.value),
                               sign * sympy.sqrt(number.symbol), number.cost + 2)
    for number in _closest(math.sqrt(abs(value))):
        if number.value > 0:
            yield SimpleNumber(sign * number.value**2, sign * number.symbol**2, number.cost + 2)


def snap_number(value: float, rtol: float = SNAP_RTOL,
                roots: bool = False) -> sympy.Expr | None:
    """The simple number ``value`` is round-off away from, or None.

    Tried in order: 0, integers, p/q with q ≤ 12, p·π/q and p/(q·π) with q in
    {1, 2, 3, 4, 6, 8}, and e^(p/q) with q ≤ 12 and p/q between −4 and 4, within
    ``rtol`` relative (LM fits the base of ``c**log(x)`` as e² for ``x**2``);
    with ``roots``, then the square roots and squares of those (√2, 1/√(2π),
    4π²: the numbers a displayed formula holds once SymPy has taken a constant
    out of a root). ``rtol=0`` finds the exact form of a literal that snapping fixed.
    """
    if not math.isfinite(value) or abs(value) > MAX_SNAPPED:
        return None
    if abs(value) <= rtol:
        return sympy.Integer(0)
    candidates = _closest(value)
    if roots:
        candidates = itertools.chain(candidates, _roots_and_squares(value))
    for number in candidates:
        # Relative for the powers of e: below 1e-8 they lie closer together than an
        # absolute 1e-10, and a tiny fitted constant would always snap to one.
        scale = number.value if number.symbol.func is sympy.exp else max(1.0, abs(number.value))
        if abs(value - number.value) <= rtol * scale:
            return number.symbol
    return None


def nearby(value: float, rtol: float) -> list[SimpleNumber]:
    """The non-zero simple numbers within ``rtol·|value|`` of ``value``, simplest first.

    Integers, p/q with q in {2, 3, 4, 5, 6, 8}, and p·π/q and p/(q·π) with a
    numerator of at most 4 and q in {1, 2, 3, 4, 6, 8}; no powers of e (see the
    module docstring).
    Ties in cost go to the nearer number; each value appears once.
    Empty for a value that is not finite or is larger than :data:`MAX_SNAPPED`.
    """
    if not math.isfinite(value) or abs(value) > MAX_SNAPPED:
        return []
    found: dict[float, SimpleNumber] = {}
    for number in _closest(value, noisy=True):
        if abs(value - number.value) <= rtol * abs(value):
            kept = found.get(number.value)
            if kept is None or number.cost < kept.cost:
                found[number.value] = number
    return sorted(found.values(), key=lambda n: (n.cost, abs(value - n.value)))


#: Nats to write a literal that is no simple number: a float64's 52-bit mantissa.
FLOAT_CODELENGTH = 52 * math.log(2)
_FAMILY_CODELENGTH = math.log(4)  # which of p/q, p·π/q, p/(q·π), e^(p/q)


def codelength(value: float) -> float:
    """Nats it takes to write the literal ``value`` down (see the module docstring).

    ``value`` is matched exactly (:func:`snap_number` with ``rtol=0``), as the
    literals snapping fixes are: 0 and 1 cost nothing, −1, 2 and 1/2 cost ln 2,
    17459/2 costs ln 17459 + ln 2, π costs ln 4; a value that is no simple
    number costs :data:`FLOAT_CODELENGTH`.
    """
    symbol = snap_number(float(value), rtol=0.0)
    if symbol is None:
        return FLOAT_CODELENGTH
    if symbol == 0:
        return 0.0
    family = 0.0
    if symbol.func is sympy.exp:  # e^(p/q): its exponent carries p and q
        symbol, family = symbol.args[0], _FAMILY_CODELENGTH
    else:
        symbol, factor = symbol.as_coeff_Mul()  # (p/q, π or 1/π), or (p/q, 1)
        family = 0.0 if factor == 1 else _FAMILY_CODELENGTH
    p, q = abs(int(symbol.p)), int(symbol.q)
    sign = math.log(2) if symbol < 0 else 0.0
    return math.log(p) + math.log(q) + sign + family
