"""An expression: a tree of tokens in breadth-first order, with its constants.

The policy emits tokens breadth-first, so that is the canonical storage order here.
Because BFS children are consecutive (see :mod:`cadsr_sklearn.expressions.positions`), a
tree is evaluated by walking its BFS sequence backwards: every child comes after
its parent, so by the time a parent is reached both children are computed. That
walk is compiled: :attr:`Expression.program` is the tree as a flat program of
:mod:`cadsr_sklearn.expressions.program`, which evaluates it, fits its constants and folds
its numbers for export with one implementation of every operator.

Constant tokens ``c`` are numbered in BFS order; ``constants[k]`` is the value
of the ``k``-th ``c`` met in that order. A constant may be *fixed*: a literal
that snapping (:mod:`cadsr_sklearn.search.refinement.snapping`) set to a simple number such as 2
or π/2. It stays a node of the tree but is no longer a parameter: the constant
fit leaves it alone, and the complexity ``k`` of the BIC does not count it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import numpy as np
import sympy

from . import opcodes
from . import operations
from . import program
from .library import Library
from .notation import rounded_latex
from .positions import tree_positions
from .simple_numbers import snap_number

__all__ = ["Expression", "Node", "evaluate_many", "is_complete", "node_complexity",
           "sympy_complexity"]

@dataclass
class Node:
    """A tree view of one node: its token id and its children, left to right."""

    token: int
    children: list["Node"] = field(default_factory=list)


def _token_ids(tokens: Sequence[int]) -> tuple[int, ...]:
    """Token ids as a tuple of Python ints (from a list, NumPy array or tensor)."""
    if hasattr(tokens, "tolist"):  # NumPy array or torch tensor: one conversion, not n
        tokens = tokens.tolist()
    ids = tuple(int(t) for t in tokens)
    if any(i != t for i, t in zip(ids, tokens)):
        raise ValueError(f"Token ids must be integers, got {list(tokens)}.")
    return ids


def _first_children(tokens: tuple[int, ...], library: Library) -> tuple[list[int] | None, str]:
    """BFS index of every node's first child, or ``None`` and why the tree is malformed."""
    arity = library.arity_by_id
    n_tokens = len(arity)
    if not tokens:
        return None, "the sequence is empty"
    first = [0] * len(tokens)
    allocated = 1  # nodes the tree has room for so far: the root + the children seen
    for i, t in enumerate(tokens):
        if not 0 <= t < n_tokens:
            return None, (
                f"token id {t} at position {i} is not in the library (ids 0..{n_tokens - 1})"
            )
        if i >= allocated:
            return None, (
                f"the tree is complete after {i} token(s), "
                f"but {len(tokens) - i} more token(s) follow"
            )
        first[i] = allocated
        allocated += arity[t]
    if allocated > len(tokens):
        return None, f"{allocated - len(tokens)} child slot(s) are still open after the last token"
    return first, ""


def is_complete(tokens: Sequence[int], library: Library) -> bool:
    """Whether a BFS token sequence is exactly one complete tree of ``library`` tokens."""
    try:
        ids = _token_ids(tokens)
    except (TypeError, ValueError):
        return False
    return _first_children(ids, library)[0] is not None


def node_complexity(tokens: Sequence[int], library: Library) -> int:
    """The nodes of a tree of ``library`` tokens, each counted with its token's
    complexity: the number of nodes unless the library weighs some operators."""
    if library.uniform_complexity:
        return len(tokens)
    weight = library.complexity_by_id
    return sum(weight[t] for t in tokens)


