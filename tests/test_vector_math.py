"""exp, log and pow in arithmetic alone (vector_math): accuracy against 120-bit arithmetic,
libm's values wherever the fast path does not hold, and one value per number whether it is
computed alone or in a block of rows."""

import math

import mpmath
import numpy as np
import pytest

from cadsr_sklearn.expressions import vector_math as vm
from cadsr_sklearn.expressions.operations import apply
from cadsr_sklearn.expressions.opcodes import COS, EXP, LOG, POW, RELAXED_POW, SIN

rng = np.random.default_rng(0)


def _ulps(got, exact) -> np.ndarray:
    """|got − exact| in units of the last place of the exact value rounded to float64."""
    with mpmath.workprec(120):
        return np.array([float(abs(mpmath.mpf(float(g)) - e)) / np.spacing(abs(float(e)))
                         for g, e in zip(got, exact)])


def _rows(kernel, *columns):
    out = np.empty(len(columns[0]))
    kernel(*columns, out, len(out))
    return out


def _pow_rows(a, b, out, n):
    vm.pow_rows(a, b, out, n, False)


def _relaxed_pow_rows(a, b, out, n):
    vm.pow_rows(a, b, out, n, True)


def _sin_rows(x, out, n):
    vm.sin_cos_rows(x, out, n, False)


def _cos_rows(x, out, n):
    vm.sin_cos_rows(x, out, n, True)


def test_exp_is_within_one_ulp():
    x = np.concatenate([rng.uniform(-708, 708, 1000), rng.uniform(-5, 5, 1000)])
    with mpmath.workprec(120):
        exact = [mpmath.exp(mpmath.mpf(v)) for v in x]
    assert _ulps(_rows(vm.exp_rows, x), exact).max() <= 1.0


def test_log_is_within_one_ulp():
    x = np.concatenate([np.exp(rng.uniform(-700, 700, 1000)), rng.uniform(0.01, 10, 1000)])
    with mpmath.workprec(120):
        exact = [mpmath.log(mpmath.mpf(v)) for v in x]
    assert _ulps(_rows(vm.log_rows, x), exact).max() <= 1.0


@pytest.mark.parametrize("rows, function", [(_sin_rows, mpmath.sin), (_cos_rows, mpmath.cos)])
def test_sin_and_cos_are_within_one_and_a_half_ulp(rows, function):
    near = np.arange(-600_000, 600_000, 1201) * (np.pi / 2)  # reduction's cancellation
    x = np.concatenate([rng.uniform(-10, 10, 1000), rng.uniform(-1e6, 1e6, 500), near,
                        np.nextafter(near, np.inf)])
    with mpmath.workprec(160):
        exact = [function(mpmath.mpf(v)) for v in x]
    assert _ulps(_rows(rows, x), exact).max() <= 1.5


@pytest.mark.parametrize("bases, exponents, bound", [
    (rng.uniform(0.1, 10, 2000), rng.uniform(-3, 3, 2000), 1.5),  # a formula's usual powers
    (np.exp(rng.uniform(-20, 20, 2000)), rng.uniform(-30, 30, 2000), 3.0),
    (np.exp(rng.uniform(-2, 2, 2000)), rng.uniform(-300, 300, 2000), 16.0),
])
def test_pow_error_grows_only_with_the_size_of_the_exponent(bases, exponents, bound):
    with mpmath.workprec(120):
        exact = [mpmath.power(mpmath.mpf(a), mpmath.mpf(b)) for a, b in zip(bases, exponents)]
    assert _ulps(_rows(_pow_rows, bases, exponents), exact).max() <= bound


SPECIAL = np.array([0.0, -0.0, -1.0, -2.5, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 709.7,
                    -709.7, 710.0, -750.0, 1e308, -1e308])


