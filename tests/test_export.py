"""Exports of a formula (NumPy, PyTorch, JAX, Python and C source) agree with predict."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
import torch
from budgets import TINY

from cadsr_sklearn import CADSRRegressor, Expression, Library
from cadsr_sklearn.reporting.export import to_c_source, to_numpy, to_python_source, to_torch
from cadsr_sklearn.expressions.library import BINARY_OPERATORS, UNARY_OPERATORS

LIBRARY = Library(2, tuple(BINARY_OPERATORS), tuple(UNARY_OPERATORS), use_constants=True,
                  use_one=True)
# BFS token names; together they hold every operator, the literal 1 and constants, and
# rows where the formula is NaN (log, sqrt, pow of negatives) or infinite (1/0)
FORMULAS = [
    (["add", "sin", "mul", "x0", "c", "x1"], [1.7]),
    (["div", "log", "sqrt", "x0", "x1"], []),
    (["pow", "x0", "c"], [1.37]),
    (["sub", "square", "cube", "x0", "x1"], []),
    (["mul", "neg", "inv", "x0", "x1"], []),
    (["add", "tanh", "abs", "tan", "exp", "x0", "x1"], []),
    # asin(0.5·x0) + acos(0.5·x1): NaN beyond |x| = 2; atan(x0)·(sinh(x1) + cosh(x0))
    (["add", "asin", "acos", "mul", "mul", "c", "x0", "c", "x1"], [0.5, 0.5]),
    (["mul", "atan", "add", "x0", "sinh", "cosh", "x1", "x0"], []),
    (["exp", "div", "c", "x0"], [-0.3]),
    (["add", "cos", "c", "1"], [0.1]),  # no variable: one value for every row
    (["mul", "pow", "sub", "c", "x0", "x1", "1"], [-2.5]),  # (-2.5)**x0 · (x1 - 1)
    # non-finite constants are written so that they read back (C: INFINITY, NAN)
    (["add", "mul", "c", "x0", "c"], [np.inf, -np.inf]),
    (["sub", "x1", "c"], [np.nan]),
]


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(64, 2))
    X[:4] = [[0.0, 1.0], [2.0, 0.0], [-1.0, -2.0], [1.0, 1.0]]
    return X


def _expressions():
    return [Expression.from_names(names, LIBRARY, constants) for names, constants in FORMULAS]


def _agree(got, expression, X):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expression.evaluate(X),
                               rtol=1e-10, atol=0, equal_nan=True)


@pytest.mark.parametrize("expression", _expressions(), ids=lambda e: " ".join(
    LIBRARY.names[t] for t in e.tokens))
def test_numpy_and_python_source_agree_with_the_interpreter(expression, X):
    with np.errstate(all="raise"):  # the export itself raises no floating-point warning
        _agree(to_numpy(expression)(X), expression, X)
    namespace: dict = {}
    exec(to_python_source(expression, ["a", "b"]), namespace)
    _agree(namespace["formula"](X), expression, X)


@pytest.mark.parametrize("expression", _expressions(), ids=lambda e: " ".join(
    LIBRARY.names[t] for t in e.tokens))
def test_torch_module_agrees_and_trains_its_constants(expression, X):
    module = to_torch(expression)
    y = module(torch.as_tensor(X))
    assert y.dtype == torch.float64 and y.shape == (len(X),)
    _agree(y.detach().numpy(), expression, X)
    y = module(torch.as_tensor(np.abs(X) + 0.5))  # away from the formulas' singular points
    if expression.n_fitted and torch.all(torch.isfinite(y)):
        y.sum().backward()
        assert module.constants.grad is not None
        assert torch.all(torch.isfinite(module.constants.grad))


def test_snapped_constants_stay_fixed_in_torch(X):
    expression = Expression(Expression.from_names(["pow", "x0", "c"], LIBRARY).tokens, LIBRARY,
                            [2.0], fixed=[True])
    module = to_torch(expression)
    assert len(module.constants) == 0 and module.fixed_constants.tolist() == [2.0]
    _agree(module(torch.as_tensor(X)).detach().numpy(), expression, X)


def test_jax_function_agrees_in_float64(X):
    jax = pytest.importorskip("jax")
    from cadsr_sklearn.reporting.export import to_jax

    jax.config.update("jax_enable_x64", True)
    for expression in _expressions():
        f = to_jax(expression)
        _agree(np.asarray(f(X)), expression, X)
        if expression.n_fitted:
            grad = jax.grad(lambda c: jax.numpy.nansum(f(X, c)))(expression.constants)
            assert grad.shape == expression.constants.shape


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_source_compiles_and_agrees(X, tmp_path):
    sources = [to_c_source(e, ["a", "b"], function_name=f"formula{k}")
               for k, e in enumerate(_expressions())]
    # every file defines the helpers as static: one translation unit each
    objects = []
    for k, source in enumerate(sources):
        (tmp_path / f"f{k}.c").write_text(source)
        subprocess.run(["cc", "-std=c99", "-O2", "-Wall", "-Werror", "-fPIC", "-c",
                        str(tmp_path / f"f{k}.c"), "-o", str(tmp_path / f"f{k}.o")], check=True)
        objects.append(str(tmp_path / f"f{k}.o"))
    library = tmp_path / "formulas.so"
    subprocess.run(["cc", "-shared", *objects, "-o", str(library), "-lm"], check=True)
    compiled = ctypes.CDLL(str(library))
    for k, expression in enumerate(_expressions()):
        function = getattr(compiled, f"formula{k}")
        function.restype = ctypes.c_double
        function.argtypes = [ctypes.POINTER(ctypes.c_double)]
        rows = np.ascontiguousarray(X)
        got = [function(row.ctypes.data_as(ctypes.POINTER(ctypes.c_double))) for row in rows]
        _agree(got, expression, X)


def test_the_estimator_exports_what_it_predicts(X):
    rng = np.random.default_rng(1)
    Xp = rng.uniform(0.5, 2.5, size=(150, 2))
    y = 1.5 * Xp[:, 0] * np.sin(Xp[:, 1])
    model = CADSRRegressor(**TINY).fit(Xp, y)
    for index in (None, -1):
        expected = model.predict(X, index=index)
        exported = model.export("numpy", index=index)(X)
        # predict reports a non-finite value as NaN; an export keeps the arithmetic's inf
        assert np.array_equal(np.isfinite(exported), np.isfinite(expected))
        np.testing.assert_allclose(np.where(np.isfinite(exported), exported, np.nan), expected,
                                   rtol=1e-10, equal_nan=True)
        module = model.export("torch", index=index)
        np.testing.assert_allclose(module(torch.as_tensor(X)).detach().numpy(), exported,
                                   rtol=1e-10, equal_nan=True)
    assert "def formula(X)" in model.export("python")
    assert "double formula(const double *x)" in model.export("c")
    with pytest.raises(ValueError, match="target must be one of"):
        model.export("matlab")


def test_feature_names_that_are_not_python_names_fall_back_to_column_numbers(X):
    expression = Expression.from_names(["add", "x0", "x1"], LIBRARY)
    source = to_python_source(expression, ["np", "speed"])
    assert "x0 = X[:, 0]" in source and "speed = X[:, 1]" in source
    namespace: dict = {}
    exec(source, namespace)
    _agree(namespace["formula"](X), expression, X)
