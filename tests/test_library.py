"""The token library: operator semantics, SymPy counterparts, token order and ids."""

import math
import pickle
import warnings

import mpmath
import numpy as np
import pytest
import sympy
from compiled_ops import compiled

from cadsr_sklearn.expressions import operations
from cadsr_sklearn.expressions.expression import Expression
from cadsr_sklearn.expressions.library import (
    BINARY_OPERATORS,
    DEFAULT_BINARY,
    DEFAULT_UNARY,
    INVERSE_PAIRS,
    TRIGONOMETRIC,
    UNARY_OPERATORS,
    Library,
)

HUGE = 1e308
INF, NAN = math.inf, math.nan
EXTREMES = np.array([-HUGE, -1.0, -0.0, 0.0, 1e-308, 1.0, HUGE, INF, -INF, NAN])

# (operator, arguments, expected): plain mathematical float64 semantics, no protection.
BINARY_CASES = {
    "add": [((1.0, 2.0), 3.0), ((0.0, -0.0), 0.0), ((-3.0, 1.0), -2.0),
            ((HUGE, HUGE), INF), ((-HUGE, -HUGE), -INF), ((INF, -INF), NAN)],
    "sub": [((1.0, 2.0), -1.0), ((0.0, 0.0), 0.0), ((HUGE, -HUGE), INF), ((INF, INF), NAN)],
    "mul": [((-2.0, 3.0), -6.0), ((0.0, -5.0), -0.0), ((1e200, 1e200), INF),
            ((-1e200, 1e200), -INF), ((0.0, INF), NAN), ((1e-200, 1e-200), 0.0)],
    "div": [((6.0, -3.0), -2.0), ((1.0, 0.0), INF), ((-1.0, 0.0), -INF), ((0.0, 0.0), NAN),
            ((HUGE, 1e-10), INF), ((1.0, HUGE), 1e-308), ((INF, INF), NAN)],
    "pow": [((-2.0, 0.5), NAN), ((-2.0, 3.0), -8.0), ((-2.0, 2.0), 4.0), ((2.0, 0.5), math.sqrt(2)),
            ((-8.0, 1 / 3), NAN), ((0.0, -1.0), INF), ((0.0, 0.0), 1.0), ((4.0, -0.5), 0.5),
            ((HUGE, 2.0), INF), ((10.0, -400.0), 0.0), ((-HUGE, 3.0), -INF), ((NAN, 0.0), 1.0)],
}
UNARY_CASES = {
    "sin": [(0.0, 0.0), (math.pi / 2, 1.0), (-math.pi / 2, -1.0), (INF, NAN)],
    "cos": [(0.0, 1.0), (math.pi, -1.0), (-INF, NAN)],
    "tan": [(0.0, 0.0), (math.pi / 4, 1.0), (-math.pi / 4, -1.0), (INF, NAN)],
    "log": [(-1.0, NAN), (0.0, -INF), (-0.0, -INF), (1.0, 0.0), (math.e, 1.0),
            (HUGE, math.log(HUGE)), (INF, INF), (-INF, NAN)],
    "sqrt": [(-1.0, NAN), (0.0, 0.0), (4.0, 2.0), (HUGE, 1e154), (-HUGE, NAN), (INF, INF)],
    "exp": [(0.0, 1.0), (1.0, math.e), (710.0, INF), (HUGE, INF), (-HUGE, 0.0), (-INF, 0.0)],
    "square": [(-3.0, 9.0), (0.0, 0.0), (HUGE, INF), (-HUGE, INF), (1e-200, 0.0)],
    "cube": [(-2.0, -8.0), (0.0, 0.0), (3.0, 27.0), (HUGE, INF), (-HUGE, -INF)],
    "neg": [(2.0, -2.0), (0.0, -0.0), (-HUGE, HUGE), (INF, -INF)],
    "inv": [(2.0, 0.5), (-4.0, -0.25), (0.0, INF), (-0.0, -INF), (HUGE, 1.0 / HUGE), (INF, 0.0)],
    "tanh": [(0.0, 0.0), (HUGE, 1.0), (-HUGE, -1.0), (-INF, -1.0)],
    "abs": [(-3.0, 3.0), (0.0, 0.0), (-HUGE, HUGE), (-INF, INF)],
    "asin": [(0.0, 0.0), (-0.0, -0.0), (0.5, math.pi / 6), (1.0, math.pi / 2),
             (-1.0, -math.pi / 2), (1.0 + 2**-52, NAN), (-2.0, NAN), (INF, NAN)],
    "acos": [(1.0, 0.0), (0.0, math.pi / 2), (0.5, math.pi / 3), (-1.0, math.pi),
             (-1.0 - 2**-52, NAN), (2.0, NAN), (-INF, NAN)],
    "atan": [(0.0, 0.0), (-0.0, -0.0), (1.0, math.pi / 4), (-1.0, -math.pi / 4),
             (HUGE, math.pi / 2), (INF, math.pi / 2), (-INF, -math.pi / 2)],
    "sinh": [(0.0, 0.0), (-0.0, -0.0), (1.0, (math.e - 1 / math.e) / 2),
             (710.0, 1.1169973830808557e308), (711.0, INF), (-711.0, -INF), (-INF, -INF)],
    "cosh": [(0.0, 1.0), (1.0, (math.e + 1 / math.e) / 2), (-1.0, (math.e + 1 / math.e) / 2),
             (711.0, INF), (-711.0, INF), (-INF, INF)],
}
# Trigonometric values at large arguments are finite and bounded; checked separately.
BOUNDED_AT_HUGE = {"sin": 1.0, "cos": 1.0, "tanh": 1.0, "atan": math.pi / 2}


