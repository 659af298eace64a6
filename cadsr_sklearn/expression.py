"""An expression: a tree of tokens in breadth-first order, with its constants.

The policy emits tokens breadth-first, so that is the canonical storage order here.
Because BFS children are consecutive (see :mod:`cadsr_sklearn.positions`), a
tree is evaluated by walking its BFS sequence backwards: every child comes after
its parent, so by the time a parent is reached both children are computed.

Constant tokens ``c`` are numbered in BFS order; ``constants[k]`` is the value
of the ``k``-th ``c`` met in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import sympy

from .library import Library
from .positions import first_children, tree_positions

__all__ = ["Expression", "Node", "is_complete", "sympy_complexity", "simplified_complexity"]


@dataclass
class Node:
    """A tree view of one node: its token id and its children, left to right."""

    token: int
    children: list["Node"] = field(default_factory=list)


def is_complete(tokens: Sequence[int], library: Library) -> bool:
    """Whether a BFS token sequence is exactly one complete tree."""
    arities = library.arities[np.asarray(tokens, dtype=np.int64)]
    if len(arities) == 0:
        return False
    open_slots = 1 + np.cumsum(arities - 1)
    return bool(open_slots[-1] == 0 and np.all(open_slots[:-1] > 0))


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
    """

    __slots__ = ("tokens", "library", "constants", "_first", "_key")

    def __init__(
        self, tokens: Sequence[int], library: Library, constants: Sequence[float] | None = None
    ) -> None:
        tokens = tuple(int(t) for t in tokens)
        if not is_complete(tokens, library):
            names = [library.names[t] for t in tokens]
            raise ValueError(f"Tokens {names} (BFS order) do not form one complete tree.")
        self.tokens = tokens
        self.library = library
        self._first = first_children(library.arities[list(tokens)])
        self._key = tokens
        n_const = self.n_constants
        if constants is None:
            constants = np.ones(n_const)
        constants = np.asarray(constants, dtype=np.float64).reshape(-1)
        if len(constants) != n_const:
            raise ValueError(f"Expected {n_const} constant values, got {len(constants)}.")
        self.constants = constants

    # ------------------------------------------------------------------ views
    @property
    def key(self) -> tuple[int, ...]:
        """Canonical key: the BFS token tuple (constants excluded)."""
        return self._key

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"Expression({self.infix()})"

    @property
    def n_constants(self) -> int:
        cid = self.library.const_id
        return 0 if cid is None else sum(1 for t in self.tokens if t == cid)

    @property
    def complexity(self) -> int:
        """The paper's BIC complexity ``k`` = number of nodes + number of constants."""
        return len(self.tokens) + self.n_constants

    def with_constants(self, constants: Sequence[float]) -> "Expression":
        """A copy holding other constant values."""
        return Expression(self.tokens, self.library, constants)

    def children(self, i: int) -> range:
        """BFS indices of the children of node ``i``."""
        return range(self._first[i], self._first[i] + self.library.arities[self.tokens[i]])

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
        out: list[int] = []
        stack = [0]
        while stack:
            i = stack.pop()
            out.append(self.tokens[i])
            stack.extend(reversed(self.children(i)))
        return out

    def _constant_order_prefix(self) -> list[int]:
        """BFS constant numbers in the order a preorder walk meets them."""
        cid = self.library.const_id
        bfs_number = {}
        for i, t in enumerate(self.tokens):
            if t == cid:
                bfs_number[i] = len(bfs_number)
        order = []
        stack = [0]
        while stack:
            i = stack.pop()
            if i in bfs_number:
                order.append(bfs_number[i])
            stack.extend(reversed(self.children(i)))
        return order

    def prefix_constants(self) -> np.ndarray:
        """Constant values in the order a preorder walk meets them."""
        return self.constants[self._constant_order_prefix()]

    @classmethod
    def from_tree(
        cls, root: Node, library: Library, constants: Sequence[float] | None = None
    ) -> "Expression":
        """Build from a tree; ``constants`` are in BFS order."""
        tokens, queue = [], [root]
        while queue:
            node = queue.pop(0)
            if len(node.children) != library.arities[node.token]:
                raise ValueError(f"Node {library.names[node.token]!r} has the wrong number of children.")
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
        prefix = [int(t) for t in prefix]
        pos = 0

        def build() -> Node:
            nonlocal pos
            if pos >= len(prefix):
                raise ValueError("Prefix sequence ends before the tree is complete.")
            node = Node(prefix[pos])
            pos += 1
            node.children = [build() for _ in range(library.arities[node.token])]
            return node

        root = build()
        if pos != len(prefix):
            raise ValueError("Prefix sequence has tokens after a complete tree.")
        expr = cls.from_tree(root, library)
        if constants is not None:
            constants = np.asarray(constants, dtype=np.float64)
            bfs = np.empty_like(constants)
            bfs[expr._constant_order_prefix()] = constants
            expr = expr.with_constants(bfs)
        return expr

    @classmethod
    def from_names(cls, names: Sequence[str], library: Library, constants=None, order="bfs"):
        """Build from token names, e.g. ``["add", "x0", "c"]`` (``order`` "bfs" or "prefix")."""
        ids = library.encode(names)
        if order == "prefix":
            return cls.from_prefix(ids, library, constants)
        return cls(ids, library, constants)

    # ------------------------------------------------------------- evaluation
    def evaluate(self, X: np.ndarray, constants: Sequence[float] | None = None) -> np.ndarray:
        """Output on the rows of ``X`` (n_samples, n_features), float64, shape (n_samples,).

        Non-finite values are returned as they arise (NaN for a log of a
        negative, inf for a division by zero); no warning is emitted.
        """
        X = np.asarray(X, dtype=np.float64)
        values = self.constants if constants is None else np.asarray(constants, dtype=np.float64)
        lib = self.library.tokens
        tokens = self.tokens
        first = self._first
        out: list = [None] * len(tokens)
        k = self.n_constants
        with np.errstate(all="ignore"):
            for i in range(len(tokens) - 1, -1, -1):
                tok = lib[tokens[i]]
                if tok.arity == 2:
                    out[i] = tok.function(out[first[i]], out[first[i] + 1])
                elif tok.arity == 1:
                    out[i] = tok.function(out[first[i]])
                elif tok.kind == "variable":
                    out[i] = X[:, tok.feature]
                elif tok.kind == "constant":
                    k -= 1  # walking backwards, so constants are met in reverse BFS order
                    out[i] = values[k]
                else:
                    out[i] = 1.0
            result = out[0]
        result = np.asarray(result, dtype=np.float64)
        if result.shape != (X.shape[0],):
            result = np.broadcast_to(result, (X.shape[0],)).copy()
        return result

    def is_valid_on(self, X: np.ndarray) -> bool:
        """Whether the output is finite on every row of ``X``."""
        return bool(np.all(np.isfinite(self.evaluate(X))))

    # ----------------------------------------------------------------- export
    def to_sympy(
        self,
        feature_names: Sequence[str] | None = None,
        constants: Sequence[float] | None = None,
        symbolic_constants: bool = False,
    ) -> sympy.Expr:
        """SymPy form, with variables named by ``feature_names`` (default ``x0…``).

        Constants become their fitted floats, or symbols ``c0, c1…`` (BFS
        numbering) when ``symbolic_constants`` is true.
        """
        lib = self.library
        names = feature_names if feature_names is not None else [f"x{i}" for i in range(lib.n_features)]
        if len(names) != lib.n_features:
            raise ValueError(f"Expected {lib.n_features} feature names, got {len(names)}.")
        symbols = [sympy.Symbol(str(n)) for n in names]
        values = self.constants if constants is None else np.asarray(constants, dtype=np.float64)
        out: list = [None] * len(self.tokens)
        k = self.n_constants
        for i in range(len(self.tokens) - 1, -1, -1):
            tok = lib[self.tokens[i]]
            if tok.arity:
                out[i] = tok.sympy_function(*(out[c] for c in self.children(i)))
            elif tok.kind == "variable":
                out[i] = symbols[tok.feature]
            elif tok.kind == "constant":
                k -= 1
                out[i] = sympy.Symbol(f"c{k}") if symbolic_constants else sympy.Float(values[k])
            else:
                out[i] = sympy.Integer(1)
        return out[0]

    def latex(self, feature_names: Sequence[str] | None = None, precision: int = 4) -> str:
        """LaTeX of the SymPy form, floats shown to ``precision`` significant digits."""
        expr = self.to_sympy(feature_names)
        expr = expr.xreplace({f: sympy.Float(f, precision) for f in expr.atoms(sympy.Float)})
        return sympy.latex(expr)

    def infix(self, feature_names: Sequence[str] | None = None, precision: int = 4) -> str:
        """Readable infix string built from each token's display form."""
        lib = self.library
        names = feature_names if feature_names is not None else [f"x{i}" for i in range(lib.n_features)]
        out: list = [None] * len(self.tokens)
        k = self.n_constants
        for i in range(len(self.tokens) - 1, -1, -1):
            tok = lib[self.tokens[i]]
            if tok.arity:
                out[i] = tok.display.format(*(out[c] for c in self.children(i)))
            elif tok.kind == "variable":
                out[i] = str(names[tok.feature])
            elif tok.kind == "constant":
                k -= 1
                out[i] = f"{self.constants[k]:.{precision}g}"
            else:
                out[i] = "1"
        return out[0]


def sympy_complexity(expr: sympy.Expr) -> int:
    """Number of nodes in SymPy's preorder traversal of ``expr``."""
    return sum(1 for _ in sympy.preorder_traversal(expr))


def simplified_complexity(expr: sympy.Expr) -> int:
    """SRBench's "simplified complexity": nodes of the simplified expression.

    ``sympy.simplify`` can take very long on large expressions; callers that
    need a bound should run this under a timeout (see ``cadsr_sklearn.benchmarks``).
    """
    return sympy_complexity(sympy.simplify(expr))
