"""Custom operators: registration checks, fitting through them, pickles that carry them."""

import copy
import pickle
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.special
import sympy
from budgets import TINY
from sklearn.base import clone

from cadsr_sklearn import CADSRRegressor, Expression, Library, Operator, register_operator
from cadsr_sklearn.expressions import program
from cadsr_sklearn.expressions import custom_operators
from cadsr_sklearn.scoring import levenberg_marquardt
from cadsr_sklearn.scoring.constant_fitter import ConstantFitter
from cadsr_sklearn.expressions.custom_operators import unregister_operator


def _gauss(a):
    return np.exp(-a * a)


def _gauss_derivative(a):
    return -2 * a * np.exp(-a * a)


@pytest.fixture
def gauss():
    operator = register_operator("gauss", _gauss, _gauss_derivative,
                                 lambda a: sympy.exp(-a**2))
    yield operator
    unregister_operator("gauss")


@pytest.fixture
def hypot():
    operator = register_operator(
        "hypot", lambda a, b: np.sqrt(a * a + b * b),
        (lambda a, b: a / np.sqrt(a * a + b * b), lambda a, b: b / np.sqrt(a * a + b * b)),
        lambda a, b: sympy.sqrt(a**2 + b**2), display="hypot({}, {})")
    yield operator
    unregister_operator("hypot")


@pytest.mark.parametrize("kwargs, message", [
    (dict(name="sin"), "built-in operator"),
    (dict(name="x1"), "input variable"),
    (dict(name="my op"), "identifier"),
    (dict(function=lambda a: np.sum(a)), "elementwise"),
    (dict(function=lambda a: np.log(-np.abs(a) - 1), derivative=lambda a: a), "finite at only"),
    (dict(derivative=lambda a: 2 * a * np.exp(-a * a)), "disagrees with finite differences"),
    (dict(sympy_function=lambda a: sympy.exp(-a)), "does not compute what"),
    (dict(derivative=(lambda a: a,)), "a pair of partial derivatives"),
])
def test_registration_checks_the_operator(kwargs, message):
    arguments = dict(name="gauss2", function=_gauss, derivative=_gauss_derivative,
                     sympy_function=lambda a: sympy.exp(-a**2))
    with pytest.raises(ValueError, match=message):
        register_operator(**{**arguments, **kwargs})


def test_unknown_names_point_to_registration():
    with pytest.raises(ValueError, match="register_operator"):
        CADSRRegressor(unary_operators=("gaussian",)).fit(np.ones((5, 1)), np.arange(5.0))


def test_evaluation_and_jacobian_go_through_the_function_and_derivative(gauss, hypot):
    library = Library(2, ("add", "mul", "hypot"), ("gauss", "sin"))
    # hypot(gauss(c·x0), sin(x1)) + c, BFS
    expression = Expression.from_names(["add", "hypot", "c", "gauss", "sin", "mul", "x1", "c",
                                        "x0"], library, [0.5, 1.3])
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(50, 2))
    truth = np.sqrt(np.exp(-(1.3 * X[:, 0]) ** 2) ** 2 + np.sin(X[:, 1]) ** 2) + 0.5
    np.testing.assert_allclose(expression.evaluate(X), truth, rtol=1e-12)
    J = expression.jacobian(X)
    for k in range(2):
        h = np.zeros(2)
        h[k] = 1e-6
        numeric = (expression.evaluate(X, expression.constants + h)
                   - expression.evaluate(X, expression.constants - h)) / 2e-6
        np.testing.assert_allclose(J[k], numeric, rtol=1e-6, atol=1e-8)
    assert str(expression.to_sympy()) == "sqrt(sin(x1)**2 + exp(-3.38*x0**2)) + 0.5"


def test_constants_are_fitted_through_a_custom_operator(gauss):
    library = Library(1, ("mul",), ("gauss",))
    expression = Expression.from_names(["mul", "c", "gauss", "mul", "c", "x0"], library)
    X = np.linspace(-2, 2, 80)[:, None]
    y = 2.5 * np.exp(-(1.3 * X[:, 0]) ** 2)
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
    (fitted,) = fitter.fit([expression])
    np.testing.assert_allclose(np.abs(fitted.constants), [2.5, 1.3], rtol=1e-8)