def test_outside_the_fast_path_the_values_are_libms():
    with np.errstate(all="ignore"):
        big = np.abs(SPECIAL) > 708
        np.testing.assert_array_equal(_rows(vm.exp_rows, SPECIAL)[big], np.exp(SPECIAL[big]))
        huge = ~(np.abs(SPECIAL) <= 1e6)  # past sin's and cos's reduction, or not finite
        np.testing.assert_array_equal(_rows(_sin_rows, SPECIAL)[huge], np.sin(SPECIAL[huge]))
        np.testing.assert_array_equal(_rows(_cos_rows, SPECIAL)[huge], np.cos(SPECIAL[huge]))
        not_normal = ~((SPECIAL >= 2.2250738585072014e-308) & (SPECIAL <= 1.8e308))
        np.testing.assert_array_equal(_rows(vm.log_rows, SPECIAL)[not_normal],
                                      np.log(SPECIAL[not_normal]))
        for b in [0.0, 1.0, 2.0, 3.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e308]:
            exponent = np.full(len(SPECIAL), b)
            # np.power with an array of exponents: `x ** 0.5` would be NumPy's sqrt
            np.testing.assert_array_equal(_rows(_pow_rows, SPECIAL, exponent)[not_normal],
                                          np.power(SPECIAL, exponent)[not_normal])


def test_powers_that_overflow_or_underflow_are_libms():
    bases = np.array([10.0, 10.0, 0.5, 2.0, 1e300])
    exponents = np.array([400.0, -400.0, 1100.0, 1024.0, 2.5])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_rows(_pow_rows, bases, exponents),
                                      np.power(bases, exponents))


def test_signed_zeros_and_tiny_numbers_keep_their_sign():
    x = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300])
    np.testing.assert_array_equal(np.signbit(_rows(_sin_rows, x)), np.signbit(x))
    np.testing.assert_array_equal(_rows(_sin_rows, x), x)  # sin x = x below 2^-26
    np.testing.assert_array_equal(_rows(_cos_rows, x), 1.0)


def test_squares_and_first_powers_are_exact():
    a = rng.uniform(-10, 10, 1000)
    np.testing.assert_array_equal(_rows(_pow_rows, a, np.full(1000, 2.0)), a * a)
    np.testing.assert_array_equal(_rows(_pow_rows, a, np.ones(1000)), a)


def test_a_number_alone_has_the_value_it_has_in_a_block_of_rows():
    x = np.concatenate([rng.uniform(-20, 20, 200), SPECIAL])
    a, b = np.abs(x) + 0.1, rng.uniform(-3, 3, len(x))
    a[::5] *= -1
    with np.errstate(all="ignore"):
        for op, kernel, columns in [(EXP, vm.exp_rows, (x,)), (LOG, vm.log_rows, (a,)),
                                    (POW, _pow_rows, (a, np.round(b))),
                                    (POW, _pow_rows, (a, b)),
                                    (RELAXED_POW, _relaxed_pow_rows, (a, np.round(b))),
                                    (RELAXED_POW, _relaxed_pow_rows, (a, b)),
                                    (SIN, _sin_rows, (x * 1e4,)),
                                    (COS, _cos_rows, (x * 1e4,))]:
            second = columns[-1] if len(columns) == 2 else np.zeros(len(x))
            alone = [vm.value(op, u, v) for u, v in zip(columns[0], second)]
            np.testing.assert_array_equal(_rows(kernel, *columns), alone)
            # the operators' numbers (SymPy's folding of numbers) are these
            np.testing.assert_array_equal(alone, [apply(op, u, v) for u, v in zip(columns[0],
                                                                                 second)])


def test_a_block_of_one_row_and_a_partial_block():
    x = rng.uniform(-5, 5, 10)
    out = np.full(10, -7.0)
    vm.exp_rows(x, out, 3)
    np.testing.assert_array_equal(out[3:], -7.0)  # rows past n are left alone
    assert all(math.isclose(o, math.exp(v), rel_tol=3e-16) for o, v in zip(out[:3], x[:3]))
