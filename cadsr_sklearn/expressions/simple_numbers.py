"""Simple numbers: the constants a physicist writes down.

One family, used everywhere a fitted number may become an exact one:

* fractions p/q with |p| and q of at most two digits (3, 1/2, 79/2, 7/12);
* the irrational numbers laws hold: p·π/q and p/(q·π) with |p| ≤ 12 and q in
  {1, 2, 3, 4, 6, 8, 12} (2π, π/2, 7π/6, 1/(4π)), p·π² with |p| ≤ 4 (4π²) and
  1/(q·π²) with q in {1, 2, 4, 8} (the 1/(8π²) of h²/(8π²md²)), √2, √3
  and their halves, √(2π) and 1/√(2π), each also negative;
* powers e^(p/q), |p/q| ≤ 4 and q ≤ 12 (LM fits the base of ``c**log(x)`` as
  e² for ``x**2``); e enters laws through ``exp``, which the search writes as
  such, and a noisy 2.7 resolves no e (3 is cheaper and near).

Anything else stays a fitted decimal: a ten-digit integer, or 17459/2, is no
number a reader recognises, and SymPy would only pull it out of a root as
``sqrt(3013074890)``.

Two steps replace a fitted constant by one of them:

* :mod:`cadsr_sklearn.front.simplification` takes a constant that is round-off away
  from a simple number to be that number (:func:`snap_number`): the same
  function, written as a reader would;
* :mod:`cadsr_sklearn.search.refinement.snapping` tries the simple numbers within a few
  standard errors of a fitted constant (:func:`candidates`) that the data
  *resolve* (:func:`resolves`), simplest first, and keeps one when the criterion
  rises.

When the data resolve a simple number
-------------------------------------
A fitted constant θ̂ with standard error σ may be shown as the simple number v
only if the data tell v from its *rivals*: every other simple number whose
codelength is at most ln 2 more than v's (no less than half as probable a
priori). The data prefer v to a rival v′ by the likelihood ratio
exp([(θ̂ − v′)² − (θ̂ − v)²] / 2σ²); v is resolved when that is at least
e^4.5 for every rival (:data:`RESOLUTION`, the ratio of three standard
errors): with θ̂ on v, every rival lies three standard errors away or more.
Integers and halves are far apart, so 0.4993 ± 0.002 resolves 1/2; elevenths
are not, so 0.4545 ± 0.02 resolves no 5/11 (4/9, 5/12 and 6/13 are as near);
9.87 ± 0.1 resolves no π² (10 costs 0.22 nats more and lies 1.3 σ away), while
3.6651914291881 ± 1e-12 resolves 7π/6. The rule replaces the ESR codelength's
silent assumption that the literal was named before the data were seen: a
snap chooses among the numbers near θ̂ *after* seeing it, and a choice among
several the data cannot tell apart is a choice of the noise (the
look-elsewhere effect), however short its code. Measured on constants drawn
at random (log-uniform over 0.01–100, relative standard errors 1e-5…3e-2, the
criterion's test as well), the rule halves the share snapped at all
(``docs/experiments/snapping.md``); what remains are constants within the
noise of a number the data do resolve, which no rule on θ̂ alone can tell from
that number.

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

import functools
import itertools
import math
from typing import NamedTuple

import numpy as np
import sympy

__all__ = ["SimpleNumber", "Factor", "FACTORS", "snap_number", "candidates", "resolves",
           "rival_gap", "codelength", "is_small_rational", "SNAP_RTOL", "MAX_DIGITS",
           "FLOAT_CODELENGTH", "RESOLUTION", "RIVAL_MARGIN"]

SNAP_RTOL = 1e-10
"""Relative distance within which a constant is taken to be a simple number."""

MAX_DIGITS = 99
"""The largest numerator or denominator of a simple fraction: two digits."""

RESOLUTION = 4.5
"""ln of the likelihood ratio by which the data must prefer a simple number to each rival:
that of three standard errors, 3²/2 (see "When the data resolve a simple number")."""

RIVAL_MARGIN = math.log(2)
"""A simple number is a rival of another when its codelength is at most this much longer."""

_MAX_LOG = 4.0  # e^(p/q) for |p/q| <= 4 only
_LOG_DENOMINATOR = 12
_PI_FRACTIONS = (12, (1, 2, 3, 4, 6, 8, 12))  # 2π, 3π/2, 7π/6, 1/(4π): numerator ≤ 12


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
#: stand with (π/6, 4π², 1/(8π²), √3/2) and what naming it costs beyond the fraction: ln 4 for π and
#: 1/π (as in ESR), ln 8 for π², ln 16 for the roots, rarer in laws than a fraction near
#: them (0.4121 is 2/5 before 1/√(2π)).
FACTORS: tuple[Factor, ...] = (
    Factor(_PI, *_PI_FRACTIONS, _LN(4)), Factor(1 / _PI, *_PI_FRACTIONS, _LN(4)),
    Factor(_PI**2, 4, (1,), _LN(8)), Factor(1 / _PI**2, 1, (1, 2, 4, 8), _LN(8)),
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


def _closest(value: float):
    """The simple numbers closest to ``value`` in each kind and denominator (non-zero)."""
    for q in range(1, MAX_DIGITS + 1):
        p = round(value * q)
        if p and abs(p) <= MAX_DIGITS and math.gcd(p, q) == 1:
            yield _Near(p / q, p, q, None)
    for kind, (factor, factor_value) in enumerate(zip(FACTORS, _FACTOR_VALUES)):
        for q in factor.denominators:
            p = round(value * q / factor_value)
            if p and abs(p) <= factor.max_numerator and math.gcd(p, q) == 1:
                yield _Near(p * factor_value / q, p, q, kind)
    if value > 0 and abs(math.log(value)) <= _MAX_LOG:
        for q in range(1, _LOG_DENOMINATOR + 1):
            p = round(math.log(value) * q)
            if p and math.gcd(p, q) == 1:
                yield _Near(math.exp(p / q), p, q, -1)


def _distance_scale(number: _Near) -> float:
    # Relative for the powers of e: below 1e-8 they lie closer together than an
    # absolute 1e-10, and a tiny fitted constant would always snap to one.
    return number.value if number.kind == -1 else max(1.0, abs(number.value))


def _exact(value: float, rtol: float) -> _Near | None:
    found = [n for n in _closest(value)
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


class _Codebook(NamedTuple):
    """Every simple number but 0, sorted by value; at equal values the shortest kept."""

    values: np.ndarray  # (N,)
    costs: np.ndarray  # (N,) codelength in nats
    numbers: tuple[_Near, ...]  # (N,)


def _every_simple_number():
    for q in range(1, MAX_DIGITS + 1):
        for p in range(-MAX_DIGITS, MAX_DIGITS + 1):
            if p and math.gcd(p, q) == 1:
                yield _Near(p / q, p, q, None)
    for kind, (factor, factor_value) in enumerate(zip(FACTORS, _FACTOR_VALUES)):
        for q in factor.denominators:
            for p in range(-factor.max_numerator, factor.max_numerator + 1):
                if p and math.gcd(p, q) == 1:
                    yield _Near(p * factor_value / q, p, q, kind)
    for q in range(1, _LOG_DENOMINATOR + 1):
        for p in range(-int(_MAX_LOG * q), int(_MAX_LOG * q) + 1):
            if p and math.gcd(p, q) == 1:
                yield _Near(math.exp(p / q), p, q, -1)


@functools.cache
def _codebook() -> _Codebook:
    shortest: dict[float, _Near] = {}
    for number in _every_simple_number():
        kept = shortest.get(number.value)
        if kept is None or number.cost < kept.cost:
            shortest[number.value] = number
    numbers = tuple(sorted(shortest.values(), key=lambda n: n.value))
    return _Codebook(np.array([n.value for n in numbers]), np.array([n.cost for n in numbers]),
                     numbers)


def _within(low: float, high: float) -> range:
    """Indices of the codebook's numbers in [low, high]."""
    values = _codebook().values
    return range(int(np.searchsorted(values, low, "left")),
                 int(np.searchsorted(values, high, "right")))


