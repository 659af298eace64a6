"""What a formula of a formula file computes, found without running code from the file.

A formula file holds each formula three ways: the token tree ``predict``
evaluates, its SymPy form and the text ``equations_`` shows. To check that they
agree (:mod:`cadsr_sklearn.reporting.formula_checks`), the SymPy form and the
text are evaluated here, with NumPy, at a few points. Neither goes through
``sympy.lambdify`` or ``sympify``: both write Python source from the file's
names and run it, so a symbol named ``__import__('os')…`` would run. Here a
formula is walked node by node, and each name is looked up in fixed tables:

* a symbol is a feature's column, by its symbol; any other symbol has no value;
* a number is its value; π, e and SymPy's other named numbers theirs;
* ``Add``, ``Mul`` and ``Pow`` are sums, products and powers, as NumPy computes
  them (``(-8)**(1/3)`` is NaN, as in ``predict``);
* a function is NumPy's of the same meaning (:data:`NUMPY_FUNCTIONS`); another
  of SymPy's own functions (``erf``, ``gamma``, what a custom operator's SymPy
  form may hold) is SciPy's or NumPy's through ``lambdify`` of that class alone,
  whose code holds only the class's own name; an undefined function, the
  registered custom operator of its name (:func:`~cadsr_sklearn.register_operator`).

Anything else (a symbol that is no feature, an unknown function, complex
numbers) raises :class:`Unevaluable`. The text is read by a small parser of
the arithmetic SymPy's printer writes (numbers, names, ``+ - * / **``, calls,
parentheses) into the same walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache, reduce

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from ..expressions.custom_operators import registered_operator

__all__ = ["Unevaluable", "NUMPY_FUNCTIONS", "sympy_values", "text_values", "MAX_TEXT_LENGTH"]

#: SymPy's functions (by name) as NumPy computes them; ``Max``/``Min`` take any number.
NUMPY_FUNCTIONS: Mapping[str, Callable] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "Abs": np.abs, "tanh": np.tanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "sign": np.sign,
    "Max": lambda *a: reduce(np.maximum, a), "Min": lambda *a: reduce(np.minimum, a)}

#: SymPy's named numbers as its printer writes them.
NAMED_NUMBERS: Mapping[str, float] = {
    "pi": np.pi, "E": np.e, "EulerGamma": float(sympy.EulerGamma),
    "GoldenRatio": float(sympy.GoldenRatio), "Catalan": float(sympy.Catalan),
    "oo": np.inf, "nan": np.nan}

#: The longest text read (a formula's text is a line; the file's own limit on its
#: formulas' size keeps legitimate ones far below).
MAX_TEXT_LENGTH = 20_000
# parentheses, powers and calls within one another: far beyond a formula's (SymPy's printer
# recurses too), and within Python's recursion limit at five calls of the parser a level
_MAX_NESTING = 100


class Unevaluable(ValueError):
    """A formula that cannot be evaluated from the tables (the message says what stops it)."""


def sympy_values(expr: sympy.Basic, symbols: Sequence[str], X: np.ndarray) -> np.ndarray:
    """(n,) values of ``expr`` at the rows of ``X``, one column per name of ``symbols``."""
    columns = _columns(symbols, X)
    with np.errstate(all="ignore"):
        return _rows(_sympy_value(expr, columns, 0), len(X))


def text_values(text: str, symbols: Sequence[str], X: np.ndarray) -> np.ndarray:
    """(n,) values of the formula written ``text`` (SymPy's printing) at the rows of ``X``."""
    columns = _columns(symbols, X)
    tree = _Parser(text).formula()
    with np.errstate(all="ignore"):
        return _rows(_tree_value(tree, columns), len(X))


def _columns(symbols: Sequence[str], X: np.ndarray) -> dict[str, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    return {str(name): X[:, j] for j, name in enumerate(symbols)}


def _rows(values, n: int) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype.kind not in "fiub":
        raise Unevaluable("it is not real-valued")
    return np.array(np.broadcast_to(values.astype(np.float64), (n,)))


# ------------------------------------------------------------------ a SymPy form
def _sympy_value(expr: sympy.Basic, columns: dict[str, np.ndarray], depth: int):
    if depth > _MAX_NESTING:
        raise Unevaluable("it is nested too deeply")
    if expr.is_Symbol:
        if expr.name not in columns:
            raise Unevaluable(f"it holds the symbol {expr.name!r}, which is no feature")
        return columns[expr.name]
    if expr.is_Number or expr.is_NumberSymbol:
        return _number(expr)
    args = [_sympy_value(a, columns, depth + 1) for a in expr.args]
    if expr.is_Add:
        return reduce(np.add, args)
    if expr.is_Mul:
        return reduce(np.multiply, args)
    if expr.is_Pow:
        return np.power(*args)
    name = expr.func.__name__
    if isinstance(expr, AppliedUndef):
        return _function(name, len(args), undefined=True)(*args)
    if name in NUMPY_FUNCTIONS or isinstance(expr, sympy.Function):  # Max, Min: no Function
        return _function(name, len(args), undefined=False)(*args)
    raise Unevaluable(f"it holds a {type(expr).__name__}, which no formula holds")


def _number(number: sympy.Basic) -> np.float64:
    try:
        return np.float64(float(number))
    except (TypeError, ValueError):  # I, zoo: complex
        raise Unevaluable(f"it holds the number {number}, which is not real") from None


def _function(name: str, arity: int, undefined: bool) -> Callable:
    """NumPy's function for SymPy's function ``name`` of ``arity`` arguments."""
    if not undefined and name in NUMPY_FUNCTIONS:
        return NUMPY_FUNCTIONS[name]
    if not undefined:
        function = _sympy_class_function(name, arity)
        if function is not None:
            return function
    operator = registered_operator(name)
    if operator is not None and operator.arity == arity:
        return lambda *a: operator.function(*(np.asarray(x, dtype=np.float64) for x in a))
    raise Unevaluable(f"it holds the function {name!r}, which has no numerical value here "
                      "(no such SymPy function, nor a registered operator of that name)")


@lru_cache(maxsize=64)
def _sympy_class_function(name: str, arity: int) -> Callable | None:
    """SymPy's function class ``name`` as a NumPy function of ``arity`` arrays, or None.

    ``lambdify`` of the class applied to dummies: the code it writes holds the
    class's own printed name and the dummies, nothing the file wrote.
    """
    kind = getattr(sympy.functions, name, None)
    if not (isinstance(kind, type) and issubclass(kind, sympy.Function)):
        return None
    try:
        arguments = [sympy.Dummy() for _ in range(arity)]
        function = sympy.lambdify(arguments, kind(*arguments), modules=["scipy", "numpy"])
        with np.errstate(all="ignore"):
            function(*np.full((arity, 1), 0.5))  # one that lambdify cannot write fails here
    except Exception:  # noqa: BLE001 - a function NumPy and SciPy lack, or a wrong arity
        return None
    return function


# ---------------------------------------------------------------------- a text
_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
                    r"|(?P<name>[^\W\d]\w*)|(?P<op>\*\*|[-+*/(),]))")


class _Parser:
    """SymPy's printed arithmetic, as a tree of tuples: ``("num", v)``, ``("name", s)``,
    ``("call", name, args)``, ``("neg", a)``, ``("**", a, b)`` and ``("chain", a, [(op,
    b), …])`` for sums and products.

    ``-x**2`` is ``-(x**2)`` and ``2**-x`` is ``2**(-x)``, as in Python.
    """

    def __init__(self, text: str):
        if not isinstance(text, str) or len(text) > MAX_TEXT_LENGTH:
            raise Unevaluable("the text is no formula (too long, or not text)")
        self.tokens = self._tokens(text)
        self.at = 0
        self.depth = 0

    @staticmethod
    def _tokens(text: str) -> list[tuple[str, str]]:
        tokens, at = [], 0
        text = text.rstrip()
        while at < len(text):
            match = _TOKEN.match(text, at)
            if match is None:
                raise Unevaluable(f"the text cannot be read at {text[at:at + 10]!r}")
            kind = match.lastgroup
            tokens.append((kind, match.group(kind)))
            at = match.end()
        return tokens

    def formula(self) -> tuple:
        tree = self._sum()
        if self.at != len(self.tokens):
            raise Unevaluable(f"the text goes on after a whole formula ({self._peek()!r})")
        return tree

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise Unevaluable("the text ends inside a formula")
        token = self.tokens[self.at]
        if expected is not None and token != ("op", expected):
            raise Unevaluable(f"the text has {token[1]!r} where {expected!r} belongs")
        self.at += 1
        return token

    def _nested(self):
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise Unevaluable("the text is nested too deeply")

    def _sum(self) -> tuple:
        return self._chain(("+", "-"), self._product)

    def _product(self) -> tuple:
        return self._chain(("*", "/"), self._unary)

    def _chain(self, ops: tuple[str, str], term) -> tuple:
        """``a op b op c …``, left to right, as one node: ``("chain", a, [(op, b), …])``
        (a long sum is long, not deep)."""
        first, rest = term(), []
        while self._peek() in ops:
            op = self._take()[1]
            rest.append((op, term()))
        return first if not rest else ("chain", first, rest)

    def _unary(self) -> tuple:
        self._nested()
        if self._peek() in ("-", "+"):
            op = self._take()[1]
            tree = self._unary()
            tree = ("neg", tree) if op == "-" else tree
        else:
            tree = self._power()
        self.depth -= 1
        return tree

    def _power(self) -> tuple:
        base = self._atom()
        if self._peek() == "**":
            self._take()
            return ("**", base, self._unary())
        return base

    def _atom(self) -> tuple:
        kind, text = self._take()
        if kind == "number":
            return ("num", float(text))
        if kind == "name":
            if self._peek() != "(":
                return ("name", text)
            self._take("(")
            args = [self._sum()]
            while self._peek() == ",":
                self._take()
                args.append(self._sum())
            self._take(")")
            return ("call", text, args)
        if text == "(":
            tree = self._sum()
            self._take(")")
            return tree
        raise Unevaluable(f"the text has {text!r} where a number, name or '(' belongs")


_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power}


def _tree_value(tree: tuple, columns: dict[str, np.ndarray]):
    kind = tree[0]
    if kind == "num":
        return np.float64(tree[1])
    if kind == "name":
        name = tree[1]
        if name in columns:
            return columns[name]
        if name in NAMED_NUMBERS:
            return np.float64(NAMED_NUMBERS[name])
        raise Unevaluable(f"the text names {name!r}, which is no feature nor number")
    if kind == "neg":
        return np.negative(_tree_value(tree[1], columns))
    if kind == "chain":
        value = _tree_value(tree[1], columns)
        for op, term in tree[2]:
            value = _BINARY[op](value, _tree_value(term, columns))
        return value
    if kind == "call":
        args = [_tree_value(a, columns) for a in tree[2]]
        # a name SymPy prints for one of its functions, else a registered operator's
        undefined = tree[1] not in NUMPY_FUNCTIONS and _sympy_class_function(
            tree[1], len(args)) is None
        return _function(tree[1], len(args), undefined)(*args)
    return _BINARY[kind](_tree_value(tree[1], columns), _tree_value(tree[2], columns))