def _same(actual, expected):
    """Equal as floats, NaN equal to NaN, the sign of zero and infinity included."""
    actual = float(actual)
    if math.isnan(expected):
        return math.isnan(actual)
    if expected == 0:
        return actual == 0 and math.copysign(1, actual) == math.copysign(1, expected)
    return actual == pytest.approx(expected, rel=1e-12)


def test_every_operator_has_semantics_cases():
    assert set(BINARY_CASES) == set(BINARY_OPERATORS)
    assert set(UNARY_CASES) == set(UNARY_OPERATORS)


@pytest.mark.parametrize("name", sorted(BINARY_CASES))
def test_binary_operator_semantics(name):
    fn = compiled(BINARY_OPERATORS[name])
    for (a, b), expected in BINARY_CASES[name]:
        with np.errstate(all="ignore"):
            scalar = fn(np.float64(a), np.float64(b))
            array = fn(np.array([a, a]), np.array([b, b]))
        assert array.dtype == np.float64, "real results, never complex"
        assert _same(scalar, expected), f"{name}({a}, {b}) = {scalar}, expected {expected}"
        assert all(_same(v, expected) for v in array), f"{name}({a}, {b}) = {array}"


@pytest.mark.parametrize("name", sorted(UNARY_CASES))
def test_unary_operator_semantics(name):
    fn = compiled(UNARY_OPERATORS[name])
    for a, expected in UNARY_CASES[name]:
        with np.errstate(all="ignore"):
            scalar = fn(np.float64(a))
            array = fn(np.array([a, a]))
        assert array.dtype == np.float64
        assert _same(scalar, expected), f"{name}({a}) = {scalar}, expected {expected}"
        assert all(_same(v, expected) for v in array), f"{name}({a}) = {array}"


@pytest.mark.parametrize("name", sorted(BOUNDED_AT_HUGE))
def test_bounded_operators_stay_finite_at_huge_arguments(name):
    fn = compiled(UNARY_OPERATORS[name])
    out = fn(np.array([HUGE, -HUGE, 1e20, -1e20]))
    assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= BOUNDED_AT_HUGE[name])