def test_a_search_finds_a_law_written_with_a_custom_operator(gauss):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(150, 1))
    y = 2.5 * np.exp(-(1.3 * X[:, 0]) ** 2)
    model = CADSRRegressor(**{**TINY, "n_epochs": 20, "batch_size": 100},
                           binary_operators=("add", "mul"), unary_operators=("gauss",)).fit(X, y)
    assert model.stop_reason_ == "tol"
    assert model.score(X, y) == pytest.approx(1.0)
    assert "exp" in str(model.expression_)  # the SymPy form of gauss
    np.testing.assert_allclose(model.export("numpy")(X), model.predict(X), rtol=1e-12)
    with pytest.raises(ValueError, match="export\\('numpy'\\)"):
        model.export("c")


def test_an_operator_object_works_without_registration_and_the_pickle_carries_it(tmp_path):
    operator = Operator("bump", lambda a: 1 / (1 + a * a), lambda a: -2 * a / (1 + a * a) ** 2,
                        lambda a: 1 / (1 + a**2))
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(100, 1))
    y = 3.0 / (1 + X[:, 0] ** 2)
    model = CADSRRegressor(**TINY, binary_operators=("mul",), unary_operators=(operator,))
    model.fit(X, y)
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(model))
    np.save(tmp_path / "X.npy", X)
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        model = pickle.loads(open({str(path)!r}, "rb").read())
        print(repr(model.predict(np.load({str(tmp_path / "X.npy")!r})).tolist()))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert eval(done.stdout) == model.predict(X).tolist()


def _erf(a):
    return scipy.special.erf(a)  # numba cannot compile SciPy's ufuncs: called back


def _erf_derivative(a):
    return 2 / np.sqrt(np.pi) * np.exp(-a * a)


@pytest.fixture
def erf():
    operator = register_operator("erf", _erf, _erf_derivative, sympy.erf)
    yield operator
    unregister_operator("erf")


def test_a_compiled_operator_runs_in_the_kernels_without_compiling_them_again(gauss, hypot):
    assert gauss.compiled and hypot.compiled
    library = Library(1, ("mul", "hypot"), ("gauss",))
    assert np.all(library.operator_table[:, :2] != 0) and library.operator_table[1, 2] == 0
    expression = Expression.from_names(["mul", "c", "hypot", "gauss", "c", "mul", "c", "x0"],
                                       library, [2.0, 0.3, 1.3])
    X = np.linspace(-2, 2, 40)[:, None]
    y = expression.evaluate(X)
    np.testing.assert_allclose(y, 2.0 * np.hypot(np.exp(-(1.3 * X[:, 0]) ** 2), 0.3),
                               rtol=1e-14)
    built_in = Expression.from_names(["mul", "c", "x0"], library)
    ConstantFitter(X, y, const_fit_samples=1000, random_state=1, n_jobs=1).fit([built_in])
    compiled = len(levenberg_marquardt.fit_batch.signatures)
    (fitted,) = ConstantFitter(X, y, const_fit_samples=1000, random_state=1, n_jobs=1).fit(
        [expression.with_constants([1.0, 1.0, 1.0])])
    np.testing.assert_allclose(np.abs(fitted.constants), [2.0, 0.3, 1.3], rtol=1e-8)
    # one compiled kernel serves every operator table: none was compiled for this one
    assert len(levenberg_marquardt.fit_batch.signatures) == compiled


def test_a_program_given_another_table_gives_nan_not_a_crash(gauss):
    library = Library(1, ("mul",), ("gauss",))
    ops, args = Expression.from_names(["gauss", "x0"], library).program
    X = np.ones((3, 1))
    assert np.all(np.isnan(program.evaluate(ops, args, X, np.zeros(0))))


