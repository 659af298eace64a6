"""A formula a person writes, as a token tree of a search's library.

:func:`parse_formula` reads a formula such as ``"1.5*m*v**2"`` or
``"sin(x0)*x1 + 2"`` (or takes a SymPy expression) in the feature names, and
writes it as an :class:`~cadsr_sklearn.Expression` of a
:class:`~cadsr_sklearn.Library`: the tree the search itself would have to
sample to mean that formula. SymPy does the reading (``sympy.sympify``, every
feature name a plain ``Symbol``, as :mod:`cadsr_sklearn.benchmarks.suites`
reads its formulas); this module only maps SymPy's tree onto the tokens.

The text is read with ``evaluate=False``, so the tree keeps the shape it was
written in: ``2*(x + 1)`` stays one product with one constant instead of SymPy's
``2*x + 2``. How SymPy's nodes become tokens:

* a feature name is its variable token; ``E``, ``pi`` and numbers are numbers;
* a number, or any sub-formula without a feature (``2*pi``, ``sin(1)``), is one
  constant token ``c`` that the fit starts at the value written (PySR's
  meaning: a written number is a starting value, not a law), except an exact
  1, which is the literal ``1`` where the library has it (``use_one``);
* an n-ary sum or product is a chain of binary ``add``/``mul``, left to right
  as written; a term with a negative sign is subtracted (``sub``), a factor
  with a negative exponent divides (``div``); a sum's positive terms come first
  (``-x + y`` is ``y - x``);
* a leading factor −1 is ``neg`` where the library has it, else part of the
  product's constant (``-2*x`` is one constant started at −2);
* a power with a number for exponent is the library's exact token for it where
  there is one: 2 ``square``, 3 ``cube``, 1/2 ``sqrt``, −1 ``inv`` (or
  ``1/x`` by ``div``), a negative exponent the reciprocal of the positive
  power; otherwise ``pow(x, c)``, the exponent a constant started at the
  value written (negative too: ``x**-2.5`` is ``pow(x, c)``, c started at
  −2.5); otherwise, for 2 and 3, the base multiplied by itself (``mul``).
  ``E**x`` is ``exp``;
* ``sin cos tan log exp tanh abs asin acos atan sinh cosh`` are their tokens;
  ``square(x)``, ``cube(x)``, ``neg(x)``, ``inv(x)`` and registered operators'
  names (``gauss(x)``) are read as those operators; ``ln`` is ``log``.

What the library cannot write raises ValueError saying what is missing: an
operator it lacks, a number without the constant token, a name that is no
feature. Whether the sampler could write the tree (its length and constraints)
is the caller's concern (:mod:`cadsr_sklearn.search.guesses`).

``sympy.sympify`` evaluates the text as Python: parse only formulas you trust.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import sympy
from sympy.core.function import AppliedUndef

from .expression import Expression
from .library import Library

__all__ = ["parse_formula", "formula_text"]

#: SymPy's functions that are tokens of the same meaning, by token name.
SYMPY_FUNCTIONS = {sympy.sin: "sin", sympy.cos: "cos", sympy.tan: "tan", sympy.log: "log",
                   sympy.exp: "exp", sympy.tanh: "tanh", sympy.Abs: "abs", sympy.asin: "asin",
                   sympy.acos: "acos", sympy.atan: "atan", sympy.sinh: "sinh",
                   sympy.cosh: "cosh"}

#: The exact unary token of a power with this exponent.
EXACT_POWERS = {2.0: "square", 3.0: "cube", 0.5: "sqrt"}


def parse_formula(formula, names: Sequence[str], library: Library) -> Expression:
    """``formula`` (a string or SymPy expression in ``names``) as a tree of ``library``.

    ``names`` are the features' symbols, in column order. The constants start
    at the values written. Raises ValueError saying why the formula cannot be
    read or written with ``library``'s tokens.
    """
    expr = read_formula(formula, names, library)
    tree = _TreeWriter(library, names).write(expr)
    return Expression.from_prefix(tree.tokens, library, tree.constants)


def formula_text(formula) -> str:
    """How a formula given as text or as a SymPy expression is quoted in messages."""
    return formula if isinstance(formula, str) else str(formula)


def read_formula(formula, names: Sequence[str], library: Library) -> sympy.Expr:
    """``formula`` as a SymPy expression whose free symbols are among ``names``."""
    if isinstance(formula, sympy.Basic):
        expr = formula
    elif isinstance(formula, str):
        try:
            expr = sympy.sympify(formula, locals=_namespace(names, library), evaluate=False)
        except (sympy.SympifyError, SyntaxError, TypeError, AttributeError, ValueError) as err:
            raise ValueError(f"it cannot be read as a formula ({_first_line(err)}).") from None
    else:
        raise ValueError(f"a formula must be a string or a SymPy expression, got "
                         f"{type(formula).__name__}.")
    if not isinstance(expr, sympy.Expr):
        raise ValueError(f"it is a {type(expr).__name__}, not a formula.")
    unknown = sorted({s.name for s in expr.free_symbols} - set(names))
    if unknown:
        raise ValueError(f"it uses {unknown}, which {'is' if len(unknown) == 1 else 'are'} "
                         f"not a feature; the features are {list(names)}.")
    return expr


def _namespace(names: Sequence[str], library: Library) -> dict:
    """What names mean in a formula's text: the features' symbols, ``ln``, and the
    library's operators that SymPy does not know (``square``, a registered ``gauss``) as
    undefined functions of their names, which :class:`_TreeWriter` maps to them."""
    known = set(SYMPY_FUNCTIONS.values()) | {"sqrt", "add", "sub", "mul", "div", "pow"}
    space = {token.name: sympy.Function(token.name) for token in library.tokens
             if token.arity and token.name not in known}
    space["ln"] = sympy.log
    space.update({name: sympy.Symbol(name) for name in names})  # a feature wins over all
    return space


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return text[-1] if text else type(err).__name__


@dataclass(frozen=True)
class _Tree:
    """A written sub-tree: its tokens in preorder and its constants' start values, in
    the same order (what :meth:`Expression.from_prefix` takes)."""

    tokens: tuple[int, ...]
    constants: tuple[float, ...] = ()


class _TreeWriter:
    """SymPy's tree → preorder tokens of ``library`` (one instance per formula)."""

    def __init__(self, library: Library, names: Sequence[str]) -> None:
        self.library = library
        self.variables = {name: int(library.variable_ids[i]) for i, name in enumerate(names)}

    # ------------------------------------------------------------- dispatch
    def write(self, expr: sympy.Expr) -> _Tree:
        if expr.is_number:
            return self.number(_value(expr))
        if isinstance(expr, sympy.Symbol):
            return _Tree((self.variables[expr.name],))
        if isinstance(expr, sympy.Add):
            return self.sum(expr)
        if isinstance(expr, sympy.Mul):
            return self.product(expr)
        if isinstance(expr, sympy.Pow):
            return self.power(expr)
        if isinstance(expr, sympy.log) and len(expr.args) == 2:  # log(x, b), unevaluated
            return self.write(sympy.log(expr.args[0]) / sympy.log(expr.args[1]))
        if isinstance(expr, (sympy.Function, AppliedUndef)):
            return self.function(expr)
        raise ValueError(f"{expr} is a {type(expr).__name__}, which no token writes.")

    # ---------------------------------------------------------- the tokens
    def token(self, name: str, expr) -> int:
        """The id of operator ``name``, which writing ``expr`` needs."""
        if name not in self.library.names:
            raise ValueError(f"{expr} needs the operator {name!r}, which is not among this "
                             f"search's operators ({', '.join(self._operators())}).")
        return self.library.index(name)

    def has(self, name: str) -> bool:
        return name in self.library.names

    def _operators(self) -> list[str]:
        return [t.name for t in self.library.tokens if t.arity] or ["none"]

    def node(self, name: str, expr, *children: _Tree) -> _Tree:
        return _Tree((self.token(name, expr),) + sum((c.tokens for c in children), ()),
                     sum((c.constants for c in children), ()))

    def number(self, value: float) -> _Tree:
        """A number: the literal 1 when exact and in the library, else a constant started
        at ``value``."""
        if value == 1 and self.library.one_id is not None:
            return _Tree((self.library.one_id,))
        if self.library.const_id is None:
            raise ValueError(f"it holds the number {value:g}, but the search has no constant "
                             "token (use_constants=False).")
        return _Tree((self.library.const_id,), (value,))

    # ----------------------------------------------------------- sums
    def sum(self, expr: sympy.Add) -> _Tree:
        """Terms chained by ``add``, the negative ones (after the positive ones) by ``sub``."""
        terms = _flat(expr, sympy.Add)
        numbers = [t for t in terms if t.is_number]
        terms = [t for t in terms if not t.is_number]
        if numbers:  # 1 + pi + x: the numbers as one constant, last
            terms.append(sympy.Float(sum(_value(t) for t in numbers)))
        negative = [_coefficient(t) < 0 for t in terms]
        ordered = ([t for t, n in zip(terms, negative) if not n]
                   + [t for t, n in zip(terms, negative) if n])
        tree = self.term(ordered[0], negate=False)
        for term in ordered[1:]:
            if _coefficient(term) < 0 and self.has("sub"):
                tree = self.node("sub", expr, tree, self.term(term, negate=True))
            else:
                tree = self.node("add", expr, tree, self.term(term, negate=False))
        return tree

    def term(self, term: sympy.Expr, negate: bool) -> _Tree:
        """A term of a sum, its sign flipped when ``negate`` (it is being subtracted)."""
        sign = -1.0 if negate else 1.0
        if term.is_number:
            return self.number(sign * _value(term))
        if isinstance(term, sympy.Mul):
            return self.product(term, sign)
        return self.write(term)

    # ------------------------------------------------------- products
    def product(self, expr: sympy.Mul, sign: float = 1.0) -> _Tree:
        """Coefficient and factors chained by ``mul``, over the denominator by ``div``."""
        factors = _flat(expr, sympy.Mul)
        coefficient = sign * math.prod(_value(f) for f in factors if f.is_number)
        above, below = [], []
        for factor in (f for f in factors if not f.is_number):
            exponent = factor.exp if isinstance(factor, sympy.Pow) else None
            if exponent is not None and exponent.is_number and _value(exponent) < 0:
                below.append(_power(factor.base, -_value(exponent)))
            else:
                above.append(factor)
        negate = coefficient == -1 and self.has("neg")  # neg(x): no constant to fit
        if negate:
            coefficient = 1.0
        parts = ([self.number(coefficient)] if coefficient != 1 else [])
        parts += [self.write(f) for f in above]
        tree = self.chain("mul", expr, parts) if parts else None
        if below:
            tree = self.divide(expr, tree, self.chain("mul", expr, [self.write(f) for f in below]))
        return self.node("neg", expr, tree) if negate else tree

    def chain(self, name: str, expr, parts: list[_Tree]) -> _Tree:
        tree = parts[0]
        for part in parts[1:]:
            tree = self.node(name, expr, tree, part)
        return tree

    def divide(self, expr, numerator: _Tree | None, denominator: _Tree) -> _Tree:
        """``numerator / denominator``; a missing numerator is 1 (``inv`` where there is one)."""
        if numerator is None:
            if self.has("inv"):
                return self.node("inv", expr, denominator)
            return self.node("div", expr, self.number(1.0), denominator)
        if not self.has("div") and self.has("inv"):
            return self.node("mul", expr, numerator, self.node("inv", expr, denominator))
        return self.node("div", expr, numerator, denominator)

    # --------------------------------------------------------- powers
    def power(self, expr: sympy.Pow) -> _Tree:
        base, exponent = expr.args
        if not exponent.is_number:
            if base == sympy.E and self.has("exp"):
                return self.node("exp", expr, self.write(exponent))
            return self.node("pow", expr, self.write(base), self.write(exponent))
        value = _value(exponent)
        magnitude = abs(value)
        exact = EXACT_POWERS.get(magnitude)
        exact = exact if exact is not None and self.has(exact) else None
        if value < 0 and (exact or magnitude == 1):  # 1/x, 1/x**2: no constant to fit
            return self.divide(expr, None, self.write(_power(base, magnitude)))
        if value == 1:
            return self.write(base)
        if exact:
            return self.node(exact, expr, self.write(base))
        if self.has("pow") and self.library.const_id is not None:
            return self.node("pow", expr, self.write(base), self.number(value))
        if value < 0:
            return self.divide(expr, None, self.write(_power(base, magnitude)))
        if value in (2.0, 3.0) and self.has("mul"):
            return self.chain("mul", expr, [self.write(base)] * int(value))
        wanted = " or ".join(["'pow' with constants"]
                             + [repr(n) for n in [EXACT_POWERS.get(magnitude)] if n])
        raise ValueError(f"{expr} needs the operator {wanted}, which this search lacks "
                         f"({', '.join(self._operators())}).")

    # ------------------------------------------------------ functions
    def function(self, expr) -> _Tree:
        name = SYMPY_FUNCTIONS.get(expr.func, expr.func.__name__)
        if name not in self.library.names:
            raise ValueError(f"{expr} uses {name!r}, which is not among this search's operators "
                             f"({', '.join(self._operators())}).")
        token = self.library.index(name)
        if self.library.arity_by_id[token] != len(expr.args):
            raise ValueError(f"{expr}: {name!r} takes {self.library.arity_by_id[token]} "
                             f"argument(s), not {len(expr.args)}.")
        return self.node(name, expr, *(self.write(a) for a in expr.args))