def test_token_metadata():
    for name, tok in BINARY_OPERATORS.items():
        assert (tok.name, tok.arity, tok.kind, tok.feature) == (name, 2, "binary", None)
        assert tok.display.count("{}") == 2
    for name, tok in UNARY_OPERATORS.items():
        assert (tok.name, tok.arity, tok.kind, tok.feature) == (name, 1, "unary", None)
        assert tok.display.count("{}") == 1
    assert set(DEFAULT_BINARY) <= set(BINARY_OPERATORS)
    assert set(DEFAULT_UNARY) <= set(UNARY_OPERATORS)
    assert TRIGONOMETRIC <= set(UNARY_OPERATORS)
    assert {n for pair in INVERSE_PAIRS for n in pair} <= set(UNARY_OPERATORS)


# Points where both forms are defined; pow and log/sqrt also get negative bases.
GRID = np.array([-3.7, -2.0, -1.0, -0.3, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 7.25, 40.0])


@pytest.mark.parametrize("name", sorted(BINARY_OPERATORS))
def test_binary_sympy_function_agrees_with_numpy(name):
    tok = BINARY_OPERATORS[name]
    a, b = np.meshgrid(GRID, GRID)
    a, b = a.ravel(), b.ravel()
    x, y = sympy.symbols("x y")
    lam = sympy.lambdify((x, y), tok.sympy_function(x, y), "numpy")
    with np.errstate(all="ignore"):
        expected = compiled(tok)(a, b)
        via_lambdify = lam(a, b)
    finite = np.isfinite(expected)
    assert finite.sum() > len(a) // 2
    np.testing.assert_allclose(via_lambdify[finite], expected[finite], rtol=1e-12)
    for ai, bi, ei in zip(a[finite], b[finite], expected[finite]):
        value = tok.sympy_function(sympy.Float(ai), sympy.Float(bi))  # SymPy's own arithmetic
        assert complex(value) == pytest.approx(ei, rel=1e-12, abs=1e-300), (name, ai, bi)


@pytest.mark.parametrize("name", sorted(UNARY_OPERATORS))
def test_unary_sympy_function_agrees_with_numpy(name):
    tok = UNARY_OPERATORS[name]
    x = sympy.Symbol("x")
    lam = sympy.lambdify(x, tok.sympy_function(x), "numpy")
    with np.errstate(all="ignore"):
        expected = compiled(tok)(GRID)
        via_lambdify = lam(GRID)
    finite = np.isfinite(expected)
    assert finite.sum() >= 6
    np.testing.assert_allclose(via_lambdify[finite], expected[finite], rtol=1e-12, atol=1e-300)
    for ai, ei in zip(GRID[finite], expected[finite]):
        value = complex(tok.sympy_function(sympy.Float(ai)))
        assert value.imag == 0 and value.real == pytest.approx(ei, rel=1e-12, abs=1e-15), (name, ai)


def test_every_operator_evaluates_extremes_as_predict_does_without_a_warning():
    # Through Expression.evaluate and .jacobian, the path of predict, the constant fit
    # and the standard errors, outside any errstate: the compiled kernels warn of
    # nothing, but a NumPy step added on the way would, and so fail here.
    a, b = (grid.ravel() for grid in np.meshgrid(EXTREMES, EXTREMES))
    X = np.column_stack([a, b])
    library = Library(2, tuple(BINARY_OPERATORS), tuple(UNARY_OPERATORS))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, tok in {**BINARY_OPERATORS, **UNARY_OPERATORS}.items():
            # BFS: name(c·x0, x1) or name(c·x0), with c = 1
            names = [name, "mul", "x1", "c", "x0"] if tok.arity == 2 else [name, "mul", "c", "x0"]
            expression = Expression.from_names(names, library, [1.0])
            values = expression.evaluate(X)
            assert expression.jacobian(X).shape == (1, len(X))
            with np.errstate(all="ignore"):
                expected = compiled(tok)(a, b) if tok.arity == 2 else compiled(tok)(a)
            np.testing.assert_array_equal(values, expected, err_msg=name)


# asin, acos, atan, sinh and cosh: NumPy's values and the exact slopes (at 50 digits),
# with both edges of asin's and acos's domain, a hair inside and outside them.
NUMPY_FORMS = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
               "cosh": np.cosh}
EXACT_SLOPES = {"asin": lambda a: 1 / mpmath.sqrt(1 - a * a),
                "acos": lambda a: -1 / mpmath.sqrt(1 - a * a),
                "atan": lambda a: 1 / (1 + a * a), "sinh": mpmath.cosh, "cosh": mpmath.sinh}