def test_an_operator_numba_cannot_compile_is_called_back_by_the_same_kernels(gauss, erf):
    assert not erf.compiled
    library = Library(1, ("mul", "add"), ("gauss", "erf"))
    assert np.all(library.operator_table[:, :2] != 0)  # both in the table: one engine
    # erf(c·x0) + gauss(x0): erf called back, gauss by its compiled function
    expression = Expression.from_names(["add", "erf", "gauss", "mul", "x0", "c", "x0"],
                                       library, [1.0])
    X = np.linspace(-2, 2, 60)[:, None]
    y = scipy.special.erf(1.7 * X[:, 0]) + np.exp(-X[:, 0] ** 2)
    fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=2)
    (fitted,) = fitter.fit([expression])
    np.testing.assert_allclose(fitted.constants, [1.7], rtol=1e-8)
    np.testing.assert_allclose(fitted.evaluate(X), y, rtol=1e-12)
    J = fitted.jacobian(X)  # ∂/∂c = x0·erf'(c·x0), through the derivative's callback
    np.testing.assert_allclose(J[0], X[:, 0] * _erf_derivative(1.7 * X[:, 0]), rtol=1e-12)


class _Uncompilable:
    """A callable object numba cannot compile, computing what a function it can computes."""

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        return self.function(*args)


def test_whether_numba_compiles_an_operator_changes_no_fitted_constant():
    # the same operator, compiled and called back, through one fitter: the same fits
    def fitted(operator):
        library = Library(1, ("mul", "add"), (operator,))
        formulas = [Expression.from_names(names, library) for names in (
            ["mul", "c", "bump", "mul", "c", "x0"],
            ["add", "bump", "c", "mul", "c", "x0"],
            ["bump", "add", "mul", "c", "x0", "c"],
        )]
        X = np.linspace(-2, 2, 50)[:, None]
        y = 1.5 / (1 + (0.8 * X[:, 0] - 0.3) ** 2) + 0.05 * np.sin(5 * X[:, 0])
        fitter = ConstantFitter(X, y, const_fit_samples=1000, random_state=0, n_jobs=1)
        return np.concatenate([e.constants for e in fitter.fit(formulas)])

    def bump(a):
        return 1 / (1 + a * a)

    def bump_derivative(a):
        return -2 * a / (1 + a * a) ** 2

    compiled = Operator("bump", bump, bump_derivative, lambda a: 1 / (1 + a**2))
    called_back = Operator("bump", _Uncompilable(bump), _Uncompilable(bump_derivative),
                           lambda a: 1 / (1 + a**2))
    assert compiled.compiled and not called_back.compiled
    np.testing.assert_allclose(fitted(called_back), fitted(compiled), rtol=1e-10)


def test_an_operator_that_raises_while_called_back_gives_nan_not_a_crash():
    def picky(a):
        if np.any(a > 5):
            raise ValueError("out of range")
        return np.exp(-a * a)

    operator = Operator("picky", _Uncompilable(picky), _Uncompilable(_gauss_derivative),
                        lambda a: sympy.exp(-a**2))
    library = Library(1, ("mul",), (operator,))
    expression = Expression.from_names(["picky", "x0"], library)
    assert np.all(np.isnan(expression.evaluate(np.array([[1.0], [6.0]]))))
    np.testing.assert_array_equal(expression.evaluate(np.array([[1.0]])), np.exp(-1.0))


def test_numerical_faults_of_a_custom_operator_raise_no_warning():
    recip = Operator("recip", lambda a: 1 / a, lambda a: -1 / (a * a), lambda a: 1 / a)
    library = Library(1, ("add",), (recip,))
    assert recip.compiled
    expression = Expression.from_names(["recip", "add", "x0", "c"], library)
    X = np.linspace(-1, 1, 21)[:, None]  # x0 + 1 = 0 at x0 = -1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(expression.evaluate(X)[0])
        ConstantFitter(X, 1 / (X[:, 0] + 3), const_fit_samples=1000, random_state=0,
                       n_jobs=1).fit([expression])