class Expression:
    """A complete expression tree stored as BFS token ids plus constant values.

    Parameters
    ----------
    tokens : sequence of int
        Token ids in breadth-first order.
    library : Library
        The token set the ids refer to.
    constants : array-like of float, optional
        One value per constant token, in BFS order. Defaults to ones.
    fixed : array-like of bool, optional
        One flag per constant token, in BFS order: True for a literal that is
        no longer fitted (see :attr:`fixed`). Defaults to none.
    """

    __slots__ = ("tokens", "library", "constants", "fixed", "_first", "_key", "_n_constants",
                 "_n_fitted", "_program")

    def __init__(
        self, tokens: Sequence[int], library: Library, constants: Sequence[float] | None = None,
        fixed: Sequence[bool] | None = None,
    ) -> None:
        tokens = _token_ids(tokens)
        first, why = _first_children(tokens, library)
        if first is None:
            names = [library.names[t] if 0 <= t < len(library) else t for t in tokens]
            raise ValueError(f"Tokens {names} (BFS order) do not form one complete tree: {why}.")
        self.tokens = tokens
        self.library = library
        self._first = first
        self._key = tokens
        self._n_constants = tokens.count(library.const_id) if library.const_id is not None else 0
        self._program: tuple[np.ndarray, np.ndarray] | None = None
        self.constants = self._constant_values(constants, default=True)
        self.fixed = self._fixed_flags(fixed)
        self._n_fitted = self._n_constants - int(self.fixed.sum())
        if self._n_fitted < self._n_constants:
            self._key = self._literal_key()

    def _constant_values(self, constants, default: bool = False) -> np.ndarray:
        if constants is None:
            return np.ones(self._n_constants) if default else self.constants
        constants = np.asarray(constants, dtype=np.float64).reshape(-1)
        if len(constants) != self._n_constants:
            raise ValueError(f"Expected {self._n_constants} constant values, got {len(constants)}.")
        return constants

    def _fixed_flags(self, fixed) -> np.ndarray:
        if fixed is None:
            return np.zeros(self._n_constants, dtype=bool)
        fixed = np.asarray(fixed, dtype=bool).reshape(-1)
        if len(fixed) != self._n_constants:
            raise ValueError(f"Expected {self._n_constants} fixed flags, got {len(fixed)}.")
        return fixed

    def _literal_key(self) -> tuple:
        """The tokens, then (BFS number, value) of every fixed literal: two trees that
        differ only in a literal are different formulas."""
        literals = tuple((int(k), float(self.constants[k])) for k in np.flatnonzero(self.fixed))
        return self.tokens + (literals,)

    def __reduce__(self):
        # Pickle the definition only; the program is rebuilt on demand.
        return (Expression, (self.tokens, self.library, self.constants, self.fixed))

    # ------------------------------------------------------------------ views
    @property
    def key(self) -> tuple:
        """Canonical key: the BFS token tuple (fitted constants excluded), followed by
        ``((k, value), …)`` for the fixed literals when there are any."""
        return self._key

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        # SymPy's infix with every float in full: what is shown is what is evaluated
        return f"Expression({self.to_sympy()})"

    @property
    def n_constants(self) -> int:
        """Number of constant tokens ``c``, fixed literals included."""
        return self._n_constants

    @property
    def n_fitted(self) -> int:
        """Number of constants the fit moves: the constant tokens that are not fixed."""
        return self._n_fitted

    @property
    def node_complexity(self) -> int:
        """The nodes, each counted with its token's complexity
        (:attr:`Library.complexity_by_id <cadsr_sklearn.Library.complexity_by_id>`):
        the number of nodes unless the library weighs some operators."""
        return node_complexity(self.tokens, self.library)

    @property
    def complexity(self) -> int:
        """The paper's BIC complexity ``k`` = number of nodes + number of fitted constants.

        A fixed literal is a node like any other, but no parameter: it costs one,
        where a fitted constant costs two. With an ``operator_complexity``, each
        node counts its token's complexity (:attr:`node_complexity`), so the BIC's
        penalty, the Pareto front's axis and the k shown all weigh it alike.
        """
        return self.node_complexity + self.n_fitted

    def with_literal(self, k: int, value: float) -> "Expression":
        """A copy whose constant ``k`` (BFS number) is the fixed literal ``value``."""
        constants = self.constants.copy()
        constants[k] = value
        fixed = self.fixed.copy()
        fixed[k] = True
        new = self.with_constants(constants)
        new.fixed, new._n_fitted = fixed, self._n_fitted - (not self.fixed[k])
        new._key = new._literal_key()
        return new

    def with_constants(self, constants: Sequence[float]) -> "Expression":
        """A copy holding other constant values."""
        new = object.__new__(Expression)
        # The structure is already validated; share it (and the compiled program).
        new.tokens, new.library = self.tokens, self.library
        new._first, new._key = self._first, self._key
        new._n_constants, new._program = self._n_constants, self._program
        new.constants = self._constant_values(constants, default=True)
        new.fixed, new._n_fitted = self.fixed, self._n_fitted
        return new

    def children(self, i: int) -> range:
        """BFS indices of the children of node ``i``."""
        first = self._first[i]
        return range(first, first + self.library.arity_by_id[self.tokens[i]])

    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Dual index (depth, horizontal) of every node, in BFS order."""
        return tree_positions(self.library.arities[list(self.tokens)])

    def to_tree(self) -> Node:
        nodes = [Node(t) for t in self.tokens]
        for i, node in enumerate(nodes):
            node.children = [nodes[c] for c in self.children(i)]
        return nodes[0]

    def prefix(self) -> list[int]:
        """Token ids in preorder (parent, then children left to right)."""
        return [self.tokens[i] for i in self.preorder()]

    def preorder(self) -> list[int]:
        """BFS indices of the nodes in preorder (parent, then children left to right)."""
        out: list[int] = []
        stack = [0]
        while stack:
            i = stack.pop()
            out.append(i)
            stack.extend(reversed(self.children(i)))
        return out

    def _constant_order_prefix(self) -> list[int]:
        """BFS constant numbers in the order a preorder walk meets them."""
        cid = self.library.const_id
        bfs_number = {}
        for i, t in enumerate(self.tokens):
            if t == cid:
                bfs_number[i] = len(bfs_number)
        return [bfs_number[i] for i in self.preorder() if i in bfs_number]

    def prefix_constants(self) -> np.ndarray:
        """Constant values in the order a preorder walk meets them."""
        return self.constants[self._constant_order_prefix()]

    @classmethod
    def from_tree(
        cls, root: Node, library: Library, constants: Sequence[float] | None = None
    ) -> "Expression":
        """Build from a tree; ``constants`` are in BFS order."""
        tokens, queue = [], deque([root])
        while queue:
            node = queue.popleft()
            if not 0 <= node.token < len(library):
                raise ValueError(
                    f"Token id {node.token} is not in the library (ids 0..{len(library) - 1})."
                )
            if len(node.children) != library.arities[node.token]:
                raise ValueError(
                    f"Node {library.names[node.token]!r} has {len(node.children)} children, "
                    f"expected {library.arities[node.token]}."
                )
            tokens.append(node.token)
            queue.extend(node.children)
        return cls(tokens, library, constants)

    @classmethod
    def from_prefix(
        cls,
        prefix: Sequence[int],
        library: Library,
        constants: Sequence[float] | None = None,
    ) -> "Expression":
        """Build from preorder token ids; ``constants`` are in preorder."""
        prefix = _token_ids(prefix)
        arity = library.arity_by_id
        root = None
        open_nodes: list[Node] = []  # nodes still missing children, innermost last
        for pos, t in enumerate(prefix):
            if not 0 <= t < len(arity):
                raise ValueError(
                    f"Token id {t} at position {pos} is not in the library "
                    f"(ids 0..{len(arity) - 1})."
                )
            node = Node(t)
            if open_nodes:
                parent = open_nodes[-1]
                parent.children.append(node)
                if len(parent.children) == arity[parent.token]:
                    open_nodes.pop()
            elif root is None:
                root = node
            else:
                raise ValueError(
                    f"Prefix sequence has tokens after a complete tree (from position {pos})."
                )
            if arity[t]:
                open_nodes.append(node)
        if root is None:
            raise ValueError("Prefix sequence is empty.")
        if open_nodes:
            raise ValueError("Prefix sequence ends before the tree is complete.")
        expr = cls.from_tree(root, library)
        if constants is not None:
            constants = np.asarray(constants, dtype=np.float64).reshape(-1)
            if len(constants) != expr.n_constants:
                raise ValueError(
                    f"Expected {expr.n_constants} constant values, got {len(constants)}."
                )
            bfs = np.empty_like(constants)
            bfs[expr._constant_order_prefix()] = constants
            expr = expr.with_constants(bfs)
        return expr

    @classmethod
    def from_names(cls, names: Sequence[str], library: Library, constants=None, order="bfs"):
        """Build from token names, e.g. ``["add", "x0", "c"]`` (``order`` "bfs" or "prefix")."""
        if order not in ("bfs", "prefix"):
            raise ValueError(f"order must be 'bfs' or 'prefix', got {order!r}.")
        ids = library.encode(names)
        if order == "prefix":
            return cls.from_prefix(ids, library, constants)
        return cls(ids, library, constants)

    # ------------------------------------------------------------- evaluation
    @property
    def program(self) -> tuple[np.ndarray, np.ndarray]:
        """The tree as a program of :mod:`.expressions.program`: (op codes, arguments),
        ``(m,)`` each."""
        if self._program is None:
            lib = self.library
            self._program = program.compile_tokens(self.tokens, lib.opcodes, lib.features,
                                                   lib.arities)
        return self._program

    def evaluate(self, X: np.ndarray, constants: Sequence[float] | None = None) -> np.ndarray:
        """Output on the rows of ``X`` (n_samples, n_features), float64, shape (n_samples,).

        Non-finite values are returned as they arise (NaN for a log of a
        negative, inf for a division by zero); no warning is emitted.
        ``constants`` (BFS order) overrides :attr:`constants` for this call.
        The compiled interpreter computes exactly what the constant fit scored.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.library.n_features:
            raise ValueError(
                f"X must have shape (n_samples, {self.library.n_features}), got {X.shape}."
            )
        ops, args = self.program
        c = self._constant_values(constants)
        return program.evaluate(ops, args, np.ascontiguousarray(X), c, self.library.operator_table)

    def jacobian(self, X: np.ndarray) -> np.ndarray:
        """∂output/∂c ``(n_constants, n_samples)`` at the rows of ``X``, BFS order of the constants.

        Reverse mode, the Jacobian the constant fit takes; entries that are not
        finite are 0 (the fit's convention). Fixed literals have rows too.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        ops, args = self.program
        return program.jacobian(ops, args, X, self.constants, self.library.operator_table)

    def node_values(self, X: np.ndarray) -> np.ndarray:
        """Value ``(n_nodes, n_samples)`` of every node, BFS order, on the rows of ``X``:
        what :meth:`evaluate` computes on the way to the root."""
        ops, args = self.program
        return program.node_values(ops, args, np.ascontiguousarray(X, dtype=np.float64),
                                   self.constants, self.library.operator_table)

    def is_valid_on(self, X: np.ndarray) -> bool:
        """Whether the output is finite on every row of ``X``."""
        return bool(np.all(np.isfinite(self.evaluate(X))))

    def _variable_free_values(self, values: np.ndarray, fold_constants: bool) -> list:
        """Value of every subtree without a variable (``None`` elsewhere), as :meth:`evaluate`
        computes it. With ``fold_constants`` false, subtrees holding a ``c`` count as
        variable too."""
        ops, args = self.program
        out: list = [None] * len(self.tokens)
        for i in range(len(self.tokens) - 1, -1, -1):
            op, a = int(ops[i]), int(args[i])
            if op == opcodes.CONSTANT and fold_constants:
                out[i] = float(values[a])
            elif op == opcodes.ONE:
                out[i] = 1.0
            elif opcodes.arity(op) == 2:
                if out[a] is not None and out[a + 1] is not None:
                    out[i] = operations.apply(op, out[a], out[a + 1], self.library.operator_table)
            elif opcodes.arity(op) == 1 and out[a] is not None:
                out[i] = operations.apply(op, out[a], 0.0, self.library.operator_table)
        return out

    # ----------------------------------------------------------------- export
    def to_sympy(
        self,
        feature_names: Sequence[str] | None = None,
        constants: Sequence[float] | None = None,
        symbolic_constants: bool = False,
    ) -> sympy.Expr:
        """SymPy form, with variables named by ``feature_names`` (default ``x0…``).

        Constants become their fitted floats, or symbols ``c0, c1…`` (BFS
        numbering) when ``symbolic_constants`` is true; a fixed literal is its
        exact number (``2``, ``pi/2``), whatever ``symbolic_constants``.

        Every subtree without a variable is replaced by the number
        :meth:`evaluate` computes for it (an exact integer or small fraction
        when the subtree holds no ``c`` and the value is one). SymPy's own
        arithmetic would differ where float64 does not reach: it has no overflow
        (``exp(exp(10))`` stays finite), turns ``1/0.0`` into ``zoo`` and
        ``sqrt(-2.0)`` into an imaginary number, so e.g. ``exp(-1/(c - c))``
        would export as ``nan`` while it evaluates to ``0``. Folding keeps the
        exported formula meaning what was evaluated.
        """
        lib = self.library
        names = [f"x{i}" for i in range(lib.n_features)] if feature_names is None else feature_names
        if len(names) != lib.n_features:
            raise ValueError(f"Expected {lib.n_features} feature names, got {len(names)}.")
        symbols = [sympy.Symbol(str(n)) for n in names]
        values = self._constant_values(constants)
        folded = self._variable_free_values(values, fold_constants=not symbolic_constants)
        cid = lib.const_id
        out: list = [None] * len(self.tokens)
        holds_c = [False] * len(self.tokens)
        k = self._n_constants
        for i in range(len(self.tokens) - 1, -1, -1):
            tok = lib[self.tokens[i]]
            kids = self.children(i)
            holds_c[i] = self.tokens[i] == cid or any(holds_c[c] for c in kids)
            if tok.kind == "constant":
                k -= 1
            if tok.kind == "constant" and self.fixed[k]:
                exact = snap_number(float(values[k]), rtol=0.0)
                out[i] = _sympy_number(values[k], exact=False) if exact is None else exact
            elif folded[i] is not None:
                out[i] = _sympy_number(folded[i], exact=not holds_c[i])
            elif tok.arity:
                out[i] = _apply_sympy(tok, [out[c] for c in kids], [folded[c] for c in kids],
                                      lib)
            elif tok.kind == "variable":
                out[i] = symbols[tok.feature]
            else:  # a constant left symbolic
                out[i] = sympy.Symbol(f"c{k}")
        result = out[0]
        if result.has(sympy.zoo):
            # SymPy's unsigned infinity comes from a division by an exact zero, which is
            # +inf in float64 (for a positive numerator); NumPy cannot print zoo at all.
            result = result.xreplace({sympy.zoo: sympy.oo})
        return result

    def latex(self, feature_names: Sequence[str] | None = None, precision: int = 4) -> str:
        """LaTeX of the SymPy form, floats shown to ``precision`` significant digits."""
        return rounded_latex(self.to_sympy(feature_names), precision)

    def infix(self, feature_names: Sequence[str] | None = None, precision: int = 4) -> str:
        """Readable infix string built from each token's display form."""
        lib = self.library
        names = [f"x{i}" for i in range(lib.n_features)] if feature_names is None else feature_names
        out: list = [None] * len(self.tokens)
        k = self._n_constants
        for i in range(len(self.tokens) - 1, -1, -1):
            tok = lib[self.tokens[i]]
            if tok.arity:
                out[i] = tok.display.format(*(out[c] for c in self.children(i)))
            elif tok.kind == "variable":
                out[i] = str(names[tok.feature])
            elif tok.kind == "constant":
                k -= 1
                text = f"{self.constants[k]:.{precision}g}"
                out[i] = f"({text})" if text.startswith("-") else text  # not "x - -0.3"
            else:
                out[i] = "1"
        return out[0]


