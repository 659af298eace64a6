"""Simple numbers: the constants a physicist writes down.

One family, used everywhere a fitted number may become an exact one:

* fractions p/q with |p| and q of at most two digits (3, 1/2, 79/2, 7/12);
* the irrational numbers laws hold: p·π/q and p/(q·π) with |p| ≤ 4 and q in
  {1, 2, 3, 4, 6, 8} (2π, π/2, 1/(4π)), p·π² with |p| ≤ 4 (4π²), √2, √3
  and their halves, √(2π) and 1/√(2π), each also negative;
* powers e^(p/q), |p/q| ≤ 4 and q ≤ 12, only where a constant is round-off away
  from one (LM fits the base of ``c**log(x)`` as e² for ``x**2``): e enters
  laws through ``exp``, which the search writes as such, so a noisy 2.7 is no e.

Anything else stays a fitted decimal: a ten-digit integer, or 17459/2, is no
number a reader recognises, and SymPy would only pull it out of a root as
``sqrt(3013074890)``.

Two steps replace a fitted constant by one of them:

* :mod:`cadsr_sklearn.front.simplification` takes a constant that is round-off away
  from a simple number to be that number (:func:`snap_number`): the same
  function, written as a reader would;
* :mod:`cadsr_sklearn.search.refinement.snapping` tries the simple numbers a noisy constant lies
  near (:func:`nearby`: no powers of e, denominators up to 12), simplest first,
  and keeps one when the criterion says the data cannot tell it from the fitted
  value.

What writing a number down costs the criterion is its :func:`codelength` in
nats, and "simplest" means shortest: ln|p| + ln q for p/q (the code of
Exhaustive Symbolic Regression, Bartlett, Desmond & Ferreira 2023), ln 2 more
for a minus sign, and more for naming an irrational factor: ln 4 for π, 1/π
and e^(p/q) (ESR's), ln 8 for π², ln 16 for √2, √3, √(2π) and 1/√(2π), rarer
in laws than the fractions near them. 1 costs nothing, 1/2 and 2 cost ln 2, π
costs ln 4, 4π² costs ln 4 + ln 8 = 3.5 nats and so comes before 79/2
(ln 79 + ln 2 = 5.1 nats) when both are near 39.48, and 2/5 (2.3 nats) before
1/√(2π) (2.8) near 0.41; a literal that is no simple number costs the 52 bits
of a float64 mantissa.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import sympy

__all__ = ["SimpleNumber", "Factor", "FACTORS", "snap_number", "nearby", "codelength",
           "is_small_rational", "SNAP_RTOL", "MAX_DIGITS", "FLOAT_CODELENGTH"]

SNAP_RTOL = 1e-10
"""Relative distance within which a constant is taken to be a simple number."""

MAX_DIGITS = 99
"""The largest numerator or denominator of a simple fraction: two digits."""

_MAX_LOG = 4.0  # e^(p/q) for |p/q| <= 4 only
_LOG_DENOMINATOR = 12
# A noisy constant is tried as fractions whose denominator is at most 12: among finer ones
# there is always one within the noise of any value (17/40 for 0.4256), and the BIC, for
# which a literal is free, would take it.
_NOISY_DENOMINATOR = 12
_PI_FRACTIONS = (4, (1, 2, 3, 4, 6, 8))  # 2π, 3π/2, π/6, 1/(4π): numerator ≤ 4


class Factor(NamedTuple):
    """An irrational factor a simple number may hold, with the fractions it may stand with."""

    symbol: sympy.Expr
    max_numerator: int  # |p| of p/q · symbol
    denominators: tuple[int, ...]  # q of p/q · symbol
    codelength: float  # nats to name it, beyond the fraction's

    @property
    def value(self) -> float:
        return float(self.symbol)


_PI, _TWO_PI, _LN = sympy.pi, 2 * sympy.pi, math.log

#: The irrational factors a simple number may hold, each with the small fractions it may
#: stand with (π/6, 4π², √3/2) and what naming it costs beyond the fraction: ln 4 for π and
#: 1/π (as in ESR), ln 8 for π², ln 16 for the roots, rarer in laws than a fraction near
#: them (0.4121 is 2/5 before 1/√(2π)).
FACTORS: tuple[Factor, ...] = (
    Factor(_PI, *_PI_FRACTIONS, _LN(4)), Factor(1 / _PI, *_PI_FRACTIONS, _LN(4)),
    Factor(_PI**2, 4, (1,), _LN(8)),
    Factor(sympy.sqrt(2), 1, (1, 2), _LN(16)), Factor(sympy.sqrt(3), 1, (1, 2), _LN(16)),
    Factor(sympy.sqrt(_TWO_PI), 1, (1,), _LN(16)),
    Factor(1 / sympy.sqrt(_TWO_PI), 1, (1,), _LN(16)),
)
_FACTOR_VALUES: tuple[float, ...] = tuple(f.value for f in FACTORS)
_EXP_CODELENGTH = math.log(4)  # e^(p/q), as in ESR

#: Nats to write a literal that is no simple number: a float64's 52-bit mantissa.
FLOAT_CODELENGTH = 52 * math.log(2)


class SimpleNumber(NamedTuple):
    """A simple number: its float64 value, its exact SymPy form and its codelength in nats."""

    value: float
    symbol: sympy.Expr
    cost: float


def is_small_rational(number: sympy.Expr) -> bool:
    """Whether ``number`` is a fraction p/q with |p| and q of at most two digits."""
    return bool(number.is_Rational and abs(number.p) <= MAX_DIGITS and number.q <= MAX_DIGITS)


class _Near(NamedTuple):
    """A simple number as numbers only: value = p/q · (factor, or e^(·) when ``kind`` is -1)."""

    value: float
    p: int
    q: int
    kind: int | None  # an index into FACTORS; None for p/q; -1 for e^(p/q)

    @property
    def cost(self) -> float:
        sign = math.log(2) if self.p < 0 else 0.0
        kind = (0.0 if self.kind is None else _EXP_CODELENGTH if self.kind == -1
                else FACTORS[self.kind].codelength)
        return math.log(abs(self.p)) + math.log(self.q) + sign + kind

    def simple(self) -> SimpleNumber:
        fraction = sympy.Rational(self.p, self.q)
        if self.kind is None:
            symbol = fraction
        elif self.kind == -1:
            symbol = sympy.exp(fraction)
        else:
            symbol = fraction * FACTORS[self.kind].symbol
        return SimpleNumber(self.value, symbol, self.cost)


def _candidates(value: float, exact: bool):
    """The simple numbers closest to ``value`` in each kind and denominator (non-zero).

    ``exact`` adds the powers of e and the denominators above 12 (for values round-off
    away from one).
    """
    for q in range(1, (MAX_DIGITS if exact else _NOISY_DENOMINATOR) + 1):
        p = round(value * q)
        if p and abs(p) <= MAX_DIGITS and math.gcd(p, q) == 1:
            yield _Near(p / q, p, q, None)
    for kind, (factor, factor_value) in enumerate(zip(FACTORS, _FACTOR_VALUES)):
        for q in factor.denominators:
            p = round(value * q / factor_value)
            if p and abs(p) <= factor.max_numerator and math.gcd(p, q) == 1:
                yield _Near(p * factor_value / q, p, q, kind)
    if exact and value > 0 and abs(math.log(value)) <= _MAX_LOG:
        for q in range(1, _LOG_DENOMINATOR + 1):
            p = round(math.log(value) * q)
            if p and math.gcd(p, q) == 1:
                yield _Near(math.exp(p / q), p, q, -1)


def _distance_scale(number: _Near) -> float:
    # Relative for the powers of e: below 1e-8 they lie closer together than an
    # absolute 1e-10, and a tiny fitted constant would always snap to one.
    return number.value if number.kind == -1 else max(1.0, abs(number.value))


def _exact(value: float, rtol: float) -> _Near | None:
    found = [n for n in _candidates(value, exact=True)
             if abs(value - n.value) <= rtol * _distance_scale(n)]
    return min(found, key=lambda n: (n.cost, abs(value - n.value))) if found else None


def snap_number(value: float, rtol: float = SNAP_RTOL) -> sympy.Expr | None:
    """The simple number ``value`` is round-off away from, or None.

    0 for a value within ``rtol`` of it; else the shortest simple number (by
    :func:`codelength`) within ``rtol`` relative (absolute below 1). ``rtol=0``
    finds the exact form of a literal that snapping fixed.
    """
    if not math.isfinite(value):
        return None
    if abs(value) <= rtol:
        return sympy.Integer(0)
    found = _exact(value, rtol)
    return None if found is None else found.simple().symbol


def nearby(value: float, rtol: float) -> list[SimpleNumber]:
    """The non-zero simple numbers within ``rtol·|value|`` of ``value``, shortest first.

    No powers of e (see the module docstring). Ties in codelength go to the
    nearer number; each value appears once. Empty for a value that is not finite.
    """
    if not math.isfinite(value) or value == 0:
        return []
    found: dict[float, _Near] = {}
    for number in _candidates(value, exact=False):
        if abs(value - number.value) <= rtol * abs(value):
            kept = found.get(number.value)
            if kept is None or number.cost < kept.cost:
                found[number.value] = number
    ordered = sorted(found.values(), key=lambda n: (n.cost, abs(value - n.value)))
    return [n.simple() for n in ordered]


def codelength(value: float) -> float:
    """Nats it takes to write the literal ``value`` down (see the module docstring).

    ``value`` is matched exactly (:func:`snap_number` with ``rtol=0``), as the
    literals snapping fixes are: 0 and 1 cost nothing, −1, 2 and 1/2 cost ln 2,
    79/2 costs ln 79 + ln 2, π costs ln 4; a value that is no simple number
    costs :data:`FLOAT_CODELENGTH`.
    """
    value = float(value)
    if value == 0:
        return 0.0
    found = _exact(value, 0.0) if math.isfinite(value) else None
    return FLOAT_CODELENGTH if found is None else found.cost