def candidates(value: float, halfwidth: float, standard_error: float | None = None,
               limit: int | None = None) -> list[SimpleNumber]:
    """The non-zero simple numbers within ``halfwidth`` of ``value``, shortest first.

    With ``standard_error``, only those a constant fitted as ``value`` ± it
    :func:`resolves`; ``limit`` keeps the shortest that many. Ties in codelength go
    to the nearer number; each value appears once. Empty for a value or a
    half-width that is not finite.
    """
    if not (math.isfinite(value) and math.isfinite(halfwidth)):
        return []
    book = _codebook()
    found = sorted((book.numbers[i] for i in _within(value - halfwidth, value + halfwidth)),
                   key=lambda n: (n.cost, abs(value - n.value)))
    if standard_error is not None:
        found = (n for n in found if resolves(n, value, standard_error))
    return [n.simple() for n in itertools.islice(found, limit)]


def _rivals(number: SimpleNumber | _Near, low: float, high: float) -> np.ndarray:
    """Values in [low, high] of the simple numbers (0 included) that rival ``number``: any
    other whose codelength is at most :data:`RIVAL_MARGIN` longer."""
    book = _codebook()
    span = _within(low, high)
    values = book.values[span.start:span.stop]
    costs = book.costs[span.start:span.stop]
    rivals = values[(costs <= number.cost + RIVAL_MARGIN) & (values != number.value)]
    return np.append(rivals, 0.0) if low <= 0.0 <= high and number.value != 0 else rivals


def resolves(number: SimpleNumber | _Near, estimate: float, standard_error: float) -> bool:
    """Whether a constant fitted as ``estimate`` ± ``standard_error`` resolves ``number``.

    True when the data prefer ``number`` to each of its rivals (any other simple
    number, 0 included, at most :data:`RIVAL_MARGIN` longer to write) by a
    likelihood ratio of at least exp(:data:`RESOLUTION`) (see the module docstring).
    """
    if not (math.isfinite(estimate) and math.isfinite(standard_error)):
        return False
    variance = standard_error * standard_error
    # a rival the data reject by the ratio lies farther from the estimate than this
    radius = math.sqrt((estimate - number.value) ** 2 + 2.0 * RESOLUTION * variance)
    return not len(_rivals(number, estimate - radius, estimate + radius))


def rival_gap(value: float) -> float:
    """The distance from the simple number ``value`` to its nearest rival (see
    :func:`resolves`): the gap its standard error is judged against. NaN when
    ``value`` is no simple number."""
    value = float(value)
    found = None if value == 0 or not math.isfinite(value) else _exact(value, 0.0)
    if found is None:
        return math.nan
    number = found.simple()
    radius = max(1.0, abs(value))
    while True:  # widen until a rival is found: 0 (or ±1) always is one
        rivals = _rivals(number, value - radius, value + radius)
        if len(rivals):
            return float(np.min(np.abs(rivals - value)))
        radius *= 2.0


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