EDGES = np.array([-40.0, -1.5, -1.0 - 2**-52, -1.0, -1.0 + 2**-52, -0.999, -0.5, -0.0, 0.3,
                  0.999, 1.0 - 2**-53, 1.0, 1.0 + 2**-52, 2.0, 40.0, INF, NAN])


def _exact_slope(name: str, a: float) -> float:
    """The slope of ``name`` at ``a``: ±inf at an edge of asin's or acos's domain, NaN past it."""
    if math.isnan(a):
        return NAN
    if name in ("asin", "acos") and abs(a) >= 1:
        return (INF if name == "asin" else -INF) if abs(a) == 1 else NAN
    if math.isinf(a):
        return {"atan": 0.0, "sinh": INF, "cosh": a}[name]
    with mpmath.workdps(50):
        return float(EXACT_SLOPES[name](mpmath.mpf(a)))


@pytest.mark.parametrize("name", sorted(EXACT_SLOPES))
def test_inverse_trigonometric_and_hyperbolic_values_and_slopes(name):
    op = UNARY_OPERATORS[name].opcode
    values = [operations.apply(op, a, 0.0) for a in EDGES]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(values, NUMPY_FORMS[name](EDGES), rtol=1e-15, equal_nan=True)
    for a, v in zip(EDGES, values):
        slope, exact = operations.d_left(op, a, 0.0, v), _exact_slope(name, a)
        assert (math.isnan(slope) if math.isnan(exact)
                else slope == pytest.approx(exact, rel=1e-13)), (name, a, slope, exact)
        if abs(a) < 0.999 or (name in ("atan", "sinh", "cosh") and math.isfinite(a)):
            h = 1e-6 * max(1.0, abs(a))  # the value's own slope, by central differences
            up, down = operations.apply(op, a + h, 0.0), operations.apply(op, a - h, 0.0)
            assert slope == pytest.approx((up - down) / (2 * h), rel=1e-6), (name, a)
    # the fit's path: d name(c·x0) / dc = slope(x0)·x0 at c = 1, not finite entries 0
    library = Library(1, ["mul"], [name])
    X = EDGES[np.isfinite(EDGES)][:, None]
    jacobian = Expression.from_names([name, "mul", "c", "x0"], library, [1.0]).jacobian(X)[0]
    expected = np.array([_exact_slope(name, a) * a for a in X[:, 0]])
    expected[~np.isfinite(expected)] = 0.0
    np.testing.assert_allclose(jacobian, expected, rtol=1e-13)