def test_a_clone_keeps_the_compiled_operator():
    bump = Operator("bump", lambda a: 1 / (1 + a * a), lambda a: -2 * a / (1 + a * a) ** 2,
                    lambda a: 1 / (1 + a**2))
    model = CADSRRegressor(unary_operators=(bump,))
    assert clone(model).get_params()["unary_operators"][0] is bump
    assert copy.deepcopy(bump) is bump


def test_threads_asking_a_fresh_operator_for_its_kernels_compile_it_once(monkeypatch):
    # Libraries built in several threads from one operator: from Python 3.12 a
    # functools.cached_property takes no lock, so each thread would compile it (3.11's did)
    builds = []

    def slow_build(operator):
        builds.append(operator)
        time.sleep(0.2)  # every thread asks while the first build runs
        return object()

    monkeypatch.setattr(custom_operators, "_kernels", slow_build)
    bump = Operator("bump", lambda a: 1 / (1 + a * a), lambda a: -2 * a / (1 + a * a) ** 2,
                    lambda a: 1 / (1 + a**2))
    threads = 8
    together = threading.Barrier(threads)

    def kernels(_):
        together.wait()
        return bump.kernels

    with ThreadPoolExecutor(threads) as pool:
        got = list(pool.map(kernels, range(threads)))
    assert builds == [bump]
    assert all(k is got[0] for k in got) and bump.kernels is got[0]
    assert pickle.loads(pickle.dumps(bump)) == bump and copy.deepcopy(bump) is bump


def test_a_search_with_an_operator_of_lambdas_can_be_continued():
    # the warm-started search is kept pickled, its operator carried by value: read back, it
    # is the same operator (it used to be refused as "other unary_operators")
    bump = Operator("bump", lambda a: 1 / (1 + a * a), lambda a: -2 * a / (1 + a * a) ** 2,
                    lambda a: 1 / (1 + a**2))
    assert pickle.loads(pickle.dumps(bump)) == bump
    other = Operator("bump", lambda a: 2 / (1 + a * a), lambda a: -4 * a / (1 + a * a) ** 2,
                     lambda a: 2 / (1 + a**2))
    assert other != bump  # the same name, other functions
    X = np.linspace(-2, 2, 40)[:, None]
    y = 1 / (1 + X[:, 0] ** 2) + 0.01 * np.sin(7 * X[:, 0])  # no exact fit: no "tol" stop
    model = CADSRRegressor(unary_operators=(bump,), binary_operators=("mul",), warm_start=True,
                           **TINY).fit(X, y)
    model.set_params(n_epochs=2).fit(X, y)
    assert model.n_epochs_ == TINY["n_epochs"] + 2


def test_a_ctrl_c_inside_a_called_back_operator_reaches_the_caller():
    # ctypes drops an exception that leaves a callback; the interrupt must not be lost,
    # nor the kernel go on with a block the function never wrote
    armed = []

    def slow(a):
        if armed:
            raise KeyboardInterrupt
        return np.exp(-a * a)

    operator = Operator("slow", _Uncompilable(slow), _Uncompilable(_gauss_derivative),
                        lambda a: sympy.exp(-a**2))
    library = Library(1, ("mul",), (operator,))
    expression = Expression.from_names(["slow", "x0"], library)
    X = np.linspace(-1, 1, 5)[:, None]
    np.testing.assert_allclose(expression.evaluate(X), np.exp(-X[:, 0] ** 2))
    armed.append(True)
    with pytest.raises(KeyboardInterrupt):
        expression.evaluate(X)
    armed.clear()
    np.testing.assert_allclose(expression.evaluate(X), np.exp(-X[:, 0] ** 2))  # nothing left
    # in a fit, on the fitter's threads: the search stops as after any Ctrl-C
    armed.append(True)
    with pytest.raises(KeyboardInterrupt):
        ConstantFitter(X, np.exp(-X[:, 0] ** 2), const_fit_samples=1000, random_state=0,
                       n_jobs=2).fit(
            [Expression.from_names(["mul", "c", "slow", "x0"], library)])
