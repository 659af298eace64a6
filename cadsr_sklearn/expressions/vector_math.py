"""pow, exp, log, sin and cos in float64 arithmetic alone, so that their row loops compile to SIMD.

libm's exp, log, pow, sin and cos cost 4–12 ns a number, and LLVM vectorises a loop that calls
them only with a vector math library, which numba's wheels do not carry. These functions
compute the same values with a range reduction and a polynomial (Taylor's for exp, fdlibm's
for log, sin and cos), reading and writing a float's exponent through bit casts: nothing in
them is a call or a branch, so a loop over a block of rows runs several rows an instruction
(:func:`pow_rows`, :func:`exp_rows`, :func:`log_rows`, :func:`sin_cos_rows`). A number
(:func:`value`) takes the same arithmetic, so an operator has one value wherever it is computed
(:mod:`.expressions.operations` reads it). No ``fastmath``: the values do not depend on the
width of the machine's vectors.

Accuracy, against 120-bit arithmetic (``tests/test_vector_math.py``): exp and log within 1 ulp,
sin and cos within 1.5 ulp; ``a**b`` within 1.5 ulp where ``|b ln a|`` is below about 10, since
``ln a`` is carried in twice the precision and ``b ln a`` formed without a rounding error;
beyond, the error grows with ``|b|`` (about 11 ulp at ``|b| = 300``). ``a**1`` is ``a`` and
``a**2`` is ``a*a``, as libm has them. The relaxed power of the constant fit,
``|a|**b·cos(πb)`` (:data:`.opcodes.RELAXED_POW`, with libm's cos), is built on the same pow,
so it is ``a**b`` exactly wherever the base is positive. Outside the fast path — exp beyond
±708, the log of a number that is not positive, normal and finite, a power of such a base or
one that overflows or underflows, sin and cos beyond ±10⁶ — the value is libm's, so inf, NaN,
zeros and subnormals are exactly libm's; the vectorised pass marks such a row with a NaN
(which the fast path never gives), and a second, scalar pass, only over a block that holds a
mark, computes it.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .opcodes import COS, EXP, LOG, POW, RELAXED_POW, SIN, jit

__all__ = ["value", "pow_rows", "exp_rows", "log_rows", "sin_cos_rows"]


@intrinsic
def _bits(typingctx, x):
    """The bits of float64 ``x`` as an int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(x), codegen


@intrinsic
def _float(typingctx, i):
    """The float64 whose bits are int64 ``i``."""
    if i != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(i), codegen


_SMALLEST_NORMAL, _LARGEST = 2.2250738585072014e-308, 1.7976931348623157e308
_EXP_LIMIT = 708.0  # e^±708 and its 2^k stay normal
_INV_LN2 = 1.4426950408889634
# ln 2 in two parts (fdlibm's): k·_LN2_HI is exact for |k| < 2^20
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
_SHIFT = 6755399441055744.0  # 1.5·2^52: x + _SHIFT rounds x to an integer held in the low bits
# 1/k!, k = 2 … 13: on |r| ≤ ln2/2 the Taylor tail after r^13 is below 2^-57
_E2, _E3, _E4, _E5, _E6, _E7 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040
_E8, _E9, _E10, _E11 = 1 / 40320, 1 / 362880, 1 / 3628800, 1 / 39916800
_E12, _E13 = 1 / 479001600, 1 / 6227020800
# fdlibm's e_log.c: log(1+f) = f - f²/2 + s(f²/2 + R(s²)), s = f/(2+f), |error| < 2^-58.45
_LG1, _LG2, _LG3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
_LG4, _LG5 = 2.222219843214978396e-01, 1.818357216161805012e-01
_LG6, _LG7 = 1.531383769920937332e-01, 1.479819860511658591e-01
_MANTISSA = 0xFFFFFFFFFFFFF
_SQRT2_MANTISSA = 0x6A09E667F3BCD  # √2's mantissa bits: above it, m/2 is nearer 1
_SPLIT = 134217729.0  # 2^27 + 1, Veltkamp's splitter
# π/2 in parts (fdlibm's __ieee754_rem_pio2): x − k·π/2 to 151 bits for |k| < 2^20
_TRIG_LIMIT = 1e6
_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1, _PIO2_2 = 1.57079632673412561417e+00, 6.07710050630396597660e-11  # 33 bits each
_PIO2_3, _PIO2_3T = 2.02226624871116645580e-21, 8.47842766036889956997e-32
# fdlibm's k_sin.c and k_cos.c: sin and cos on |r| ≤ π/4
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@jit(inline="always")
def _exp_reduced(x, x_low):
    """e^(x + x_low) for |x| ≤ 708, |x_low| ≪ 1: x = k ln2 + r, e^r by its Taylor polynomial."""
    t = x * _INV_LN2 + _SHIFT
    k = t - _SHIFT
    r = (x - k * _LN2_HI) - k * _LN2_LO + x_low
    p = _E13
    p = p * r + _E12
    p = p * r + _E11
    p = p * r + _E10
    p = p * r + _E9
    p = p * r + _E8
    p = p * r + _E7
    p = p * r + _E6
    p = p * r + _E5
    p = p * r + _E4
    p = p * r + _E3
    p = p * r + _E2
    two_to_k = _float((_bits(t) - _bits(_SHIFT) + 1023) << 52)
    return (1.0 + (r + r * r * p)) * two_to_k