def _apply_sympy(tok, args: list, values: list, library: Library) -> sympy.Expr:
    """``tok.sympy_function(*args)``, except where SymPy's arithmetic is not float64's.

    ``values`` holds the float64 value of each argument that was folded (else None).
    Arguments can be numbers without having been folded, when SymPy cancels a
    subtree with variables (``x1 - x1`` is ``0``, ``x0/x0`` is ``1``). SymPy then
    makes ``x/0``, ``log(0)`` and ``0**-1`` the unsigned ``zoo`` (which NumPy cannot
    even print) and ``cos(oo)`` an interval; float64 says ``x/0 = x*inf`` (NaN at
    ``x = 0``), ``log(0) = -inf``, ``0**-1 = inf``, ``cos(inf) = nan``. So an
    operator on numbers only is computed as :meth:`Expression.evaluate` would,
    ``x/0`` becomes ``x*oo``, and a power of a NaN, which float64 can swallow
    (``1**nan = nan**0 = 1``), is spelled out as a piecewise form. Any ``zoo``
    SymPy still makes (``1/0**y`` is ``zoo**y``) becomes ``oo`` in
    :meth:`Expression.to_sympy`. Signed zeros are beyond SymPy: ``1/(x*0)``
    exports as ``oo`` for every ``x``.
    """
    name = tok.name
    if all(a.is_number for a in args):
        try:
            floats = [float(a) if v is None else float(v) for a, v in zip(args, values)]
        except TypeError:  # a complex SymPy number: leave it to SymPy
            floats = None
        if floats is not None:
            value = operations.apply(tok.opcode, floats[0], floats[1] if len(floats) > 1 else 0.0,
                                  library.operator_table)
            return _sympy_number(value, exact=all(a.is_Rational for a in args))
    if name in ("div", "inv") and args[-1].is_number and args[-1].is_zero:
        # Only a folded zero knows its sign; x/(-0.0) = -x*inf.
        negative = values[-1] is not None and math.copysign(1.0, values[-1]) < 0
        inf = -sympy.oo if negative else sympy.oo
        return inf if name == "inv" else args[0] * inf
    if name == "pow":
        base, exponent = args
        if exponent is sympy.nan:
            return sympy.Piecewise((1, sympy.Eq(base, 1)), (sympy.nan, True))
        if base is sympy.nan:
            return sympy.Piecewise((1, sympy.Eq(exponent, 0)), (sympy.nan, True))
    return tok.sympy_function(*args)


