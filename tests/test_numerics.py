"""Numerical extremes: the search completes, overflow makes candidates invalid, no warning escapes.

Every fit and predict here runs under ``warnings.simplefilter("error")``, so a
NumPy RuntimeWarning, a torch UserWarning or a scikit-learn warning fails the test.
"""

import warnings

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budgets import TINY
from compiled_ops import compiled
from hypothesis.extra.numpy import arrays

from cadsr_sklearn import CADSRRegressor

ALL_UNARY = (
    "sin", "cos", "tan", "log", "sqrt", "exp", "square", "cube", "neg", "inv", "tanh", "abs",
    "asin", "acos", "atan", "sinh", "cosh",
)


def _datasets():
    rng = np.random.default_rng(0)
    x = rng.uniform(1, 2, size=(40, 1))
    wide = 10.0 ** rng.uniform(-200, 200, size=(40, 2))
    dup = np.repeat(x[:4], 10, axis=0)
    return {
        "X near 1e300": (x * 1e300, x[:, 0]),
        "X near 1e-300": (x * 1e-300, x[:, 0]),
        "X across 1e-300..1e300": (np.c_[x * 1e300, x * 1e-300, x], x[:, 0] ** 2),
        "huge dynamic range": (wide, np.log(wide[:, 0]) + 1.0),
        "y near 1e100": (x, 1e100 * x[:, 0]),
        "tiny variance": (x, 1.0 + 1e-12 * x[:, 0]),
        "many duplicate rows": (dup, dup[:, 0] ** 2 + 1.0),
        "duplicate X, different y": (np.ones((40, 1)), x[:, 0]),
    }


DATASETS = _datasets()


@pytest.mark.parametrize("name", list(DATASETS), ids=list(DATASETS))
def test_extreme_data_fits_without_warnings(name):
    X, y = DATASETS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CADSRRegressor(**TINY, unary_operators=ALL_UNARY).fit(X, y)
        pred = model.predict(X)
        model.score(X, y) if np.all(np.isfinite(pred)) else None
    assert model.n_epochs_ >= 1
    # τ* was scored as valid, so it is finite on every training row
    assert np.all(np.isfinite(pred)), model.expression_
    assert np.isfinite(model.history_[-1]["best_reward"])


def test_overflowing_candidates_are_invalid_not_errors():
    X, y = DATASETS["X near 1e300"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CADSRRegressor(**TINY, unary_operators=ALL_UNARY).fit(X, y)
    # x², exp(x), x·x … overflow on 1e300: they are sampled and scored -inf
    assert max(h["invalid_fraction"] for h in model.history_) > 0
    assert all(np.isfinite(model.equations_["loss"]))


@pytest.mark.parametrize(
    "scale, match", [(1e300, "overflow"), (-1e200, "overflow"), (1e-300, "underflow")]
)
def test_targets_beyond_float64_squares_are_rejected_without_warnings(scale, match):
    X, y = DATASETS["X near 1e300"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=f"{match} float64.*Rescale y"):
            CADSRRegressor(**TINY).fit(X[:, :1] / 1e300, scale * y)


def test_constant_extreme_target_is_fine():
    X = np.arange(5.0).reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CADSRRegressor(**TINY).fit(X, np.full(5, 1e300))
        np.testing.assert_array_equal(model.predict(X), 1e300)


# ----------------------------------------------------------- outside the domain
@pytest.fixture(scope="module")
def log_model():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 5, size=(40, 1))
    model = CADSRRegressor(
        binary_operators=("add",), unary_operators=("log", "exp"), use_one=False, batch_size=32,
        n_epochs=20, ff_dim=32, max_length=6, device="cpu", random_state=1,
    ).fit(X, 2 * np.log(X[:, 0]))
    return model


