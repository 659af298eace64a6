"""Physical units of the data, and the dimensional check of a formula.

A search told the units of its inputs (and, usually, of its target) only
returns formulas that are dimensionally consistent:

* both sides of ``+`` and ``-`` have the same units;
* the argument of ``sin``, ``cos``, ``tan``, ``exp``, ``log``, ``tanh`` and of
  every custom operator is dimensionless, and so is its value;
* ``sqrt``, ``square``, ``cube`` and ``inv`` scale the units (½, 2, 3, −1);
  ``neg`` and ``abs`` keep them;
* an exponent is dimensionless, and since it is a fitted number, so is the base
  of ``pow`` where the formula's units must come out fixed;
* the whole formula has the target's units.

**Constants.** The fitted constants ``c`` (and the literal ``1``) are
dimensionless. This is what makes the constraint bite: if every constant could
take whatever units the formula needs, any formula would balance (``c₁·x + c₂·t``
is "consistent" with ``c₁`` in 1/m and ``c₂`` in 1/s), which is why a penalty with
free-unit constants everywhere does little. Most laws need nothing else: their
dimensional constants (``g``, ``G``, ``c``, ``k_B``) are columns of the data, or
declared ones. When the target's units are **not** a product of powers of the
inputs' units (Kepler's period in days from a semi-major axis in au), no
formula with dimensionless constants can balance; then (``dimensional_constant
="auto"``) a constant that multiplies or divides the whole formula (``c·…``,
``…/c``) is an overall factor whose units are solved for, ``P = c·a^1.5`` with
``c`` in day/au^1.5, and every other constraint still holds.

:func:`parse_units` turns what a user writes (pint unit strings such as
``"m/s^2"``, or exponent vectors) into :class:`Units`: one exponent vector per
feature and for the target over the base dimensions they use. The sampler
masks tokens with them while trees grow (:mod:`cadsr_sklearn.unit_masks`);
:func:`check_units` is the final word on a finished formula (the scorer rejects
what it fails, before any constant is fitted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from .expression import Expression
from .library import Library

__all__ = ["Units", "UnitCheck", "data_units", "parse_units", "check_units", "describe_units",
           "format_units", "token_unit_rules", "UnitRule"]

#: pint's base dimensions in the order units are written, with their SI symbols.
_SI_SYMBOLS = {"[mass]": "kg", "[length]": "m", "[time]": "s", "[current]": "A",
               "[temperature]": "K", "[substance]": "mol", "[luminosity]": "cd"}
#: Spellings of "no units", and angle units: dimensionless on purpose.
_PLAIN_DIMENSIONLESS = {"", "1", "dimensionless", "rad", "radian", "radians", "deg", "degree",
                        "degrees", "sr", "steradian"}
_TOLERANCE = 1e-9


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
        if self.target is not None and _equal(exponents, self.target):
            return self.target_label
        starts = [(None, 0.0)]  # the target's units to the power 0, 1 or −1 (a divisor)
        if self.target is not None:
            starts += [(self.target_label, 1.0), (self.target_label, -1.0)]
        for label, k in starts:
            rest = exponents - (0.0 if label is None else k * self.target)
            target = [(label, k)] if label is not None else []
            if not np.any(np.abs(rest) > _TOLERANCE):
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
        import warnings

        warnings.warn(f"{label}: pint reads {text!r} as {unit}, which is dimensionless. If you "
                      f"meant a dimensional unit, check its spelling (the astronomical unit is "
                      f"'au'; 'AU' is absorbance).", UserWarning, stacklevel=4)
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
        if abs(e) < _TOLERANCE:
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
    if not np.any(np.abs(row) > _TOLERANCE):
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


# ------------------------------------------------------------- tokens' rules

@dataclass(frozen=True)
class UnitRule:
    """What a token does to units: its ``kind`` and, for a variable or a scaling
    operator, the exponents or the factor.

    kind : {"variable", "dimensionless", "constant", "same", "mul", "div", "pow", "scale"}
        ``dimensionless``: a terminal without units (``1``) or an operator whose
        argument(s) and value are dimensionless (``sin``, ``exp``, custom ones);
        ``constant``: the fitted ``c`` (dimensionless, or the overall factor);
        ``same``: ``add``/``sub``; ``scale``: the value's units are
        ``factor`` × the argument's (``sqrt`` ½, ``square`` 2, ``inv`` −1, ``neg`` 1).
    """

    kind: str
    factor: float = 1.0
    feature: int | None = None


_SCALES = {"sqrt": 0.5, "square": 2.0, "cube": 3.0, "inv": -1.0, "neg": 1.0, "abs": 1.0}
_BINARY = {"add": "same", "sub": "same", "mul": "mul", "div": "div", "pow": "pow"}


@lru_cache(maxsize=16)
def token_unit_rules(library: Library) -> tuple[UnitRule, ...]:
    """The :class:`UnitRule` of every token of ``library``, by token id."""
    rules = []
    for token in library.tokens:
        if token.kind == "variable":
            rules.append(UnitRule("variable", feature=token.feature))
        elif token.kind == "constant":
            rules.append(UnitRule("constant"))
        elif token.kind == "one":
            rules.append(UnitRule("dimensionless"))
        elif token.name in _SCALES and token.kind == "unary":
            rules.append(UnitRule("scale", _SCALES[token.name]))
        elif token.name in _BINARY and token.kind == "binary":
            rules.append(UnitRule(_BINARY[token.name]))
        else:  # transcendental and custom operators
            rules.append(UnitRule("dimensionless"))
    return tuple(rules)


# ------------------------------------------------------- the final check

@dataclass(frozen=True)
class UnitCheck:
    """The verdict of :func:`check_units` on one formula.

    Attributes
    ----------
    consistent : bool
    units : ndarray of shape (D,) or None
        The formula's units (the target's when consistent and they were given);
        None when they depend on a fitted exponent.
    factor_units : ndarray of shape (D,) or None
        The units of the overall constant factor when it carries some, else None:
        of the number that multiplies the rest of the formula as it is shown
        (``365.25*a**(3/2)``, day/au^(3/2)), also where the tree divides by its
        constant (``a**1.5/c``, which SymPy shows as the same product).
    open_factor : bool
        An overall factor carries units that depend on a fitted exponent (then
        ``factor_units`` is None).
    reason : str
        Why it is not consistent ("" when it is).
    """

    consistent: bool
    units: np.ndarray | None = None
    factor_units: np.ndarray | None = None
    open_factor: bool = False
    reason: str = ""


class _Inconsistent(Exception):
    pass


# A subtree's units: an exponent vector, _FREE for the overall factor (a constant
# whose units are solved for) or anything multiplied by it, or _OPEN for units that
# depend on a fitted exponent (a dimensional base raised to c).
_FREE, _OPEN = "free", "open"


def check_units(expression: Expression, units: Units, rules: Sequence[UnitRule] | None = None,
                names: Sequence[str] | None = None) -> UnitCheck:
    """Whether ``expression`` is dimensionally consistent under ``units``, and its units.

    ``rules`` are :func:`token_unit_rules` of the expression's library (computed
    if not given); ``names`` name the features in the reason. With
    ``units.dimensional_constant``, a constant on the top product chain (a factor
    of the whole formula through ``*`` and ``/`` only) is the overall factor.
    """
    rules = token_unit_rules(expression.library) if rules is None else rules
    tokens = expression.tokens
    n = len(tokens)
    if n == 1 and rules[tokens[0]].kind == "constant":
        # y = c, the fit of a constant target (the sampler writes no lone constant): c is
        # in the target's units, whatever they are
        target = units.target
        dimensional = target is not None and bool(np.any(np.abs(target) > _TOLERANCE))
        return UnitCheck(True, target, target if dimensional else None)
    on_chain = [False] * n  # the top product chain: the root, and mul/div children on it
    on_chain[0] = True
    for i, t in enumerate(tokens):
        if on_chain[i] and rules[t].kind in ("mul", "div"):
            for child in expression.children(i):
                on_chain[child] = True
    values: list = [None] * n
    try:
        for i in range(n - 1, -1, -1):  # children before parents: BFS order reversed
            values[i] = _node_units(rules[tokens[i]], [values[c] for c in expression.children(i)],
                                    units, on_chain[i], names)
    except _Inconsistent as err:
        return UnitCheck(False, reason=str(err))
    root = values[0]
    if root is _FREE:
        if units.target is None:
            return UnitCheck(True, None)
        factor = _factor_units(expression, rules, units, values)
        return UnitCheck(True, units.target, factor, open_factor=factor is None)
    if root is _OPEN:
        if units.target is None:
            return UnitCheck(True, None)
        return UnitCheck(False, reason="its units depend on a fitted exponent")
    if units.target is not None and not _equal(root, units.target):
        return UnitCheck(False, reason=f"it is in {units.format(root)}, the target in "
                                       f"{units.format(units.target)}")
    return UnitCheck(True, root)


def _node_units(rule: UnitRule, children: list, units: Units, on_chain: bool, names):
    kind = rule.kind
    D = len(units.base)
    if kind == "variable":
        return units.features[rule.feature]
    if kind == "constant":
        return _FREE if on_chain and units.dimensional_constant else np.zeros(D)
    if kind == "dimensionless":
        for child in children:
            if child is _OPEN or (child is not _FREE and np.any(np.abs(child) > _TOLERANCE)):
                raise _Inconsistent(f"the argument of a function is in "
                                    f"{_shown(child, units)}, not dimensionless")
        return np.zeros(D)
    if kind == "scale":
        (child,) = children
        return child if isinstance(child, str) else rule.factor * child
    a, b = children
    if kind == "same":
        if a is _FREE or b is _FREE:
            return b if a is _FREE else a
        if a is _OPEN or b is _OPEN or not _equal(a, b):
            raise _Inconsistent(f"it adds {_shown(a, units)} to {_shown(b, units)}")
        return a
    if kind in ("mul", "div"):
        if a is _FREE or b is _FREE:
            return _FREE
        if a is _OPEN or b is _OPEN:
            return _OPEN
        return a + b if kind == "mul" else a - b
    # pow: a fitted (dimensionless) exponent; a dimensional base leaves the units open
    if b is _OPEN or (b is not _FREE and np.any(np.abs(b) > _TOLERANCE)):
        raise _Inconsistent(f"an exponent is in {_shown(b, units)}, not dimensionless")
    if a is _FREE or a is _OPEN:
        return a
    return np.zeros(D) if not np.any(np.abs(a) > _TOLERANCE) else _OPEN


def _shown(value, units: Units) -> str:
    if value is _OPEN:
        return "units set by a fitted exponent"
    if value is _FREE:
        return "free units"
    return units.format(value)


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - b) < _TOLERANCE))


def _factor_units(expression: Expression, rules, units: Units, values: list) -> np.ndarray | None:
    """The overall factor's units: the target's over those of the rest of the top chain,
    with fitted exponents read from the expression's constants; None if they stay open."""
    tokens, D = expression.tokens, len(units.base)
    constants = iter(expression.constants)
    constant_at = {i: next(constants) for i, t in enumerate(tokens)
                   if expression.library.tokens[t].kind == "constant"}

    def exponent_value(i: int) -> float | None:
        """Value of an exponent that is a constant or the literal 1; None for anything else."""
        rule = rules[tokens[i]]
        if rule.kind == "constant":
            return float(constant_at[i])
        if rule.kind == "dimensionless" and expression.library.tokens[tokens[i]].kind == "one":
            return 1.0
        return None

    def resolved(i: int, sign: float) -> np.ndarray | None:
        """Units the chain below node ``i`` contributes (times ``sign``), factors excluded."""
        rule, value = rules[tokens[i]], values[i]
        if rule.kind == "constant" and value is _FREE:
            return np.zeros(D)  # the factor itself
        if rule.kind == "scale" and isinstance(value, str):  # sqrt(a**c), square(c·x)
            (child,) = expression.children(i)
            inner = resolved(child, sign)
            return None if inner is None else rule.factor * inner
        if rule.kind in ("mul", "div") and (value is _FREE or value is _OPEN):
            left, right = expression.children(i)
            a = resolved(left, sign)
            b = resolved(right, sign if rule.kind == "mul" else -sign)
            return None if a is None or b is None else a + b
        if isinstance(value, np.ndarray):
            return sign * value
        if rule.kind == "pow":  # a dimensional base to a constant power
            base, exponent = expression.children(i)
            power = exponent_value(exponent)
            if (power is None or not math.isfinite(power)
                    or not isinstance(values[base], np.ndarray)):
                return None
            return sign * power * values[base]
        return None

    rest = resolved(0, 1.0)
    # the coefficient the formula is shown with: SymPy writes x/c as (1/c)·x, so whether the
    # tree multiplies or divides by its constant, the number people read multiplies
    return None if rest is None else units.target - rest


def describe_units(expression: Expression, units: Units | None) -> str | None:
    """A formula's units as people read them (``units_``, the front's ``units``
    column, the summary, exports): ``"day; its constant factor in day/au**(3/2)"``;
    None for a fit without units.

    Raises RuntimeError for a formula that is not consistent: the search never
    returns one, so that would be a defect, never a formula to show unlabelled.
    """
    if units is None:
        return None
    check = check_units(expression, units)
    if not check.consistent:
        raise RuntimeError(f"The formula is not dimensionally consistent: {check.reason}.")
    if check.units is not None:
        text = units.format(check.units)
    elif len(expression.tokens) == 1:  # y = c without y_units: c is in y's units
        text = "those of y (a constant)"
    else:
        text = "unknown (set by a fitted exponent)"
    if check.factor_units is not None:
        text += f"; its constant factor in {units.format(check.factor_units)}"
    elif check.open_factor:
        text += "; its constant factor's units depend on a fitted exponent"
    return text