@jit(inline="always")
def _log_parts(x):
    """x = 2^k (1 + f) with √½ ≤ 1 + f < √2, for a normal positive finite x: (k, f, s, R)."""
    bits = _bits(x)
    mantissa = bits & _MANTISSA
    above = mantissa > _SQRT2_MANTISSA
    k = (bits >> 52) - 1023 + above
    f = _float(mantissa | ((1023 - above) << 52)) - 1.0  # exact (Sterbenz)
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    R = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    return float(k), f, s, R


@jit(inline="always")
def _log_normal(x):
    k, f, s, R = _log_parts(x)
    half_f2 = 0.5 * f * f
    return k * _LN2_HI - ((half_f2 - (s * (half_f2 + R) + k * _LN2_LO)) - f)


@jit(inline="always")
def _split(a):
    """a = high + low, each with at most 26 significant bits (Veltkamp)."""
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


@jit(inline="always")
def _two_sum(a, b):
    """a + b = s + e exactly (Knuth)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


@jit(inline="always")
def _two_product(a, b):
    """a · b = p + e exactly (Dekker)."""
    p = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


@jit(inline="always")
def _log_double(x):
    """ln x = high + low in twice float64's precision, for a normal positive finite x."""
    k, f, s, R = _log_parts(x)
    h1, l1 = _two_sum(k * _LN2_HI, f)  # both exact
    f2, f2_low = _two_product(f, f)
    half_f2, half_f2_low = 0.5 * f2, 0.5 * f2_low
    h2, l2 = _two_sum(h1, -half_f2)
    rest = s * (half_f2 + R) - half_f2_low + k * _LN2_LO + l1 + l2
    high = h2 + rest
    return high, rest - (high - h2)


@jit(inline="always")
def _reduce_pio2(x):
    """x = k·π/2 + (r + r_low), |r| ≲ π/4, for |x| ≤ 10^6: (k mod 4, r, r_low). Three rounds of
    Cody and Waite's subtraction, each exact to 33 more bits, so that no cancellation loses
    the result (fdlibm's medium case, every round taken)."""
    t = x * _INV_PIO2 + _SHIFT
    k = t - _SHIFT
    r1 = x - k * _PIO2_1  # exact
    r2 = r1 - k * _PIO2_2  # π/2's second part, in place of _PIO2_1T
    w = k * _PIO2_3  # its third, in place of _PIO2_2T
    r = r2 - w
    w = k * _PIO2_3T - ((r2 - r) - w)
    y = r - w
    return (_bits(t) - _bits(_SHIFT)) & 3, y, (r - y) - w


@jit(inline="always")
def _sin_kernel(x, y):
    """sin(x + y) for |x| ≤ π/4, |y| ≪ ulp(x) (fdlibm's __kernel_sin)."""
    z = x * x
    v = z * x
    r = _S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))
    return x - ((z * (0.5 * y - v * r) - y) - v * _S1)


@jit(inline="always")
def _cos_kernel(x, y):
    """cos(x + y) for |x| ≤ π/4, |y| ≪ ulp(x) (fdlibm's __kernel_cos)."""
    z = x * x
    r = z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    half_z = 0.5 * z
    w = 1.0 - half_z
    return w + (((1.0 - w) - half_z) + (z * r - x * y))


@jit(inline="always")
def _sin_cos_fast(x, cosine):
    """(sin x or, with ``cosine``, cos x, whether that is the value), as :func:`_exp_fast`."""
    fast = abs(x) <= _TRIG_LIMIT
    quadrant, r, r_low = _reduce_pio2(x if fast else 0.0)
    quadrant = (quadrant + cosine) & 3  # cos x = sin(x + π/2)
    s, c = _sin_kernel(r, r_low), _cos_kernel(r, r_low)
    value = s if (quadrant & 1) == 0 else c
    # quadrants 2 and 3 negate it: the sign bit flipped (a chain of selects would not vectorise)
    return _float(_bits(value) ^ ((quadrant & 2) << 62)), fast