# ----------------------------------------------------------------------------- Library
def test_default_library_token_order_and_ids():
    lib = Library(3)
    assert lib.names == (
        "add", "sub", "mul", "div", "pow", "sin", "cos", "log", "sqrt", "exp",
        "x0", "x1", "x2", "1", "c",
    )
    assert len(lib) == 15 and lib.n_features == 3
    np.testing.assert_array_equal(lib.binary_ids, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(lib.unary_ids, [5, 6, 7, 8, 9])
    np.testing.assert_array_equal(lib.variable_ids, [10, 11, 12])
    np.testing.assert_array_equal(lib.terminal_ids, [10, 11, 12, 13, 14])
    np.testing.assert_array_equal(lib.arities, [2] * 5 + [1] * 5 + [0] * 5)
    assert lib.arities.dtype == np.int64
    assert (lib.one_id, lib.const_id) == (13, 14)
    np.testing.assert_array_equal(lib.trig_ids, [5, 6])
    np.testing.assert_array_equal(lib.constant_like_ids, [13, 14])
    # exp <-> log are both present; sqrt's inverse (square) is not.
    assert set(lib.inverse_pairs) == {(9, 7), (7, 9)}
    for i, tok in enumerate(lib.tokens):
        assert lib[i] is tok and lib.index(tok.name) == i
    assert [lib[i].feature for i in lib.variable_ids] == [0, 1, 2]
    assert {lib[i].kind for i in lib.variable_ids} == {"variable"}
    assert (lib[13].kind, lib[14].kind) == ("one", "constant")
    assert "x2" in repr(lib)


def test_library_follows_the_given_operator_order_and_options():
    lib = Library(2, ["mul", "add"], ["neg", "inv", "tan"], use_constants=False, use_one=False)
    assert lib.names == ("mul", "add", "neg", "inv", "tan", "x0", "x1")
    assert lib.const_id is None and lib.one_id is None
    assert lib.constant_like_ids.size == 0 and lib.constant_like_ids.dtype == np.int64
    np.testing.assert_array_equal(lib.trig_ids, [4])
    assert set(lib.inverse_pairs) == {(2, 2), (3, 3)}
    only_unary = Library(1, [], ["sin"], use_one=False)
    assert only_unary.names == ("sin", "x0", "c") and only_unary.binary_ids.size == 0
    assert Library(1, ["add"], [], use_constants=False).names == ("add", "x0", "1")


def test_an_inverse_trigonometric_function_is_never_sampled_on_its_own_inverse():
    lib = Library(1, ["add"], ["sin", "asin", "atan", "tanh", "sinh"])
    assert {(lib.names[p], lib.names[c]) for p, c in lib.inverse_pairs} == {
        ("sin", "asin"), ("asin", "sin")}  # tan, atan's inverse, is not in the library
    assert [lib.names[i] for i in lib.trig_ids] == ["sin"]  # asin(sin(x)) is no nested trig


def test_pysrs_names_of_the_binary_operators_are_accepted():
    lib = Library(1, ["+", "-", "*", "/", "^"], ["sin"])
    assert lib == Library(1, ["add", "sub", "mul", "div", "pow"], ["sin"])
    assert lib.names[:5] == ("add", "sub", "mul", "div", "pow")
    with pytest.raises(ValueError, match="lists 'add' more than once"):
        Library(1, ["+", "add"])


def test_encode_and_index():
    lib = Library(2)
    np.testing.assert_array_equal(lib.encode(["add", "x1", "c"]), [0, 11, 13])
    assert lib.encode(["x0"]).dtype == np.int64
    with pytest.raises(ValueError, match="'x7' is not in this library"):
        lib.index("x7")
    with pytest.raises(ValueError, match="'tanh' is not in this library"):
        lib.encode(["tanh"])


def test_unknown_operators_are_rejected_with_the_known_names():
    with pytest.raises(ValueError) as info:
        Library(2, binary_operators=["add", "plus"])
    message = str(info.value)
    assert "'plus'" in message and all(name in message for name in BINARY_OPERATORS)
    with pytest.raises(ValueError) as info:
        Library(2, unary_operators=["sech"])
    assert all(name in str(info.value) for name in UNARY_OPERATORS)
    with pytest.raises(ValueError, match="unary operator"):
        Library(2, binary_operators=["sin"])  # right name, wrong arity: say so


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(n_features=0), ValueError),
        (dict(n_features=-1), ValueError),
        (dict(n_features=1.5), ValueError),
        (dict(n_features=2, binary_operators=[], unary_operators=[]), ValueError),
        (dict(n_features=2, binary_operators=["add", "add"]), ValueError),
        (dict(n_features=2, unary_operators="sin"), ValueError),
    ],
)
def test_invalid_library_arguments(kwargs, error):
    with pytest.raises(error):
        Library(**kwargs)


def test_library_pickles_and_compares_by_configuration():
    lib = Library(3, ["add", "pow"], ["tanh", "cube", "inv"], use_one=False)
    clone = pickle.loads(pickle.dumps(lib))
    assert clone == lib and hash(clone) == hash(lib)
    assert clone.names == lib.names and clone.inverse_pairs == lib.inverse_pairs
    assert clone.tokens == lib.tokens  # same module-level functions after the round trip
    assert lib != Library(3, ["add", "pow"], ["tanh", "cube", "inv"])
    assert lib != Library(3, ["pow", "add"], ["tanh", "cube", "inv"], use_one=False)
    assert lib != "not a library"
    for tok in lib.tokens:
        assert pickle.loads(pickle.dumps(tok)) == tok
