"""The token library: every symbol an expression tree can hold.

A :class:`Token` carries its arity, its operation code (the compiled value and
derivatives in :mod:`.expressions.operations`), the SymPy function it exports to and a display
form. A :class:`Library` is the ordered
token set of one search; token ids are indices into it and are what the policy
sees.

Semantics are the plain mathematical ones. There is no "protected" division,
logarithm or power: ``log(-1)`` is NaN, ``1/0`` is inf, and a negative base with a
non-integer exponent is NaN. An expression whose output is not finite on the
training rows is invalid, so the exported formula always means exactly what was
evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import sympy

from .custom_operators import Operator, check_operator, registered_operator, registered_operators
from .opcodes import CONSTANT, ONE, OPCODES, VARIABLE, custom_opcode, operator_table

__all__ = [
    "Token",
    "Library",
    "BINARY_OPERATORS",
    "UNARY_OPERATORS",
    "DEFAULT_BINARY",
    "DEFAULT_UNARY",
    "TRIGONOMETRIC",
    "INVERSE_PAIRS",
    "OPERATOR_ALIASES",
    "canonical_operators",
    "check_operator_complexity",
    "operator_names",
]


@dataclass(frozen=True)
class Token:
    """One symbol of the expression grammar.

    Parameters
    ----------
    name : str
        Identifier users pass in ``binary_operators``/``unary_operators``.
    arity : int
        Number of children: 2, 1 or 0 (terminal).
    opcode : int
        Operation code of the compiled interpreter (:data:`.opcodes.OPCODES`),
        which holds the one implementation of the token's value and derivatives.
    sympy_function : callable or None
        Builds the SymPy form from the children's SymPy forms.
    display : str
        Format string used for a readable infix form, e.g. ``"sin({})"``.
    kind : {"binary", "unary", "variable", "one", "constant"}
        Role of the token.
    feature : int or None
        Column of ``X`` for a variable token.
    """

    name: str
    arity: int
    opcode: int
    sympy_function: Callable[..., sympy.Expr] | None
    display: str
    kind: str
    feature: int | None = None


# Module-level functions rather than anonymous ones, so that tokens (and so
# libraries, expressions and fitted estimators) can be pickled.
def _sympy_add(a, b):
    return a + b


def _sympy_sub(a, b):
    return a - b


def _sympy_mul(a, b):
    return a * b


def _sympy_div(a, b):
    return a / b


def _sympy_pow(a, b):
    return a**b


def _sympy_square(a):
    return a**2


def _sympy_cube(a):
    return a**3


def _sympy_neg(a):
    return -a


def _sympy_inv(a):
    return 1 / a


def _sympy_abs(a):
    # Left unevaluated: for a non-real-declared symbol SymPy would rewrite |exp(z)| as
    # exp(re(z)) and expand re(tanh(z)) into sinh/cosh quotients, which overflow in
    # float64 where |exp(tanh(z))| does not.
    return sympy.Abs(a, evaluate=False)


def _sympy_one():
    return sympy.Integer(1)


BINARY_OPERATORS: dict[str, Token] = {
    t.name: t
    for t in (
        Token("add", 2, OPCODES["add"], _sympy_add, "({} + {})", "binary"),
        Token("sub", 2, OPCODES["sub"], _sympy_sub, "({} - {})", "binary"),
        Token("mul", 2, OPCODES["mul"], _sympy_mul, "({} * {})", "binary"),
        Token("div", 2, OPCODES["div"], _sympy_div, "({} / {})", "binary"),
        Token("pow", 2, OPCODES["pow"], _sympy_pow, "({} ^ {})", "binary"),
    )
}

UNARY_OPERATORS: dict[str, Token] = {
    t.name: t
    for t in (
        Token("sin", 1, OPCODES["sin"], sympy.sin, "sin({})", "unary"),
        Token("cos", 1, OPCODES["cos"], sympy.cos, "cos({})", "unary"),
        Token("tan", 1, OPCODES["tan"], sympy.tan, "tan({})", "unary"),
        Token("log", 1, OPCODES["log"], sympy.log, "log({})", "unary"),
        Token("sqrt", 1, OPCODES["sqrt"], sympy.sqrt, "sqrt({})", "unary"),
        Token("exp", 1, OPCODES["exp"], sympy.exp, "exp({})", "unary"),
        Token("square", 1, OPCODES["square"], _sympy_square, "({})^2", "unary"),
        Token("cube", 1, OPCODES["cube"], _sympy_cube, "({})^3", "unary"),
        Token("neg", 1, OPCODES["neg"], _sympy_neg, "-({})", "unary"),
        Token("inv", 1, OPCODES["inv"], _sympy_inv, "1/({})", "unary"),
        Token("tanh", 1, OPCODES["tanh"], sympy.tanh, "tanh({})", "unary"),
        Token("abs", 1, OPCODES["abs"], _sympy_abs, "|{}|", "unary"),
        Token("asin", 1, OPCODES["asin"], sympy.asin, "asin({})", "unary"),
        Token("acos", 1, OPCODES["acos"], sympy.acos, "acos({})", "unary"),
        Token("atan", 1, OPCODES["atan"], sympy.atan, "atan({})", "unary"),
        Token("sinh", 1, OPCODES["sinh"], sympy.sinh, "sinh({})", "unary"),
        Token("cosh", 1, OPCODES["cosh"], sympy.cosh, "cosh({})", "unary"),
    )
}

#: PySR's names of the binary operators, accepted in the operator lists for this package's.
OPERATOR_ALIASES: dict[str, str] = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}

#: The paper's SRBench operator set (appendix table of hyper-parameters).
DEFAULT_BINARY: tuple[str, ...] = ("add", "sub", "mul", "div", "pow")
DEFAULT_UNARY: tuple[str, ...] = ("sin", "cos", "log", "sqrt", "exp")

#: Operators that may not appear below one another (a DSO prior).
TRIGONOMETRIC: frozenset[str] = frozenset({"sin", "cos", "tan"})

#: (parent, child) pairs that undo each other and so are never generated. Some only
#: nearly do (``sqrt(square(x))`` is ``|x|``, ``asin(sin(x))`` a triangle wave): shapes
#: too rare in laws to keep them.
INVERSE_PAIRS: frozenset[tuple[str, str]] = frozenset(
    {
        ("exp", "log"),
        ("log", "exp"),
        ("sqrt", "square"),
        ("square", "sqrt"),
        ("neg", "neg"),
        ("inv", "inv"),
        ("sin", "asin"),
        ("asin", "sin"),
        ("cos", "acos"),
        ("acos", "cos"),
        ("tan", "atan"),
        ("atan", "tan"),
    }
)


def check_operators(binary_operators: Sequence, unary_operators: Sequence,
                    labels: tuple[str, str] = ("binary_operators", "unary_operators")) -> None:
    """Raise ValueError saying what is wrong with two lists of operators, if anything.

    The one check of operator lists: the library, the estimator's ``fit`` and the
    command line all call it. Each entry is a built-in name (or PySR's name of a
    binary one, :data:`OPERATOR_ALIASES`), the name of a registered custom
    operator or an :class:`~cadsr_sklearn.expressions.custom_operators.Operator` (see
    :mod:`cadsr_sklearn.expressions.custom_operators`) of the list's arity. Names must be
    known (a name of the other arity is pointed out), listed once, and not both
    lists empty. ``labels`` name the two lists in the message (the command line's
    are ``--binary`` and ``--unary``).
    """
    for role, entries, arity, table, other in (
        (labels[0], binary_operators, 2, BINARY_OPERATORS, UNARY_OPERATORS),
        (labels[1], unary_operators, 1, UNARY_OPERATORS, BINARY_OPERATORS),
    ):
        if isinstance(entries, str):
            raise ValueError(f"{role} must be a list of names such as ['add', 'mul'], "
                             f"not {entries!r}.")
        entries = canonical_operators(entries)
        names = [_operator_name(entry) for entry in entries]
        unknown = [name for name, entry in zip(names, entries)
                   if name not in table and _custom(entry, arity) is None]
        if unknown:
            misplaced = "".join(f" ({name!r} is a {other[name].kind} operator.)"
                                for name in unknown if name in other)
            misplaced += "".join(f" ({name!r} is a custom operator of arity {op.arity}.)"
                                 for name in unknown
                                 if (op := registered_operator(name)) is not None)
            custom = sorted(n for n, op in registered_operators().items() if op.arity == arity)
            choices = sorted(table) + custom
            raise ValueError(f"Unknown {role} {unknown}; choose from {choices}, or register "
                             f"your own with cadsr_sklearn.register_operator.{misplaced}")
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"{role} lists {repeated[0]!r} more than once.")
    if len(binary_operators) == 0 and len(unary_operators) == 0:
        raise ValueError("At least one binary or unary operator is required.")


def check_operator_complexity(operator_complexity, operators: Sequence[str]) -> dict[str, int]:
    """``operator_complexity`` as a dict of operator name → complexity, checked against the
    ``operators`` of a library (PySR's names of binary operators resolved); ValueError
    for an unknown operator or a complexity that is not an integer ≥ 1.

    Integers only: k ranks formulas in whole nodes, one slot of the hall of fame each.
    """
    if operator_complexity is None:
        return {}
    items = (operator_complexity.items() if isinstance(operator_complexity, Mapping)
             else operator_complexity)
    weights: dict[str, int] = {}
    for name, weight in items:
        canonical = OPERATOR_ALIASES.get(name, name) if isinstance(name, str) else name
        if canonical not in operators:
            raise ValueError(f"operator_complexity names {name!r}, which is not one of the "
                             f"operators {list(operators)}.")
        if isinstance(weight, bool) or not isinstance(weight, (int, np.integer)) or weight < 1:
            raise ValueError(f"operator_complexity[{name!r}] must be an integer ≥ 1, "
                             f"got {weight!r}.")
        weights[canonical] = int(weight)
    return weights


def operator_names(binary_operators: Sequence, unary_operators: Sequence) -> list[str]:
    """The names of two checked operator lists' operators (:func:`check_operators`), PySR's
    aliases resolved: the names a search's library gives them."""
    return [_operator_name(entry) for entry in
            canonical_operators(binary_operators) + canonical_operators(unary_operators)]


def canonical_operators(entries: Sequence) -> list:
    """An operator list with PySR's names (:data:`OPERATOR_ALIASES`) replaced by this
    package's: ``["+", "*"]`` is ``["add", "mul"]``."""
    return [OPERATOR_ALIASES.get(entry, entry) if isinstance(entry, str) else entry
            for entry in entries]


def _operator_name(entry) -> str:
    return entry.name if isinstance(entry, Operator) else entry


def _custom(entry, arity: int) -> Operator | None:
    """The custom operator an entry of an operator list stands for, if it is one of ``arity``."""
    operator = entry if isinstance(entry, Operator) else (
        registered_operator(entry) if isinstance(entry, str) else None)
    return operator if operator is not None and operator.arity == arity else None


class Library:
    """The ordered token set of one search.

    Token order is: binary operators, unary operators, the input variables
    ``x0 … x{n-1}``, the literal ``1`` and the constant token ``c``. Token ids are
    indices into :attr:`tokens`.

    Parameters
    ----------
    n_features : int
        Number of input variables.
    binary_operators, unary_operators : sequence of str
        Operator names; see :data:`BINARY_OPERATORS` and :data:`UNARY_OPERATORS`.
    use_constants : bool
        Include the constant token ``c`` whose value is fitted.
    use_one : bool
        Include the literal ``1``.
    operator_complexity : mapping of str to int, optional
        The complexity of an operator's node where it is not 1 (PySR's
        ``complexity_of_operators``): ``{"sin": 3, "exp": 3}``. Every other
        token counts 1. See :attr:`complexity_by_id`.
    """

    def __init__(
        self,
        n_features: int,
        binary_operators: Sequence[str] = DEFAULT_BINARY,
        unary_operators: Sequence[str] = DEFAULT_UNARY,
        use_constants: bool = True,
        use_one: bool = True,
        operator_complexity: Mapping[str, int] | Iterable[tuple[str, int]] | None = None,
    ) -> None:
        if isinstance(n_features, bool) or int(n_features) != n_features or n_features < 1:
            raise ValueError(f"A library needs at least one input variable, got {n_features!r}.")
        check_operators(binary_operators, unary_operators)
        binary_operators = canonical_operators(binary_operators)
        unary_operators = canonical_operators(unary_operators)
        custom: list[Operator] = []
        binary = [self._token(entry, 2, BINARY_OPERATORS, custom) for entry in binary_operators]
        unary = [self._token(entry, 1, UNARY_OPERATORS, custom) for entry in unary_operators]
        #: The custom operators among the tokens, k-th with op code
        #: :func:`cadsr_sklearn.expressions.opcodes.custom_opcode` (k, arity).
        self.custom_operators: tuple[Operator, ...] = tuple(custom)
        #: Row k: the addresses of the C functions of custom operator k, which the
        #: compiled kernels call (see :func:`cadsr_sklearn.expressions.opcodes.operator_table`).
        self.operator_table: np.ndarray = operator_table(op.kernels.row for op in custom)
        variables = [
            Token(f"x{i}", 0, VARIABLE, None, f"x{i}", "variable", feature=i)
            for i in range(int(n_features))
        ]
        terminals = list(variables)
        if use_one:
            terminals.append(Token("1", 0, ONE, _sympy_one, "1", "one"))
        if use_constants:
            terminals.append(Token("c", 0, CONSTANT, None, "c", "constant"))

        self.tokens: tuple[Token, ...] = tuple(binary + unary + terminals)
        self.n_features = int(n_features)
        self.names: tuple[str, ...] = tuple(t.name for t in self.tokens)
        self._index = {name: i for i, name in enumerate(self.names)}
        self.arities = np.array([t.arity for t in self.tokens], dtype=np.int64)
        kinds = np.array([t.kind for t in self.tokens])
        self.binary_ids = np.flatnonzero(kinds == "binary")
        self.unary_ids = np.flatnonzero(kinds == "unary")
        self.variable_ids = np.flatnonzero(kinds == "variable")
        self.terminal_ids = np.flatnonzero(self.arities == 0)
        self.one_id: int | None = self._index.get("1")
        self.const_id: int | None = self._index.get("c")
        self.trig_ids = np.array(
            [i for i, t in enumerate(self.tokens) if t.name in TRIGONOMETRIC], dtype=np.int64
        )
        self.inverse_pairs: tuple[tuple[int, int], ...] = tuple(
            (self._index[p], self._index[c])
            for p, c in sorted(INVERSE_PAIRS)
            if p in self._index and c in self._index
        )
        weights = check_operator_complexity(operator_complexity, self.names[:len(binary + unary)])
        #: Each token's complexity, by id: what one node of it adds to a formula's
        #: complexity k (:attr:`.Expression.complexity`). 1 unless ``operator_complexity``
        #: says otherwise; terminals always 1.
        self.complexity_by_id: tuple[int, ...] = tuple(weights.get(name, 1) for name in self.names)
        #: Whether every token counts 1, as without ``operator_complexity``: k is then the
        #: node count plus the fitted constants, computed without a sum over the nodes.
        self.uniform_complexity: bool = all(w == 1 for w in self.complexity_by_id)
        # The constructor arguments, for pickling and equality: names, and custom
        # operators themselves (a pickle carries their definition).
        by_name = {op.name: op for op in custom}
        self._config = (
            self.n_features,
            tuple(by_name.get(t.name, t.name) for t in binary),
            tuple(by_name.get(t.name, t.name) for t in unary),
            bool(use_constants),
            bool(use_one),
            tuple(sorted((name, w) for name, w in weights.items() if w != 1)),
        )
        # Plain-Python copies of the per-token facts, for the per-node loops of
        # Expression (indexing NumPy arrays with Python ints is several times slower).
        self.arity_by_id: tuple[int, ...] = tuple(t.arity for t in self.tokens)
        # Per token id, what a program (see .program) holds for it.
        self.opcodes = np.array([t.opcode for t in self.tokens], dtype=np.int32)
        self.features = np.array([-1 if t.feature is None else t.feature for t in self.tokens],
                                 dtype=np.int32)

    @staticmethod
    def _token(entry, arity: int, table: dict[str, Token], custom: list) -> Token:
        """The token of an operator list's entry; a custom operator is appended to ``custom``."""
        if isinstance(entry, str) and entry in table:
            return table[entry]
        operator = _custom(entry, arity)
        if isinstance(entry, Operator):
            check_operator(operator)  # one given directly was never checked
        custom.append(operator)
        return Token(operator.name, arity, custom_opcode(len(custom) - 1, arity),
                     operator.sympy_function,
                     operator.display_format, "binary" if arity == 2 else "unary")

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, token_id: int) -> Token:
        return self.tokens[token_id]

    def __repr__(self) -> str:
        return f"Library({', '.join(self.names)})"

    def __eq__(self, other: object) -> bool:
        # Same constructor arguments means the same token ids and semantics.
        return isinstance(other, Library) and self._config == other._config

    def __hash__(self) -> int:
        return hash(self._config)

    def __reduce__(self):
        # Rebuilt from its arguments: tokens are looked up again by name on load.
        return (Library, self._config)

    def arguments(self) -> dict:
        """The constructor's arguments, every operator by name: ``Library(**arguments)``
        rebuilds this library where its custom operators are registered under those names."""
        n_features, binary, unary, use_constants, use_one, complexity = self._config
        return {"n_features": n_features, "binary_operators": [_operator_name(b) for b in binary],
                "unary_operators": [_operator_name(u) for u in unary],
                "use_constants": use_constants, "use_one": use_one,
                "operator_complexity": dict(complexity)}

    def index(self, name: str) -> int:
        """Token id of ``name`` (``"x0"``, ``"sin"``, ``"c"`` …)."""
        try:
            return self._index[name]
        except KeyError:
            raise ValueError(f"{name!r} is not in this library: {', '.join(self.names)}.") from None

    def encode(self, names: Iterable[str]) -> np.ndarray:
        """Token ids of a sequence of token names."""
        return np.array([self.index(n) for n in names], dtype=np.int64)

    @property
    def constant_like_ids(self) -> np.ndarray:
        """Ids of the terminals that are not input variables (``1`` and ``c``)."""
        return np.array(
            [i for i in (self.one_id, self.const_id) if i is not None], dtype=np.int64
        )