def _flat(expr: sympy.Expr, kind: type) -> list[sympy.Expr]:
    """The terms of a sum (or factors of a product), nested unevaluated ones opened, in
    the order written."""
    out = []
    for arg in expr.args:
        out.extend(_flat(arg, kind) if isinstance(arg, kind) else [arg])
    return out


def _coefficient(term: sympy.Expr) -> float:
    """The numeric factor of a term: its sign says whether a sum subtracts it."""
    if term.is_number:
        return _value(term)
    if isinstance(term, sympy.Mul):
        return math.prod(_value(f) for f in _flat(term, sympy.Mul) if f.is_number)
    return 1.0


def _power(base: sympy.Expr, exponent: float) -> sympy.Expr:
    """``base**exponent``, unevaluated, and ``base`` itself for 1."""
    return base if exponent == 1 else sympy.Pow(base, _exact(exponent), evaluate=False)


def _exact(value: float) -> sympy.Expr:
    """An integer exponent as a SymPy Integer (so that 2.0 still finds ``square``)."""
    return sympy.Integer(int(value)) if value.is_integer() else sympy.Float(value)


def _value(number: sympy.Expr) -> float:
    """A number without features as a finite float; ValueError if it is not one."""
    try:
        value = complex(number.evalf())
    except (TypeError, ValueError):
        value = complex(math.nan)
    if value.imag != 0 or not math.isfinite(value.real):
        raise ValueError(f"{number} is not a finite real number.")
    return value.real
