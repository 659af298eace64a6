"""The dimensional check of a formula, and the units each token gives its node.

A search told the units of its inputs (and, usually, of its target) only
returns formulas that are dimensionally consistent:

* both sides of ``+`` and ``-`` have the same units;
* the argument of ``sin``, ``cos``, ``tan``, ``exp``, ``log``, ``tanh``, ``asin``,
  ``acos``, ``atan``, ``sinh``, ``cosh`` and of every custom operator is
  dimensionless, and so is its value;
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

:func:`token_unit_rules` says what each token does to units; :func:`check_units`
is the final word on a finished formula (the scorer rejects what it fails,
before any constant is fitted), and :func:`describe_units` writes a formula's
units as people read them. The data's units are :mod:`cadsr_sklearn.units.quantities`'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..expressions.expression import Expression
from ..expressions.library import Library
from .quantities import EXPONENT_TOLERANCE, Units, same_units

__all__ = ["UnitRule", "token_unit_rules", "UnitCheck", "check_units", "describe_units"]


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
    """A formula breaks the rule: the message's template and the units it names, formatted
    only when a reason is asked for (the scorer asks only whether; formatting units in
    the user's terms costs more than the check)."""

    def reason(self, units: Units) -> str:
        template, *values = self.args
        return template.format(*(_shown(value, units) for value in values))


# A subtree's units: an exponent vector, _FREE for the overall factor (a constant
# whose units are solved for) or anything multiplied by it, or _OPEN for units that
# depend on a fitted exponent (a dimensional base raised to c).
_FREE, _OPEN = "free", "open"


def check_units(expression: Expression, units: Units, rules: Sequence[UnitRule] | None = None,
                explain: bool = True) -> UnitCheck:
    """Whether ``expression`` is dimensionally consistent under ``units``, and its units.

    ``rules`` are :func:`token_unit_rules` of the expression's library (computed
    if not given); without ``explain``, an inconsistent formula's reason is left
    empty. With ``units.dimensional_constant``, a constant on the top product chain
    (a factor of the whole formula through ``*`` and ``/`` only) is the overall factor.
    """
    rules = token_unit_rules(expression.library) if rules is None else rules
    tokens = expression.tokens
    n = len(tokens)
    if n == 1 and rules[tokens[0]].kind == "constant":
        # y = c, the fit of a constant target (the sampler writes no lone constant): c is
        # in the target's units, whatever they are
        target = units.target
        dimensional = target is not None and bool(np.any(np.abs(target) > EXPONENT_TOLERANCE))
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
                                    units, on_chain[i])
        _check_target(values[0], units)
    except _Inconsistent as err:
        return UnitCheck(False, reason=err.reason(units) if explain else "")
    root = values[0]
    if units.target is None and isinstance(root, str):  # _FREE or _OPEN: nothing to meet
        return UnitCheck(True, None)
    if root is _FREE:
        factor = _factor_units(expression, rules, units, values)
        return UnitCheck(True, units.target, factor, open_factor=factor is None)
    return UnitCheck(True, root)


def _check_target(root, units: Units) -> None:
    """Raise _Inconsistent if the formula's units, ``root``, cannot be the target's."""
    if units.target is None or root is _FREE:
        return
    if root is _OPEN:
        raise _Inconsistent("its units depend on a fitted exponent")
    if not same_units(root, units.target):
        raise _Inconsistent("it is in {}, the target in {}", root, units.target)


def _node_units(rule: UnitRule, children: list, units: Units, on_chain: bool):
    kind = rule.kind
    D = len(units.base)
    if kind == "variable":
        return units.features[rule.feature]
    if kind == "constant":
        return _FREE if on_chain and units.dimensional_constant else np.zeros(D)
    if kind == "dimensionless":
        for child in children:
            if child is _OPEN or (child is not _FREE
                                  and np.any(np.abs(child) > EXPONENT_TOLERANCE)):
                raise _Inconsistent("the argument of a function is in {}, not dimensionless",
                                    child)
        return np.zeros(D)
    if kind == "scale":
        (child,) = children
        return child if isinstance(child, str) else rule.factor * child
    a, b = children
    if kind == "same":
        if a is _FREE or b is _FREE:
            return b if a is _FREE else a
        if a is _OPEN or b is _OPEN or not same_units(a, b):
            raise _Inconsistent("it adds {} to {}", a, b)
        return a
    if kind in ("mul", "div"):
        if a is _FREE or b is _FREE:
            return _FREE
        if a is _OPEN or b is _OPEN:
            return _OPEN
        return a + b if kind == "mul" else a - b
    # pow: a fitted (dimensionless) exponent; a dimensional base leaves the units open
    if b is _OPEN or (b is not _FREE and np.any(np.abs(b) > EXPONENT_TOLERANCE)):
        raise _Inconsistent("an exponent is in {}, not dimensionless", b)
    if a is _FREE or a is _OPEN:
        return a
    return np.zeros(D) if not np.any(np.abs(a) > EXPONENT_TOLERANCE) else _OPEN


def _shown(value, units: Units) -> str:
    if value is _OPEN:
        return "units set by a fitted exponent"
    if value is _FREE:
        return "free units"
    return units.format(value)


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