def test_predict_outside_the_training_domain_is_nan_without_warnings(log_model):
    x0 = sympy.Symbol("x0")
    assert sympy.simplify(log_model.expression_ - 2 * sympy.log(x0)) == 0
    X = np.array([[-1.0], [-1e300], [0.0], [-0.0], [1e-320], [np.e], [1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = log_model.predict(X)
    assert np.isnan(pred[:4]).all()  # log of a negative; log 0 = -inf is reported as NaN too
    np.testing.assert_allclose(pred[4:], 2 * np.log(X[4:, 0]))
    assert ("NaN" in CADSRRegressor.predict.__doc__
            and "no warning" in CADSRRegressor.predict.__doc__)


def test_predict_overflow_is_nan(log_model):
    # a formula finite on the training data may overflow on new data: NaN, not inf
    model = CADSRRegressor(binary_operators=("mul",), unary_operators=("exp",), use_constants=False,
                           use_one=False, batch_size=16, n_epochs=20, max_length=4, ff_dim=32,
                           device="cpu", random_state=0)
    X = np.linspace(0, 1, 20).reshape(-1, 1)
    model.fit(X, np.exp(X[:, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pred = model.predict(np.array([[0.5], [1e6]]))
    assert np.isfinite(pred[0]) and np.isnan(pred[1])


# ------------------------------------------------ property: predict = exported formula
@pytest.fixture(scope="module")
def models():
    """Small fits with every operator: their formulas are arbitrary, which is the point."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 3, size=(40, 2))
    y = np.sin(X[:, 0]) * X[:, 1] + np.exp(-X[:, 1] ** 2)
    out = []
    for seed in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out.append(
                CADSRRegressor(**{**TINY, "random_state": seed}, unary_operators=ALL_UNARY)
                .fit(X, y)
            )
    return out


def _largest_intermediate(expr, X):
    """Per row, the scale of the round-off SymPy's reordering of float operations can move
    the result by: the largest finite |value| of any node, where a product carries its
    factors' scales (a sum that cancels to ~0 in one order keeps its terms' round-off, which
    a factor of 1e300 then multiplies)."""
    lib = expr.library
    constants = iter(expr.constants)
    const_of = {i: next(constants) for i, t in enumerate(expr.tokens) if t == lib.const_id}
    biggest = np.zeros(X.shape[0])

    def value(i):  # (value, scale of its round-off)
        tok = lib.tokens[expr.tokens[i]]
        if tok.kind == "variable":
            v = X[:, tok.feature]
        elif tok.kind == "constant":
            v = np.float64(const_of[i])
        elif tok.kind == "one":
            v = np.float64(1.0)
        else:
            children = [value(c) for c in expr.children(i)]
            v = compiled(tok)(*(c for c, _ in children))
            scales = [m for _, m in children]
            scale = (scales[0] * scales[1] if tok.name == "mul"
                     else np.maximum(scales[0], scales[-1]))  # one child or two
            return _noted(v, np.maximum(scale, np.abs(v)))
        return _noted(v, np.abs(v))

    def _noted(v, scale):
        scale = np.where(np.isnan(scale), 0.0, scale)
        np.maximum(biggest, np.where(np.isfinite(v), np.abs(v), 0.0), out=biggest)
        np.maximum(biggest, scale, out=biggest)
        return v, scale

    with np.errstate(all="ignore"):
        value(0)
    return biggest


def _lambdified(sym_expr, X):
    symbols = sympy.symbols(f"x0:{X.shape[1]}")
    fn = sympy.lambdify(symbols, sym_expr, "numpy")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(fn(*X.T))
    if np.iscomplexobj(out):
        out = np.where(out.imag == 0, out.real, np.nan)
    return np.broadcast_to(out, X.shape[:1]).astype(np.float64)


_values = st.one_of(
    st.floats(-50, 50, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, np.pi / 2, 1e-300, -1e-300, 1e300, -1e300, 700.0, 1e6]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(X=arrays(np.float64, st.tuples(st.integers(1, 12), st.just(2)), elements=_values))
def test_predict_equals_the_lambdified_export_wherever_finite(models, X):
    for model in models:
        candidates = [(model.expression_, model.best_expression_, True)] + [
            (row["equation"], row["expression"], False)
            for row in model.equations_.to_dict("records")
        ]
        for sym_expr, expr, is_best in candidates:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ours = model.predict(X) if is_best else expr.evaluate(X)
            theirs = _lambdified(sym_expr, X)
            both = np.isfinite(ours) & np.isfinite(theirs)
            tolerance = 1e-9 * np.abs(ours) + 1e-9 * _largest_intermediate(expr, X) + 1e-300
            with np.errstate(invalid="ignore"):  # inf - inf where either is not finite
                bad = both & ~(np.abs(ours - theirs) <= tolerance)
            assert not bad.any(), (
                f"{sym_expr} at {X[bad][:3].tolist()}: {ours[bad][:3]} vs {theirs[bad][:3]}"
            )
            if is_best:
                assert not np.isinf(ours).any()  # predict reports non-finite values as NaN
