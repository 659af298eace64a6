"""SymPy expressions as JSON data, and back, for formula files: no code, bounded size.

:func:`to_json` writes an expression as nested JSON: ``{"symbol": "m"}``,
``{"integer": "2"}``, ``{"rational": ["1", "2"]}``, ``{"float": [sign,
mantissa in hex, exponent, bits], "precision": 53}`` (exact), ``{"number":
"pi"}``, or ``{"node": "Mul", "args": […]}`` for SymPy's ``Add``, ``Mul``,
``Pow``, ``Max``, ``Min`` and its functions (``exp``, ``log``, ``Abs``…);
``{"undefined": name, "args": […]}`` for any other function (a custom
operator's own SymPy class reads back as an undefined function of its name).

:func:`from_json` builds the expression from fixed tables only: SymPy's node
classes by name, numbers from their digits, symbols from the names it is
allowed. A file is data from anywhere, so reading it is bounded: a formula of
at most :data:`MAX_NODES` nodes nested :data:`MAX_DEPTH` deep (SymPy's printers
recurse), numbers of at most :data:`MAX_DIGITS` digits and floats of at most
:data:`MAX_PRECISION` bits, a power of two exact numbers only with a small
exponent (SymPy computes ``2**(10**20)`` when it meets one), and only the
functions the caller allows; anything else raises :class:`BadFormula`.
Nodes are built unevaluated, as written.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import sympy

__all__ = ["BadFormula", "to_json", "from_json", "known_node", "MAX_NODES", "MAX_DEPTH"]

#: The most nodes one formula may hold (a front's formulas hold tens to hundreds).
MAX_NODES = 5_000
#: The deepest a formula may nest (SymPy's printers recurse a few calls per level).
MAX_DEPTH = 100
#: The most digits of an integer or of a fraction's parts.
MAX_DIGITS = 400
#: The most bits of a float's precision and mantissa (float64's is 53; a float shown
#: to 17 digits, 60).
MAX_PRECISION = 1_000
#: The largest |exponent| of a power of two exact numbers: SymPy evaluates one whenever
#: it rebuilds the expression (one it writes has |exponent| < 1).
MAX_EXACT_EXPONENT = 64

# SymPy's named numbers, written by name.
NAMED_NUMBERS = {"pi": sympy.pi, "E": sympy.E, "EulerGamma": sympy.EulerGamma,
                 "GoldenRatio": sympy.GoldenRatio, "Catalan": sympy.Catalan, "I": sympy.I,
                 "oo": sympy.oo, "-oo": -sympy.oo, "zoo": sympy.zoo, "nan": sympy.nan}
_CORE_NODES = {"Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow, "Max": sympy.Max,
               "Min": sympy.Min}
# mpmath's special floats: zero, the infinities and NaN (a mantissa of 0)
_SPECIAL_FLOATS = {(0, 0, 0, 0), (0, 0, -456, -2), (1, 0, -789, -3), (0, 0, -123, -1)}


class BadFormula(ValueError):
    """A formula's JSON that is malformed or beyond the bounds; the message says which."""


def to_json(expr: sympy.Basic) -> Any:
    """``expr`` as nested JSON: a symbol, a number, or a node with its arguments."""
    if expr.is_Symbol:
        return {"symbol": expr.name}
    for name, number in NAMED_NUMBERS.items():
        if expr is number:
            return {"number": name}
    if expr.is_Integer:
        return {"integer": str(expr)}
    if expr.is_Rational:
        return {"rational": [str(expr.p), str(expr.q)]}
    if expr.is_Float:
        sign, mantissa, exponent, bits = expr._mpf_
        return {"float": [sign, format(mantissa, "x"), exponent, bits], "precision": expr._prec}
    args = [to_json(a) for a in expr.args]
    if known_node(type(expr).__name__) is type(expr):
        return {"node": type(expr).__name__, "args": args}
    # an undefined function, or a node of a user's own (a custom operator's SymPy form):
    # read back as an undefined function of that name, which prints the same
    return {"undefined": expr.func.__name__, "args": args}


def known_node(name: str) -> type | None:
    """SymPy's class for a node name: Add, Mul, Pow, Max, Min or one of SymPy's functions."""
    if name in _CORE_NODES:
        return _CORE_NODES[name]
    function = getattr(sympy.functions, name, None)
    if isinstance(function, type) and issubclass(function, sympy.Function):
        return function
    return None


def from_json(node: Any, symbols: Collection[str], functions: Collection[str]) -> sympy.Expr:
    """The expression :func:`to_json` wrote as ``node``, in the symbols named ``symbols``,
    with no SymPy function but those named in ``functions`` (undefined functions
    excepted: they stand for custom operators, and compute nothing)."""
    return _Reader(frozenset(symbols), frozenset(functions)).read(node, 0)