def _sympy_number(value: float, exact: bool) -> sympy.Expr:
    """SymPy number for a float64 ``value``; a Rational if ``exact`` and it is one."""
    value = float(value)
    if math.isnan(value):
        return sympy.nan
    if math.isinf(value):
        return sympy.oo if value > 0 else -sympy.oo
    if exact and abs(value) < 2**53:
        # Subtrees of the literal 1 only, e.g. 1 + 1 or 1/(1 + 1 + 1): show 2, 1/3.
        ratio = Fraction(value).limit_denominator(1000)
        if float(ratio) == value:
            return sympy.Rational(ratio.numerator, ratio.denominator)
    return sympy.Float(value)


def sympy_complexity(expr: sympy.Expr) -> int:
    """Number of nodes in SymPy's preorder traversal of ``expr``."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def evaluate_many(expressions: Sequence[Expression], X: np.ndarray,
                  n_jobs: int | None = 1, stop_at_nonfinite: bool = False) -> np.ndarray:
    """Outputs ``(B, S)`` of ``expressions`` on the rows of ``X``, on ``n_jobs`` threads.

    Row ``j`` is bit for bit ``expressions[j].evaluate(X)``; with
    ``stop_at_nonfinite``, except that an output not finite on some row is all NaN
    (its evaluation stops early: what a reward needs, on many rows).
    """
    from .parallel import run_in_threads

    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.empty((len(expressions), X.shape[0]))
    if not expressions:
        return Y
    library = expressions[0].library
    custom = [j for j, e in enumerate(expressions)
              if e.library is not library and e.library != library]
    if custom:  # one at a time: another library's operator table
        for j in custom:
            Y[j] = expressions[j].evaluate(X)
            if stop_at_nonfinite and not np.all(np.isfinite(Y[j])):
                Y[j] = np.nan
        compiled = [j for j in range(len(expressions)) if j not in set(custom)]
        if compiled:
            Y[compiled] = evaluate_many([expressions[j] for j in compiled], X, n_jobs,
                                        stop_at_nonfinite)
        return Y
    programs = [e.program for e in expressions]
    ops = np.concatenate([o for o, _ in programs])
    args = np.concatenate([a for _, a in programs])
    node_start = np.concatenate(([0], np.cumsum([len(o) for o, _ in programs]))).astype(np.int64)
    constants = np.concatenate([e.constants for e in expressions] + [np.zeros(0)])
    const_start = np.concatenate(
        ([0], np.cumsum([e.n_constants for e in expressions]))).astype(np.int64)
    run_in_threads(len(expressions), n_jobs, lambda share: program.evaluate_batch(
        ops, args, node_start, constants, const_start, X, share, Y, stop_at_nonfinite,
        library.operator_table))
    operations.raise_if_interrupted()  # a Ctrl-C caught in an operator's callback
    return Y
