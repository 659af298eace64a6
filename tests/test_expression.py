"""Expressions: BFS/prefix/tree views, evaluation, SymPy export, complexity."""

import math
import pickle
import warnings
from collections import deque

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from compiled_ops import compiled

from cadsr_sklearn.benchmarks._symbolic import SimplifyTimeout, time_limit
from cadsr_sklearn.expressions.expression import (
    Expression,
    Node,
    is_complete,
    sympy_complexity,
)
from cadsr_sklearn.expressions.library import BINARY_OPERATORS, UNARY_OPERATORS, Library

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- strategies
@st.composite
def libraries(draw):
    """A random Library: 1-4 features, any non-empty operator set, optional 1 and c."""
    binary = draw(st.lists(st.sampled_from(sorted(BINARY_OPERATORS)), unique=True, max_size=5))
    unary = draw(st.lists(st.sampled_from(sorted(UNARY_OPERATORS)), unique=True,
                          min_size=0 if binary else 1, max_size=6))
    return Library(draw(st.integers(1, 4)), binary, unary,
                   use_constants=draw(st.booleans()), use_one=draw(st.booleans()))


constants_values = st.one_of(
    st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.0, -3.0]),
    st.floats(-5, 5, allow_nan=False, allow_infinity=False),
)


@st.composite
def trees(draw, library, max_nodes=32):
    """A random complete tree of at most ``max_nodes`` nodes as nested ``[token, children]``.

    Drawn in preorder; terminals come first among the choices so that Hypothesis
    shrinks towards small trees. Constant nodes carry a drawn value as a third item.
    """
    by_arity = {a: [i for i in range(len(library)) if library.arities[i] == a] for a in (0, 1, 2)}
    preorder = []
    open_slots = 1
    while open_slots:
        room = max_nodes - len(preorder) - 1
        arities = [a for a in (0, 1, 2) if by_arity[a] and open_slots - 1 + a <= room]
        token = draw(st.sampled_from([t for a in arities for t in by_arity[a]]))
        preorder.append(token)
        open_slots += library.arities[token] - 1
    it = iter(preorder)

    def build():
        token = next(it)
        node = [token, [build() for _ in range(library.arities[token])]]
        if token == library.const_id:
            node.append(draw(constants_values))
        return node

    return build()


@st.composite
def expressions(draw, max_nodes=32):
    """(library, tree, expression built from its BFS tokens and BFS-ordered constants)."""
    library = draw(libraries())
    tree = draw(trees(library, max_nodes))
    nodes = bfs_nodes(tree)
    expr = Expression([n[0] for n in nodes], library, [n[2] for n in nodes if len(n) == 3])
    return library, tree, expr


def bfs_nodes(tree):
    out, queue = [], deque([tree])
    while queue:
        node = queue.popleft()
        out.append(node)
        queue.extend(node[1])
    return out


def preorder_nodes(tree):
    return [tree] + [n for child in tree[1] for n in preorder_nodes(child)]


# Operators whose exact-zero result from non-zero inputs can only be an underflow.
UNDERFLOWING = {"mul", "div", "pow", "square", "cube", "exp"}


def reference_evaluate(tree, library, X, jitter=None):
    """Recursive evaluation straight from the token functions.

    Also returns, per row, the largest intermediate magnitude and whether the row
    is *well-scaled*: every intermediate finite, at most 1e100 in magnitude, and
    no underflow to zero. With ``jitter`` (a Generator) every operator's result is
    moved by a random relative 1e-13, to measure how much the expression amplifies
    round-off (SymPy's rewrites can cost more than an ulp: it computes |tan(x)| of a
    real x from sin, cos and cosh, with cancellation near the poles).
    """
    biggest = np.zeros(X.shape[0])
    clean = np.ones(X.shape[0], dtype=bool)

    def value(node):
        tok = library[node[0]]
        if tok.kind == "variable":
            v = X[:, tok.feature]
        elif tok.kind == "constant":
            v = np.float64(node[2])
        elif tok.kind == "one":
            v = np.float64(1.0)
        else:
            args = [value(child) for child in node[1]]
            v = compiled(tok)(*args)
            if tok.name in UNDERFLOWING:
                underflow = v == 0
                for a in args:
                    underflow = underflow & (a != 0)
                clean[:] &= ~underflow
            if jitter is not None:
                v = v * (1 + 1e-13 * jitter.uniform(-1, 1, np.shape(v)))
        finite = np.isfinite(v)
        clean[:] &= finite & (np.abs(v) <= 1e100)
        np.maximum(biggest, np.where(finite, np.abs(v), 0.0), out=biggest)
        return v

    with np.errstate(all="ignore"):
        out = np.broadcast_to(value(tree), X.shape[:1]).astype(np.float64)
    return out, biggest, clean