@jit(inline="always")
def _is_normal(x):
    """x is positive, normal and finite (False for NaN)."""
    return x >= _SMALLEST_NORMAL and x <= _LARGEST


@jit(inline="always")
def _exp_fast(x):
    """(e^x, whether that is the value) without a branch: a vector lane's work."""
    fast = abs(x) <= _EXP_LIMIT
    return _exp_reduced(x if fast else 0.0, 0.0), fast


@jit(inline="always")
def _log_fast(x):
    fast = _is_normal(x)
    return _log_normal(x if fast else 1.0), fast


@jit(inline="always")
def _pow_fast(a, b):
    fast = _is_normal(a) and abs(b) <= 1e300  # False for a NaN b; the split needs |b| ≪ 2^1023
    high, low = _log_double(a if fast else 1.0)
    y, y_low = _two_product(b if fast else 0.0, high)
    fast = fast and abs(y) <= _EXP_LIMIT
    value = _exp_reduced(y if fast else 0.0, (y_low + b * low) if fast else 0.0)
    value = a if b == 1.0 else a * a if b == 2.0 else value  # libm's values, exactly
    return value, fast or b == 1.0 or b == 2.0


@jit(inline="always")
def _libm(op, a, b):
    """libm's value of ``op`` where the fast path does not hold."""
    if op == POW:
        return a**b
    if op == RELAXED_POW:
        m = abs(a) ** b
        return m * math.cos(math.pi * b) if a < 0 else m
    if op == EXP:
        return math.exp(a)
    if op == LOG:
        return math.log(a) if a >= 0 else math.nan
    return math.cos(a) if op == COS else math.sin(a)


@jit(inline="always")
def _or_mark(value_and_fast):
    """The fast path's value, or NaN (which it never gives) to mark a row for libm."""
    value, fast = value_and_fast
    return value if fast else math.nan


@jit()
def _libm_where_marked(op, a, b, out, n):
    """out[r] ← libm's value of ``op`` on every marked row: a count first, which vectorises,
    then a scalar pass only over a block that holds a mark."""
    marked = 0
    for r in range(n):
        marked += math.isnan(out[r])
    if marked:
        for r in range(n):
            if math.isnan(out[r]):
                out[r] = _libm(op, a[r], b[r])


@jit()
def value(op, a, b):
    """The value of pow (true or relaxed), exp, log, sin or cos (``op``) at ``a`` (and ``b``):
    the arithmetic of the block kernels, one number at a time."""
    if op == POW or op == RELAXED_POW:
        v, fast = _pow_fast(abs(a) if op == RELAXED_POW else a, b)
        if op == RELAXED_POW and a < 0:
            v *= math.cos(math.pi * b)
    elif op == EXP:
        v, fast = _exp_fast(a)
    elif op == LOG:
        v, fast = _log_fast(a)
    else:
        v, fast = _sin_cos_fast(a, op == COS)
    return v if fast else _libm(op, a, b)


@jit()
def exp_rows(a, out, n):
    """out[:n] ← e^a[:n]: one vectorised pass, then libm's value where the fast path did not
    hold."""
    for r in range(n):
        out[r] = _or_mark(_exp_fast(a[r]))
    _libm_where_marked(EXP, a, a, out, n)


@jit()
def log_rows(a, out, n):
    """out[:n] ← ln a[:n], as :func:`exp_rows`."""
    for r in range(n):
        out[r] = _or_mark(_log_fast(a[r]))
    _libm_where_marked(LOG, a, a, out, n)


@jit()
def pow_rows(a, b, out, n, relaxed):
    """out[:n] ← a[:n] ** b[:n], or with ``relaxed`` the real part of the principal power,
    |a|^b·cos(πb) below 0 (``RELAXED_POW``), as :func:`exp_rows`."""
    for r in range(n):
        out[r] = _or_mark(_pow_fast(abs(a[r]) if relaxed else a[r], b[r]))
    if relaxed:  # a fit's operator only (integer exponents): libm's cos is fast enough
        for r in range(n):
            if a[r] < 0:
                out[r] *= math.cos(math.pi * b[r])  # a mark stays NaN
    _libm_where_marked(RELAXED_POW if relaxed else POW, a, b, out, n)


@jit()
def sin_cos_rows(a, out, n, cosine):
    """out[:n] ← sin a[:n], or with ``cosine`` cos a[:n], as :func:`exp_rows`."""
    for r in range(n):
        out[r] = _or_mark(_sin_cos_fast(a[r], cosine))
    _libm_where_marked(COS if cosine else SIN, a, a, out, n)