class _Reader:
    def __init__(self, symbols: frozenset[str], functions: frozenset[str]):
        self.symbols, self.functions, self.nodes = symbols, functions, 0

    def read(self, node: Any, depth: int) -> sympy.Expr:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise BadFormula(f"a formula holds more than {MAX_NODES} nodes or nests more "
                             f"than {MAX_DEPTH} deep.")
        if not isinstance(node, dict) or len(node) != (2 if {"args", "float"} & set(node)
                                                       else 1):
            raise BadFormula(f"a formula node is not an object of a known form: "
                             f"{_short(node)}.")
        if "symbol" in node:
            name = node["symbol"]
            if name not in self.symbols:
                raise BadFormula(f"a formula holds the symbol {_short(name)}, which is none "
                                 "of the file's features (or listed constants).")
            return sympy.Symbol(name)
        if "number" in node:
            if not isinstance(node["number"], str) or node["number"] not in NAMED_NUMBERS:
                raise BadFormula(f"unknown named number {_short(node['number'])}.")
            return NAMED_NUMBERS[node["number"]]
        if "integer" in node:
            return sympy.Integer(_integer(node["integer"]))
        if "rational" in node:
            parts = node["rational"]
            if not isinstance(parts, list) or len(parts) != 2:
                raise BadFormula("a fraction is not [numerator, denominator].")
            p, q = map(_integer, parts)
            if q == 0:
                raise BadFormula("a fraction has the denominator 0.")
            return sympy.Rational(p, q)
        if "float" in node:
            return _float(node["float"], node.get("precision"))
        if not isinstance(node.get("args"), list):
            raise BadFormula(f"a formula node has no list of arguments: {_short(node)}.")
        args = [self.read(a, depth + 1) for a in node["args"]]
        if "undefined" in node:
            return self._undefined(node["undefined"], args)
        if "node" not in node:
            raise BadFormula(f"a formula node is not an object of a known form: "
                             f"{_short(node)}.")
        return self._node(node["node"], args)

    def _undefined(self, name: Any, args: list) -> sympy.Expr:
        if (not isinstance(name, str) or not name.isidentifier() or known_node(name)
                or not args):
            raise BadFormula(f"a formula holds the function {_short(name)} of "
                             f"{len(args)} arguments, which is no custom operator's.")
        return sympy.Function(name)(*args)

    def _node(self, name: Any, args: list) -> sympy.Expr:
        kind = known_node(name) if isinstance(name, str) else None
        if kind is None or (name not in _CORE_NODES and name not in self.functions):
            raise BadFormula(f"unknown formula node {_short(name)}.")
        if kind is sympy.Pow:
            if len(args) != 2:
                raise BadFormula(f"a power of {len(args)} arguments.")
            base, exponent = args
            if (base.is_Rational and exponent.is_Rational
                    and abs(exponent) > MAX_EXACT_EXPONENT):
                raise BadFormula(f"a power of exact numbers with the exponent {exponent}, "
                                 "which no formula holds.")
        if not args and name not in ("Add", "Mul"):
            raise BadFormula(f"a {name} of no arguments.")
        try:
            return kind(*args, evaluate=False)
        except (TypeError, ValueError) as err:  # a function given the wrong arguments
            raise BadFormula(f"a {name} of {len(args)} arguments ({err}).") from None


def _integer(text: Any) -> int:
    """An integer written in decimal (as text, or a JSON integer), within the bounds."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise BadFormula(f"{_short(text)} is not an integer.")
    text = str(text)
    digits = text[1:] if text[:1] == "-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > MAX_DIGITS:
        raise BadFormula(f"{_short(text)} is not an integer of at most {MAX_DIGITS} digits.")
    return int(text)


def _float(parts: Any, precision: Any) -> sympy.Float:
    """A SymPy float from its exact parts: mpmath's (sign, mantissa, exponent, bits)."""
    if not isinstance(parts, list) or len(parts) != 4:
        raise BadFormula("a float is not [sign, mantissa, exponent, bits].")
    sign, mantissa, exponent, bits = parts
    if (isinstance(precision, bool) or not isinstance(precision, int)
            or not 1 <= precision <= MAX_PRECISION):
        raise BadFormula(f"a float's precision {_short(precision)} is not 1 to "
                         f"{MAX_PRECISION} bits.")
    if not (isinstance(mantissa, str) and mantissa.isascii() and mantissa.isalnum()
            and len(mantissa) <= MAX_PRECISION // 4):
        raise BadFormula(f"a float's mantissa {_short(mantissa)} is not hexadecimal.")
    try:
        value = (_integer(sign), int(mantissa, 16), _integer(exponent), _integer(bits))
    except ValueError:
        raise BadFormula(f"a float's mantissa {_short(mantissa)} is not hexadecimal.") from None
    if value[1] == 0:
        if value not in _SPECIAL_FLOATS:
            raise BadFormula(f"the float {value} is not one mpmath writes.")
    elif value[0] not in (0, 1) or value[3] != value[1].bit_length() or value[1] % 2 == 0 \
            or abs(value[2]) > 100_000:
        raise BadFormula(f"the float {value} is not one mpmath writes (normalised).")
    sign, mantissa, exponent, bits = value
    return sympy.Float((sign, format(mantissa, "x"), exponent, bits), precision=precision)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