def round_off_sensitivity(tree, library, X, out, n=4):
    """Largest change of the output under tiny perturbations of the intermediates
    (inf where a perturbed run is not finite)."""
    rng = np.random.default_rng(0)
    spread = np.zeros(X.shape[0])
    with np.errstate(all="ignore"):
        for _ in range(n):
            moved, _, _ = reference_evaluate(tree, library, X, jitter=rng)
            change = np.where(np.isfinite(moved), np.abs(moved - out), np.inf)
            spread = np.maximum(spread, change)
    return spread


def data(library, seed, n=24):
    """Rows in [-3, 3], the first three made of the special points 0, 1, -1 and 2.5
    (different in every column, so that x0 - x1 is not zero on all of them)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, library.n_features))
    special = np.array([0.0, 1.0, -1.0, 2.5])
    for row in range(3):
        X[row] = np.roll(special, row)[np.arange(library.n_features) % 4]
    return X


def export_mismatches(expr, tree, library, X):
    """Rows where the lambdified SymPy export and evaluate() disagree, among the rows
    where the comparison means something (see the property test below)."""
    out = expr.evaluate(X)
    _, biggest, clean = reference_evaluate(tree, library, X)
    spread = round_off_sensitivity(tree, library, X, out)
    # Ill-conditioned rows (tan of 1e22, exp of a cancelled difference): 1e-13 noise
    # already moves the result by 1% or makes it non-finite.
    clean &= 100 * spread <= np.abs(out) + 1e-12
    if not clean.any():
        return clean, out, out
    via_sympy = _lambdified(expr, library, X)
    # SymPy reorders and merges float operations (x + c - x -> c, a/(b*0.5) -> 2.0*a/b),
    # which changes the round-off of some intermediates; the expression may amplify
    # that. So allow 1e-9 relative, plus 1e-9 of the largest intermediate
    # (cancellation), plus 100 times the measured effect of 1e-13 perturbations.
    tolerance = 1e-9 * np.abs(out) + 1e-9 * biggest + 100 * spread + 1e-300
    with np.errstate(invalid="ignore"):
        bad = clean & ~(np.abs(via_sympy - out) <= tolerance)
    return bad, out, via_sympy


def lib5():
    return Library(2, ["add", "sub", "mul", "div", "pow"], ["sin", "cos", "log", "sqrt", "exp"])


# ----------------------------------------------------------------------------- properties
@PROPERTY
@given(expressions())
def test_bfs_prefix_tree_round_trips(case):
    library, tree, expr = case
    bfs, pre = bfs_nodes(tree), preorder_nodes(tree)
    pre_tokens = [n[0] for n in pre]
    pre_constants = [n[2] for n in pre if len(n) == 3]
    bfs_constants = [n[2] for n in bfs if len(n) == 3]

    assert expr.tokens == tuple(n[0] for n in bfs) and expr.key == expr.tokens
    assert expr.prefix() == pre_tokens
    np.testing.assert_array_equal(expr.prefix_constants(), pre_constants)
    np.testing.assert_array_equal(expr.constants, bfs_constants)

    from_prefix = Expression.from_prefix(pre_tokens, library, pre_constants)
    assert from_prefix.tokens == expr.tokens
    np.testing.assert_array_equal(from_prefix.constants, expr.constants)

    rebuilt = Expression.from_tree(expr.to_tree(), library, expr.constants)
    assert rebuilt.tokens == expr.tokens

    def same_shape(node, mine):
        return node.token == mine[0] and len(node.children) == len(mine[1]) and all(
            same_shape(a, b) for a, b in zip(node.children, mine[1]))

    assert same_shape(expr.to_tree(), tree)

    # children() agrees with the tree, in BFS numbering.
    index = {id(n): i for i, n in enumerate(bfs)}
    for i, node in enumerate(bfs):
        assert list(expr.children(i)) == [index[id(c)] for c in node[1]]

    names = [library.names[t] for t in pre_tokens]
    by_names = Expression.from_names(names, library, pre_constants, order="prefix")
    assert by_names.tokens == expr.tokens
    bfs_names = [library.names[t] for t in expr.tokens]
    assert Expression.from_names(bfs_names, library).tokens == expr.tokens


@PROPERTY
@given(expressions(), st.integers(0, 2**16))
def test_evaluate_matches_a_recursive_reference_exactly(case, seed):
    library, tree, expr = case
    X = data(library, seed)
    expected, _, _ = reference_evaluate(tree, library, X)
    out = expr.evaluate(X)
    assert out.shape == (X.shape[0],) and out.dtype == np.float64
    np.testing.assert_array_equal(out, expected)  # bit for bit, NaN == NaN
    # Overriding the constants is the same as a copy holding them.
    other = np.linspace(-1.5, 2.5, expr.n_constants)
    np.testing.assert_array_equal(expr.evaluate(X, other), expr.with_constants(other).evaluate(X))


def _lambdified(expr, library, X):
    symbols = sympy.symbols([f"x{i}" for i in range(library.n_features)])
    # SymPy's assumption queries can take minutes on deep tan/tanh nests (a SymPy
    # pathology, seen about once in 5000 random trees); skip those examples.
    try:
        with time_limit(2.0):
            exported = expr.to_sympy()
    except SimplifyTimeout:
        reject()
    fn = sympy.lambdify(symbols, exported, "numpy")
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*X.T))
    if np.iscomplexobj(out):
        out = np.where(out.imag == 0, out.real, np.nan)
    return np.broadcast_to(out, X.shape[:1]).astype(np.float64)


@PROPERTY
@given(expressions(), st.integers(0, 2**16))
def test_evaluate_matches_lambdified_sympy_export(case, seed):
    """Where the evaluation is well-scaled, the exported formula computes the same.

    Rows where an infinity or NaN arose and was swallowed (``exp(-inf) = 0``,
    ``1**nan = 1``) are left to the example tests below: SymPy's extended-real
    algebra cannot follow float64 there in every case (it has no signed zero).
    Rows near the ends of the float64 range are left out too: SymPy distributes
    and merges powers (``((x*cos(x))**3)**3 -> x**9*cos(x)**9``), which moves
    where float64 overflows or underflows. So are ill-conditioned rows, where
    the last-bit differences of SymPy's reordered arithmetic grow to any size.
    """
    library, tree, expr = case
    X = data(library, seed)
    bad, out, via_sympy = export_mismatches(expr, tree, library, X)
    assert not bad.any(), (
        f"{expr.to_sympy()} at X={X[bad][:3].tolist()}: evaluate {out[bad][:3]}, "
        f"sympy {via_sympy[bad][:3]}"
    )


EXTREMES = np.array([0.0, -0.0, 1.0, -1.0, 1e-308, -1e-308, 1e308, -1e308, np.inf, -np.inf, np.nan])


@PROPERTY
@given(expressions())
def test_evaluation_never_raises_or_warns(case):
    library, _, expr = case
    X = np.stack([np.roll(EXTREMES, k) for k in range(library.n_features)], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = expr.evaluate(X)
        expr.evaluate(X[:0])
        expr.evaluate(X, np.full(expr.n_constants, 1e308))
        expr.is_valid_on(X)
    assert out.shape == (len(EXTREMES),)


@PROPERTY
@given(expressions())
def test_structure_facts(case):
    library, tree, expr = case
    nodes = bfs_nodes(tree)
    n_c = sum(1 for n in nodes if len(n) == 3)
    assert expr.n_constants == n_c
    assert expr.complexity == len(nodes) + n_c  # the paper's k: nodes + constants
    assert len(expr) == len(nodes)
    assert is_complete(expr.tokens, library)
    assert is_complete(np.array(expr.tokens), library)
    for cut in range(len(expr.tokens)):
        assert not is_complete(expr.tokens[:cut], library)
    assert not is_complete(expr.tokens + expr.tokens[-1:], library)
    twin = Expression(list(expr.tokens), library, expr.constants + 1.0)
    assert twin.key == expr.key and hash(twin.key) == hash(expr.key)
    clone = pickle.loads(pickle.dumps(expr))
    assert clone.tokens == expr.tokens and clone.library == library
    np.testing.assert_array_equal(clone.constants, expr.constants)
    depth, horizontal = expr.positions()
    assert depth[0] == 1 and horizontal[0] == 0.5 and len(depth) == len(expr)


# ----------------------------------------------------------------------------- examples
def test_paper_example():
    lib = Library(3)
    expr = Expression.from_names(["add", "pow", "sin", "x1", "c", "x2"], lib, [2.0])
    assert expr.prefix() == lib.encode(["add", "pow", "x1", "c", "sin", "x2"]).tolist()
    assert (len(expr), expr.n_constants, expr.complexity) == (6, 1, 7)
    depth, horizontal = expr.positions()
    assert depth.tolist() == [1, 2, 2, 3, 3, 3]
    assert horizontal.tolist() == [1 / 2, 1 / 4, 3 / 4, 1 / 8, 3 / 8, 5 / 8]
    X = np.array([[9.0, 2.0, 0.5], [9.0, -3.0, 0.0]])
    np.testing.assert_allclose(expr.evaluate(X), [4 + math.sin(0.5), 9.0])
    x1, x2 = sympy.symbols("x1 x2")
    assert expr.to_sympy() == x1**2.0 + sympy.sin(x2)
    assert expr.to_sympy(symbolic_constants=True) == x1 ** sympy.Symbol("c0") + sympy.sin(x2)
    a, b = sympy.symbols("mass speed")
    assert expr.to_sympy(["t", "mass", "speed"]) == a**2.0 + sympy.sin(b)
    assert expr.to_sympy(constants=[3.0]) == x1**3.0 + sympy.sin(x2)
    assert expr.latex(["t", "m", "v"]) == r"m^{2} + \sin{\left(v \right)}"  # no m^{2.0}
    assert expr.infix() == "((x1 ^ 2) + sin(x2))"
    assert repr(expr) == "Expression(x1**2.0 + sin(x2))"
    shifted = Expression.from_names(["sub", "x0", "c"], expr.library, [-0.3], order="prefix")
    assert shifted.infix() == "(x0 - (-0.3))"  # not "x0 - -0.3"


def test_constants_are_numbered_in_bfs_order():
    lib = lib5()
    # BFS: sub, div, c#0, c#1, x0  ->  (c0 / x0) - c1 in preorder terms
    expr = Expression.from_names(["sub", "div", "c", "c", "x0"], lib, [10.0, 4.0])
    np.testing.assert_allclose(expr.evaluate(np.array([[2.0, 0.0]])), [4.0 / 2.0 - 10.0])
    np.testing.assert_array_equal(expr.prefix_constants(), [4.0, 10.0])
    c0, c1, x0 = sympy.symbols("c0 c1 x0")
    assert sympy.simplify(expr.to_sympy(symbolic_constants=True) - (c1 / x0 - c0)) == 0
    same = Expression.from_prefix(expr.prefix(), lib, [4.0, 10.0])
    np.testing.assert_array_equal(same.constants, [10.0, 4.0])


def test_latex_rounds_floats():
    lib = lib5()
    expr = Expression.from_names(["mul", "c", "x0"], lib, [3.14159265])
    assert expr.latex() == "3.142 x_{0}"
    assert expr.latex(precision=2) == "3.1 x_{0}"
    # names that are not identifiers are one upright unit, LaTeX specials escaped
    from cadsr_sklearn.expressions.notation import rounded_latex

    a, b, x1 = sympy.Symbol("x 1"), sympy.Symbol("50%&"), sympy.Symbol("x1")
    assert rounded_latex(2 * a * b + x1) == r"2 \text{50\%\&} \text{x 1} + x_{1}"
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="precision must be a positive integer"):
            expr.latex(precision=bad)


def test_evaluate_shapes_and_copies():
    lib = lib5()
    X = np.arange(8.0).reshape(4, 2)
    lone = Expression.from_names(["x1"], lib)
    out = lone.evaluate(X)
    np.testing.assert_array_equal(out, X[:, 1])
    out[0] = -1.0
    assert X[0, 1] == 1.0, "evaluate must not return a view of X"
    np.testing.assert_array_equal(Expression.from_names(["c"], lib, [2.5]).evaluate(X), [2.5] * 4)
    sin1 = Expression.from_names(["sin", "1"], lib)
    np.testing.assert_array_equal(sin1.evaluate(X), [math.sin(1)] * 4)
    assert Expression.from_names(["exp", "x0"], lib).evaluate(X[:0]).shape == (0,)
    np.testing.assert_array_equal(
        Expression.from_names(["add", "x0", "x1"], lib).evaluate(X.astype(np.float32)), X.sum(1))


def test_evaluate_plain_semantics():
    lib = lib5()
    X = np.array([[-1.0, 0.0], [4.0, 2.0]])
    cases = {
        ("log", "x0"): [math.nan, math.log(4.0)],
        ("sqrt", "x0"): [math.nan, 2.0],
        ("div", "x0", "x1"): [-math.inf, 2.0],
        ("pow", "x0", "c"): [math.nan, 2.0],  # c = 0.5: negative base, non-integer power
    }
    for names, expected in cases.items():
        expr = Expression.from_names(list(names), lib, [0.5] if "c" in names else None)
        np.testing.assert_array_equal(expr.evaluate(X), expected)
    assert not Expression.from_names(["log", "x0"], lib).is_valid_on(X)
    assert Expression.from_names(["exp", "x0"], lib).is_valid_on(X)


def test_sympy_export_folds_variable_free_subtrees_as_evaluated():
    lib = Library(1, ["add", "sub", "mul", "div", "pow"], ["exp", "neg", "inv", "sqrt", "log"])
    x0 = sympy.Symbol("x0")
    X = np.array([[0.5], [2.0]])

    def check(names, constants, expected):
        expr = Expression.from_names(names, lib, constants, order="prefix")
        assert expr.to_sympy() == expected
        fn = sympy.lambdify([x0], expected, "numpy")
        with np.errstate(all="ignore"):
            # SymPy prints a Float with 15 significant digits, not the 17 a round trip needs.
            np.testing.assert_allclose(
                np.broadcast_to(fn(X[:, 0]), (2,)), expr.evaluate(X), rtol=1e-14)

    # exp(-1/(c - c)) is exp(-inf) = 0 in float64; SymPy alone says exp(zoo) = nan.
    check(["mul", "exp", "neg", "inv", "sub", "c", "c", "x0"], [2.5, 2.5], sympy.Integer(0))
    # exp(exp(10)) overflows to inf; SymPy alone would keep a finite 1e9565.
    check(["mul", "inv", "exp", "exp", "c", "x0"], [10.0], sympy.Integer(0))
    check(["add", "x0", "exp", "exp", "c"], [10.0], x0 + sympy.oo)
    # sqrt(-2.0) is NaN, not 1.414 I.
    check(["add", "x0", "sqrt", "c"], [-2.0], sympy.nan)
    # Subtrees of the literal 1 only stay exact.
    check(["add", "x0", "div", "1", "add", "1", "add", "1", "1"], None, x0 + sympy.Rational(1, 3))
    check(["mul", "x0", "add", "1", "1"], None, 2 * x0)
    check(["mul", "x0", "sqrt", "add", "1", "1"], None, sympy.Float(math.sqrt(2)) * x0)
    # Symbolic constants are left alone.
    expr = Expression.from_names(["add", "x0", "log", "c"], lib, [-1.0], order="prefix")
    assert expr.to_sympy(symbolic_constants=True) == x0 + sympy.log(sympy.Symbol("c0"))


@pytest.mark.parametrize(
    "names",
    [
        ["div", "x0", "sub", "x1", "x1"],  # x0/0 = x0*inf: SymPy alone says zoo*x0
        ["tanh", "div", "x0", "sub", "x1", "x1"],  # = sign(x0), NaN at 0
        ["exp", "log", "sub", "x1", "x1"],  # exp(log(0)) = exp(-inf) = 0
        ["pow", "x0", "cos", "inv", "sub", "x1", "x1"],  # x0**cos(inf) = x0**nan: 1 at x0 = 1
        ["pow", "cos", "inv", "sub", "x1", "x1", "x0"],  # nan**x0: 1 at x0 = 0
        ["pow", "sub", "x1", "x1", "neg", "1"],  # 0**-1 = inf
        ["mul", "x0", "pow", "sub", "x0", "x0", "x1"],  # 0**x1 stays symbolic
    ],
)
def test_sympy_export_of_cancelled_zeros_follows_float64(names):
    lib = Library(2, ["sub", "mul", "div", "pow"], ["exp", "log", "cos", "tanh", "inv", "neg"])
    expr = Expression.from_names(names, lib, order="prefix")
    X = np.array([[x0, x1] for x0 in (-2.0, -0.5, 0.0, 0.5, 1.0, 2.0) for x1 in (-1.5, 0.0, 3.0)])
    symbols = sympy.symbols("x0 x1")
    fn = sympy.lambdify(symbols, expr.to_sympy(), "numpy")
    with np.errstate(all="ignore"):
        via_sympy = np.broadcast_to(fn(*X.T), X.shape[:1])
    np.testing.assert_array_equal(via_sympy, expr.evaluate(X))


def test_towers_of_ones_do_not_hang_the_export():
    # 2^(2^(2^(2^2))) is exact 2^65536 to SymPy; folded, it is simply inf.
    lib = Library(1, ["add", "pow"], [])
    two = ["add", "1", "1"]
    names = ["pow"] + two + ["pow"] + two + ["pow"] + two + ["pow"] + two + two
    expr = Expression.from_names(["add", "x0"] + names, lib, order="prefix")
    assert expr.to_sympy() == sympy.Symbol("x0") + sympy.oo


def test_to_sympy_feature_name_count_is_checked():
    with pytest.raises(ValueError, match="Expected 2 feature names"):
        Expression.from_names(["x0"], lib5()).to_sympy(["a"])


@pytest.mark.parametrize(
    "tokens, message",
    [
        ([], "the sequence is empty"),
        ([0], "2 child slot"),
        ([0, 10], "1 child slot"),
        ([5], "1 child slot"),
        ([10, 11], "complete after 1 token"),
        ([0, 10, 10, 11], "complete after 3 token"),
        ([0, 10, 99], "token id 99 at position 2"),
        ([-1], "token id -1"),
    ],
)
def test_malformed_bfs_sequences_are_rejected(tokens, message):
    lib = lib5()  # ids: 0-4 binary, 5-9 unary, 10-11 x0 x1, 12 '1', 13 c
    with pytest.raises(ValueError, match=message) as info:
        Expression(tokens, lib)
    assert "do not form one complete tree" in str(info.value)
    assert not is_complete(tokens, lib)


def test_other_malformed_inputs():
    lib = lib5()
    with pytest.raises(ValueError, match="integers"):
        Expression([10.5], lib)
    with pytest.raises(ValueError, match="Expected 2 constant values, got 1"):
        Expression.from_names(["add", "c", "c"], lib, [1.0])
    with pytest.raises(ValueError, match="Expected 1 constant values, got 2"):
        Expression.from_names(["c"], lib).with_constants([1.0, 2.0])
    with pytest.raises(ValueError, match="Expected 1 constant values"):
        Expression.from_names(["c"], lib).evaluate(np.ones((2, 2)), [1.0, 2.0])
    with pytest.raises(ValueError, match="ends before the tree is complete"):
        Expression.from_prefix(lib.encode(["add", "x0"]), lib)
    with pytest.raises(ValueError, match="after a complete tree"):
        Expression.from_prefix(lib.encode(["sin", "x0", "x1"]), lib)
    with pytest.raises(ValueError, match="empty"):
        Expression.from_prefix([], lib)
    with pytest.raises(ValueError, match="Expected 1 constant values"):
        Expression.from_names(["c"], lib, [1.0, 2.0], order="prefix")
    with pytest.raises(ValueError, match="order"):
        Expression.from_names(["c"], lib, order="postfix")
    with pytest.raises(ValueError, match="children"):
        Expression.from_tree(Node(lib.index("add"), [Node(lib.index("x0"))]), lib)
    with pytest.raises(ValueError, match="shape"):
        Expression.from_names(["x0"], lib).evaluate(np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        Expression.from_names(["x0"], lib).evaluate(np.ones((3, 3)))
    assert not is_complete([0.5], lib)


def test_token_ids_from_numpy_and_torch():
    import torch

    lib = lib5()
    ids = lib.encode(["add", "x0", "c"])
    for tokens in (ids, ids.astype(np.int32), torch.as_tensor(ids), list(ids)):
        expr = Expression(tokens, lib)
        assert expr.tokens == (0, 10, 13) and all(type(t) is int for t in expr.tokens)


def test_with_constants_keeps_the_structure_and_copies_nothing_else():
    lib = lib5()
    expr = Expression.from_names(["mul", "c", "x0"], lib, [2.0])
    X = np.array([[3.0, 0.0]])
    expr.evaluate(X)
    other = expr.with_constants([5.0])
    assert other.tokens is expr.tokens and other.key == expr.key
    np.testing.assert_array_equal(other.evaluate(X), [15.0])
    np.testing.assert_array_equal(expr.evaluate(X), [6.0])


def test_complexity_helpers():
    x, y = sympy.symbols("x y")
    assert sympy_complexity(x + sympy.sin(y)) == 4
    assert sympy_complexity(x + x - x) == 1  # SymPy folds it on construction
