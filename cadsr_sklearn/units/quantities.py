"""Physical units of the data: what users write, as exponent vectors, and back.

:func:`parse_units` turns what a user writes (pint unit strings such as
``"m/s^2"``, or exponent vectors) into :class:`Units`: one exponent vector per
feature and for the target over the base dimensions they use, and whether the
target's units are a product of powers of the features' (else a constant factor
of the formula carries units, see :mod:`cadsr_sklearn.units.check`).
:meth:`Units.format` and :func:`format_units` write exponents back, in the
units ``fit`` was given where they can be, else in SI symbols. What makes a
formula consistent, and the check of one, are :mod:`cadsr_sklearn.units.check`'s;
the sampler's masks are :mod:`cadsr_sklearn.units.masks`'; the rule that joins
them in a search is :mod:`cadsr_sklearn.units.rule`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from ..user_warning import warn_user

__all__ = ["Units", "data_units", "parse_units", "format_units", "same_units",
           "EXPONENT_TOLERANCE"]

#: pint's base dimensions in the order units are written, with their SI symbols.
_SI_SYMBOLS = {"[mass]": "kg", "[length]": "m", "[time]": "s", "[current]": "A",
               "[temperature]": "K", "[substance]": "mol", "[luminosity]": "cd"}
#: Spellings of "no units", and angle units: dimensionless on purpose.
_PLAIN_DIMENSIONLESS = {"", "1", "dimensionless", "rad", "radian", "radians", "deg", "degree",
                        "degrees", "sr", "steradian"}
#: Exponents closer than this are equal (they are sums of small fractions).
EXPONENT_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class Units:
    """The units of a search's data, as exponent vectors over ``base`` dimensions.

    Attributes
    ----------
    base : tuple of str
        The base dimensions, e.g. ``("[length]", "[time]")`` (pint's names), or
        ``("d0", "d1", …)`` for exponent vectors given directly.
    features : ndarray of shape (n_features, D)
        Exponents of each feature's units.
    target : ndarray of shape (D,) or None
        Exponents of the target's units; None when they were not given (then
        only the formula's inner consistency is required).
    feature_labels, target_label : str
        The units as the user wrote them (for messages and display).
    dimensional_constant : bool
        Whether a constant multiplying the whole formula may carry units (see
        the module's docstring).
    """

    base: tuple[str, ...]
    features: np.ndarray
    target: np.ndarray | None
    feature_labels: tuple[str, ...]
    target_label: str | None
    dimensional_constant: bool

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Units) and self.base == other.base
                and np.array_equal(self.features, other.features)
                and _same_or_none(self.target, other.target)
                and self.dimensional_constant == other.dimensional_constant)

    def __hash__(self) -> int:
        return hash((self.base, self.features.tobytes(), self.dimensional_constant))

    @property
    def constrains(self) -> bool:
        """Whether these units say anything: some quantity has a dimension. When every
        one is dimensionless, every formula is consistent and the search runs as without."""
        return bool(self.base)

    def format(self, exponents: np.ndarray) -> str:
        """Exponents over :attr:`base` as a unit string, in the user's units where they
        write it (``"day/au**(3/2)"`` from ``y_units="day"`` and ``X_units=["au"]``),
        else in SI symbols (``"m/s**2"``, ``"1"``)."""
        return self._in_given_units(np.asarray(exponents, dtype=np.float64)) or format_units(
            exponents, self.base)

    def _in_given_units(self, exponents: np.ndarray) -> str | None:
        """``exponents`` as a product of powers of the units the user wrote (one
        feature's, then several; then the target's times those), or None."""
        if self.base and self.base[0].startswith("d"):  # exponent vectors: no names to use
            return None
        labels = list(self.feature_labels)
        if self.target is not None and same_units(exponents, self.target):
            return self.target_label
        starts = [(None, 0.0)]  # the target's units to the power 0, 1 or −1 (a divisor)
        if self.target is not None:
            starts += [(self.target_label, 1.0), (self.target_label, -1.0)]
        for label, k in starts:
            rest = exponents - (0.0 if label is None else k * self.target)
            target = [(label, k)] if label is not None else []
            if not np.any(np.abs(rest) > EXPONENT_TOLERANCE):
                return "1" if label is None else _product(target)
            for i, row in enumerate(self.features):  # one feature's units
                power = _power_of(rest, row)
                if power is not None:
                    return _product(target + [(labels[i], power)])
            coef, *_ = np.linalg.lstsq(self.features.T, rest, rcond=None)
            simple = [Fraction(float(c)).limit_denominator(4) for c in coef]
            if np.allclose(self.features.T @ np.array([float(f) for f in simple]), rest,
                           atol=1e-9):
                terms = [(labels[i], float(f)) for i, f in enumerate(simple) if f]
                if len({labels[i] for i, f in enumerate(simple) if f}) == len(terms):
                    return _product(target + terms)
        return None


def same_units(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two exponent vectors are the same units (to :data:`EXPONENT_TOLERANCE`)."""
    return bool(np.all(np.abs(a - b) < EXPONENT_TOLERANCE))


def _same_or_none(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None
                                         and np.array_equal(a, b))


@lru_cache(maxsize=1)
def _registry():
    import pint  # imported on first use: searches without units never need it

    return pint.UnitRegistry()


def _dimensionality(text: str, label: str) -> dict[str, float]:
    """pint's dimensionality of one unit string; ValueError naming ``label`` if it is not one."""
    import pint

    registry = _registry()
    try:
        unit = registry.parse_units(text.strip()) if text.strip() else registry.dimensionless
    except Exception as err:  # noqa: BLE001 - pint's parser raises many kinds on bad text
        # (AssertionError for "m/s^", tokenize.TokenError for "m)", ZeroDivisionError for "1/0")
        reason = str(err) or type(err).__name__
        raise ValueError(f"{label}: cannot read the units {text!r} ({reason}). Write them as "
                         f"pint does, e.g. 'm/s^2', 'kg*m^2/s^2', or '1' for dimensionless."
                         ) from None
    try:
        registry.Quantity(2.0, unit) * registry.Quantity(2.0, unit)
    except pint.errors.OffsetUnitCalculusError:
        raise ValueError(f"{label}: {text!r} has an offset (its zero is not zero), so products "
                         f"and powers of it mean nothing; give the column in an absolute unit "
                         f"such as kelvin.") from None
    dimensions = {str(k): float(v) for k, v in unit.dimensionality.items()}
    if not dimensions and text.strip().lower() not in _PLAIN_DIMENSIONLESS:
        warn_user(f"{label}: pint reads {text!r} as {unit}, which is dimensionless. If you "
                  f"meant a dimensional unit, check its spelling (the astronomical unit is "
                  f"'au'; 'AU' is absorbance).", UserWarning)
    return dimensions


def _entries(X_units, feature_names: Sequence[str]) -> list:
    """One units entry per feature, from a sequence or a mapping by feature name."""
    n = len(feature_names)
    if isinstance(X_units, Mapping):
        names = [str(k) for k in X_units]
        unknown = sorted(set(names) - set(feature_names))
        if unknown:
            raise ValueError(f"X_units names {unknown}, which are not features; the features "
                             f"are {list(feature_names)}.")
        missing = [name for name in feature_names if name not in names]
        if missing:
            raise ValueError(f"X_units gives no units for {missing}; give every feature's "
                             f"('1' for a dimensionless one).")
        by_name = {str(k): v for k, v in X_units.items()}
        return [by_name[name] for name in feature_names]
    if isinstance(X_units, (str, bytes)) or not hasattr(X_units, "__len__"):
        raise ValueError(f"X_units must be a sequence with one entry per feature or a mapping "
                         f"from feature name to units, got {X_units!r}.")
    entries = list(X_units)
    if len(entries) != n:
        raise ValueError(f"X_units has {len(entries)} entries but X has {n} features.")
    return entries


def _is_vector(entry) -> bool:
    return not isinstance(entry, str) and hasattr(entry, "__len__")


def data_units(X_units, y_units, feature_names: Sequence[str]) -> Units | None:
    """The :class:`Units` of ``fit``'s ``X_units`` and ``y_units``; None without them."""
    if X_units is None:
        if y_units is not None:
            raise ValueError("y_units needs X_units: give the units of the features too "
                             "('1' for a dimensionless one).")
        return None
    return parse_units(X_units, y_units, feature_names)


def parse_units(X_units, y_units, feature_names: Sequence[str],
                dimensional_constant: bool | str = "auto") -> Units:
    """The :class:`Units` of a search from what the user wrote.

    Parameters
    ----------
    X_units : sequence or mapping
        One entry per feature (or a mapping from feature name to entry): a unit
        string pint reads (``"m/s^2"``, ``"kg*m^2/s^2"``, ``"1"`` or ``""``
        for dimensionless), or an exponent vector over base dimensions of your
        own (every entry then a vector of one length).
    y_units : str, sequence of float or None
        The target's units, in the same form; None if unknown.
    feature_names : sequence of str
        The features' names, for a mapping and for messages.
    dimensional_constant : bool or "auto"
        Whether an overall constant factor may carry units; "auto": exactly
        when the target's units are not a product of powers of the features'.
    """
    entries = _entries(X_units, feature_names)
    vectors = [_is_vector(e) for e in entries]
    target_is_vector = y_units is not None and _is_vector(y_units)
    if any(vectors) or target_is_vector:
        if not all(vectors) or (y_units is not None and not target_is_vector):
            raise ValueError("Give every feature's units (and the target's) either as unit "
                             "strings or as exponent vectors, not both.")
        features, target, base = _vector_units(entries, y_units, feature_names)
    else:
        features, target, base = _string_units(entries, y_units, feature_names)
    labels = tuple(_label(e) for e in entries)
    if dimensional_constant == "auto":
        dimensional_constant = target is not None and not _in_span(target, features)
    return Units(base, features, target, labels, None if y_units is None else _label(y_units),
                 bool(dimensional_constant))


def _label(entry) -> str:
    return entry if isinstance(entry, str) else "[" + ", ".join(f"{v:g}" for v in entry) + "]"


def _string_units(entries, y_units, names) -> tuple[np.ndarray, np.ndarray | None, tuple]:
    for name, entry in zip(names, entries):
        if not isinstance(entry, str):
            raise ValueError(f"X_units[{name!r}] must be a unit string or an exponent vector, "
                             f"got {entry!r}.")
    if y_units is not None and not isinstance(y_units, str):
        raise ValueError(f"y_units must be a unit string or an exponent vector, got {y_units!r}.")
    dims = [_dimensionality(e, f"X_units[{name!r}]") for name, e in zip(names, entries)]
    target = None if y_units is None else _dimensionality(y_units, "y_units")
    used = set().union(*dims, *([target] if target is not None else []))
    order = list(_SI_SYMBOLS)
    base = tuple(sorted(used, key=lambda d: (order.index(d) if d in order else len(order), d)))
    matrix = np.array([[d.get(b, 0.0) for b in base] for d in dims], dtype=np.float64)
    matrix = matrix.reshape(len(dims), len(base))
    vector = None if target is None else np.array([target.get(b, 0.0) for b in base])
    return matrix, vector, base


def _vector_units(entries, y_units, names) -> tuple[np.ndarray, np.ndarray | None, tuple]:
    def as_vector(entry, label) -> np.ndarray:
        try:
            v = np.asarray(entry, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{label}: {entry!r} is not a vector of exponents.") from None
        if v.ndim != 1 or not np.all(np.isfinite(v)):
            raise ValueError(f"{label}: {entry!r} is not a vector of finite exponents.")
        return v

    rows = [as_vector(e, f"X_units[{n!r}]") for n, e in zip(names, entries)]
    target = None if y_units is None else as_vector(y_units, "y_units")
    lengths = {len(r) for r in rows} | ({len(target)} if target is not None else set())
    if len(lengths) != 1:
        raise ValueError(f"The exponent vectors have different lengths {sorted(lengths)}; "
                         f"give each over the same base dimensions.")
    D = lengths.pop()
    return np.vstack(rows).reshape(len(rows), D), target, tuple(f"d{i}" for i in range(D))


def _in_span(target: np.ndarray, features: np.ndarray) -> bool:
    """Whether the target's exponents are a combination of the features' (least squares)."""
    if not np.any(target):
        return True
    if not features.size:
        return False
    coef, *_ = np.linalg.lstsq(features.T, target, rcond=None)
    return bool(np.allclose(features.T @ coef, target, atol=1e-8))


def format_units(exponents: np.ndarray | None, base: Sequence[str]) -> str:
    """A unit string for exponents over ``base``: ``"kg*m**2/s**2"``, ``"1"`` if none."""
    if exponents is None:
        return "?"
    up, down = [], []
    for name, e in zip(base, np.asarray(exponents, dtype=np.float64)):
        if abs(e) < EXPONENT_TOLERANCE:
            continue
        symbol = _SI_SYMBOLS.get(name, name)
        power = _exponent_text(abs(e))
        (up if e > 0 else down).append(symbol if power == "1" else f"{symbol}**{power}")
    if not up and not down:
        return "1"
    text = "*".join(up) if up else "1"
    if down:
        text += "/" + (down[0] if len(down) == 1 else "(" + "*".join(down) + ")")
    return text


def _power_of(rest: np.ndarray, row: np.ndarray) -> float | None:
    """The q with rest = q·row (a simple fraction where it is one: a fitted exponent such
    as 3.914 stays as it is), or None."""
    if not np.any(np.abs(row) > EXPONENT_TOLERANCE):
        return None
    q = float(rest @ row / (row @ row))
    simple = float(Fraction(q).limit_denominator(4))
    q = simple if abs(simple - q) < 1e-9 else q
    return q if q and np.all(np.abs(q * row - rest) < 1e-6) else None


def _product(terms: list[tuple[str, float]]) -> str:
    """``[("day", 1), ("au", -1.5)]`` as ``"day/au**(3/2)"``."""
    if len(terms) == 1 and terms[0][1] == 1:
        return terms[0][0]
    def factor(label: str, power: float) -> str:
        text = label if label.replace("_", "").isalnum() else f"({label})"
        exponent = _exponent_text(abs(power))
        return text if exponent == "1" else f"{text}**{exponent}"

    up = [factor(label, p) for label, p in terms if p > 0]
    down = [factor(label, p) for label, p in terms if p < 0]
    text = "*".join(up) if up else "1"
    if down:
        text += "/" + (down[0] if len(down) == 1 else "(" + "*".join(down) + ")")
    return text


def _exponent_text(value: float) -> str:
    fraction = Fraction(value).limit_denominator(12)
    if abs(float(fraction) - value) < 1e-6:
        return str(fraction.numerator) if fraction.denominator == 1 else f"({fraction})"
    return f"{value:.4g}"
