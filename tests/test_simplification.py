"""The reported formula: the shortest SymPy form equal to τ*'s tree on the training rows."""


import numpy as np
import pytest
import sympy

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.expression import sympy_complexity
from cadsr_sklearn.expressions.simple_numbers import snap_number
from cadsr_sklearn.front.simplification import round_off_equal, simplest_equivalent

x, y = sympy.symbols("x y")
F = sympy.Float


def _simplest(expr, lo=-1.0, hi=1.0, n=20):
    X = np.linspace(lo, hi, n)[:, None]
    with np.errstate(all="ignore"):
        reference = sympy.lambdify([x], expr, "numpy")(X[:, 0])
    return simplest_equivalent(expr, X, np.broadcast_to(reference, (n,)).astype(float), [x])


@pytest.mark.parametrize(
    "found, domain, reported",
    [
        # features are real: sqrt(x**4) = x**2
        (x * (x + 1) * (sympy.sqrt(x**4) + F(1.0)), (-1, 1), x * (x + 1) * (x**2 + 1)),
        # e·exp(x) inside a log, plus a constant round-off from 0
        (
            (x + x**3) * sympy.log(F(2.71828182845904) * sympy.exp(x) + F(3.34e-15)),
            (-1, 1),
            (x + 1) * (x**3 + x),
        ),
        # a phase of π/2 turns cos into sin
        (
            sympy.sin(x) - sympy.cos(x**2 + x + F(1.5707963267949)),
            (-1, 1),
            sympy.sin(x) + sympy.sin(x**2 + x),
        ),
        # a golden-ratio factorisation multiplies out to integer coefficients
        (
            x * (x * (x - F(0.618033988749891)) + 1) * (x * (x + F(1.61803398874989)) + 1),
            (-1, 1),
            x**5 + x**4 + x**3 + x**2 + x,
        ),
        (x + x ** F(2.0) * (x + 1), (-1, 1), x**3 + x**2 + x),
        # e² to round-off as the base of a power of log(x): x**2 (Nguyen-9, seed 2)
        (sympy.sin(F(7.38905609893065) ** sympy.log(x)) + x, (0, 1), sympy.sin(x**2) + x),
        # a log of a power splits where that is shorter
        (sympy.log(F(1.00000000000002) * sympy.exp(x) ** 3), (0, 2), 3 * x),
        # 2π taken out of a root by SymPy (the tree held 4π² under it): one constant still
        (F(6.28318530717959) * sympy.sqrt(x), (0.1, 2), 2 * sympy.pi * sympy.sqrt(x)),
        # the normal density's 1/√(2π), and π² itself
        (F(0.398942280401433) * sympy.exp(-x**2 / 2), (-1, 1),
         sympy.exp(-x**2 / 2) / sympy.sqrt(2 * sympy.pi)),
        (F(9.86960440108936) * x, (-1, 1), sympy.pi**2 * x),
        # (1/a)**p is a**(-p) where a > 0
        (F(0.9853) / (1 / x) ** F(1.504), (0.1, 2), F(0.9853) * x ** F(1.504)),
    ],
)
def test_found_forms_are_reported_in_their_shortest_equal_form(found, domain, reported):
    assert _simplest(found, *domain) == reported


def test_constants_that_are_not_round_off_stay():
    found = F(2.31) * sympy.sin(F(1.29) * x) + F(0.4260001)
    assert _simplest(found) == found


def test_a_snap_that_changes_the_function_is_refused():
    # x**1.00000000001 is round-off from x, but 1e12 times the difference is not
    found = 10**12 * x ** F(1.00000000001) - 10**12 * x
    reported = _simplest(found, 0.5, 2.0)
    assert reported.has(F(1.00000000001))


def test_a_rewrite_that_is_false_on_the_data_is_refused():
    # log(a²·b) = 2·log a + log b needs a > 0: shorter, but NaN here
    found = sympy.log((x - 3) ** 2 * sympy.exp(x))
    assert sympy_complexity(sympy.expand_log(found, force=True)) < sympy_complexity(found)
    assert _simplest(found, 0, 2) == found


def test_two_features_keep_their_symbols():
    X = np.random.default_rng(0).uniform(0, 1, (30, 2))
    found = F(1.99999999999999) * sympy.sin(x) * sympy.cos(y)
    reference = 2 * np.sin(X[:, 0]) * np.cos(X[:, 1])
    assert simplest_equivalent(found, X, reference, [x, y]) == 2 * sympy.sin(x) * sympy.cos(y)


@pytest.mark.parametrize(
    "value, number",
    [
        (0.999999999999997, sympy.Integer(1)),
        (-3e-15, sympy.Integer(0)),
        (0.333333333333333, sympy.Rational(1, 3)),
        (1.5707963267949, sympy.pi / 2),
        (0.367879441171442, sympy.exp(-1)),
        (7.38905609893065, sympy.exp(2)),
        (1.64872127070013, sympy.exp(sympy.Rational(1, 2))),
        # tiny constants are not powers of e: those lie closer than 1e-10 apart down there
        (5e-10, None),
        (3.3e-9, None),
        (4.539992976248485e-05, None),  # e^-10 exactly, but past |p/q| <= 4
        (1.29, None),
        (float("nan"), None),
    ],
)
def test_snap_number(value, number):
    assert snap_number(value) == number


def test_round_off_equal_needs_finite_values_close_to_the_reference():
    ref = np.array([1.0, -2.0, 3.0])
    assert round_off_equal(ref + 1e-14, ref)
    assert not round_off_equal(ref + 1e-6, ref)
    assert not round_off_equal(np.array([1.0, np.nan, 3.0]), ref)


def test_the_estimator_reports_a_form_that_predicts_like_its_tree():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, 2))
    target = X[:, 0] ** 2 + X[:, 1]
    kw = dict(n_epochs=3, batch_size=100, ff_dim=32, random_state=0, device="cpu")
    raw = CADSRRegressor(simplify=False, **kw).fit(X, target)
    tidy = CADSRRegressor(**kw).fit(X, target)
    assert raw.expression_ == raw.best_expression_.to_sympy(["x0", "x1"])
    assert tidy.best_expression_.key == raw.best_expression_.key
    symbols = sympy.symbols("x0 x1")
    predicted = np.broadcast_to(
        sympy.lambdify(symbols, tidy.expression_, "numpy")(X[:, 0], X[:, 1]), (40,)
    )
    np.testing.assert_allclose(predicted, tidy.predict(X), rtol=1e-9, atol=1e-12)
    table = tidy.equations_
    rows = table if isinstance(table, list) else table.to_dict("records")
    assert [r["equation"] for r in rows if r["selected"]] == [tidy.expression_]
    assert sympy_complexity(tidy.expression_) <= sympy_complexity(raw.expression_)


def test_every_training_row_is_checked():
    # 4·log(x − 1) + x is shorter, and NaN on the one row of 4000 with x < 1
    X = np.linspace(2, 4, 4000)[:, None].copy()
    X[1, 0] = 0.5
    found = sympy.log((x - 1) ** 4 * sympy.exp(x))
    assert sympy_complexity(sympy.expand_log(found, force=True)) < sympy_complexity(found)
    reference = np.log((X[:, 0] - 1) ** 4 * np.exp(X[:, 0]))
    assert simplest_equivalent(found, X, reference, [x]) == found
    assert simplest_equivalent(found, X[2:], reference[2:], [x]) != found


def test_a_structural_rewrite_must_be_shorter():
    # 4*log(x - 1) is no shorter: keep the form that is defined everywhere
    found = sympy.log((x - 1) ** 4)
    assert _simplest(found, 2, 4) == found


@pytest.mark.parametrize(
    "found",
    [
        F(2.5) / (x + y + 1) ** 60,
        sympy.sin((x + y + 1) ** 400),
        F(2.5) * sympy.sin(x + 1) / (x + y + F(1.5)) ** 25,
    ],
)
def test_large_expansions_are_not_attempted(found, monkeypatch):
    # multiplied out, these hold hundreds of terms: sympy.expand would take long
    X = np.random.default_rng(0).uniform(0.1, 0.2, (20, 2))
    with np.errstate(all="ignore"):
        reference = sympy.lambdify([x, y], found, "numpy")(X[:, 0], X[:, 1])
    expanded = []
    monkeypatch.setattr(sympy, "expand", lambda e, *args, **kwargs: expanded.append(e) or e)
    simplest_equivalent(found, X, reference, [x, y])
    assert expanded == []
    small = (x + 1) * (y + F(1.5))  # while a small product is multiplied out
    simplest_equivalent(small, X, (X[:, 0] + 1) * (X[:, 1] + 1.5), [x, y])
    assert len(expanded) == 2  # the formula, and its logs expanded (the same here)


def test_features_named_like_sympy_functions_and_numbers():
    pi, sin = sympy.symbols("pi sin")
    X = np.random.default_rng(0).uniform(0.5, 1.5, (30, 2))
    found = F(1.99999999999999) * pi + sympy.sin(F(1.0) * sin)
    reference = 2 * X[:, 0] + np.sin(X[:, 1])
    assert simplest_equivalent(found, X, reference, [pi, sin]) == 2 * pi + sympy.sin(sin)


@pytest.mark.parametrize("value", [6.02214076e23, 123456789012.5, 1e300])
def test_large_constants_are_not_snapped(value):
    assert snap_number(value) is None


def test_complex_values_never_match():
    assert not round_off_equal(np.array([1.0 + 0j, 2.0 + 0j]), np.array([1.0, 2.0]))


def test_a_fitted_constant_base_is_written_as_an_exponential():
    x = sympy.Symbol("x")
    X = np.linspace(0.5, 3.0, 40)[:, None]
    for base in (0.9996, 0.1835):
        expr = sympy.Float(269.9) * sympy.Float(base) ** sympy.sqrt(x)
        reference = 269.9 * base ** np.sqrt(X[:, 0])
        shown = simplest_equivalent(expr, X, reference, [x])
        assert not any(p.base.is_Float for p in shown.atoms(sympy.Pow)), shown
        assert shown.has(sympy.exp)
        rate = shown.atoms(sympy.exp).pop().args[0].as_coeff_Mul()[0]
        assert float(rate) == pytest.approx(np.log(base))
    # a snapped base that is no integer, such as 3/π, goes too: no π that is not there
    shown = simplest_equivalent((3 / sympy.pi) ** (sympy.Float(0.0817) * x), X,
                                (3 / np.pi) ** (0.0817 * X[:, 0]), [x])
    assert not shown.has(sympy.pi) and shown.has(sympy.exp)
    # an integer base and a constant exponent stay as they are
    assert simplest_equivalent(2 ** x, X, 2 ** X[:, 0], [x]) == 2 ** x
    # and so does a power with no fitted number in it: exp(1.253*x) would read as fitted
    seven_halves = sympy.Rational(7, 2) ** x
    assert simplest_equivalent(seven_halves, X, 3.5 ** X[:, 0], [x]) == seven_halves
    assert simplest_equivalent(x ** sympy.Float(1.49), X, X[:, 0] ** 1.49, [x]) == x ** 1.49


def test_a_rate_the_exponential_form_merges_is_snapped_like_any_constant():
    # what the search wrote for Bose–Einstein occupancy and for the relativistic mass: a
    # fitted base whose logarithm, merged with the number beside it, is 1/(2π) or -1/2
    # to round-off (seen at 2000 noiseless rows, shown as 0.1591549430918954 and
    # 0.5000000000000073, which SRBench's 3-decimal judge does not take for the law)
    h, omega, T, kb, m0, v, c = sympy.symbols("h omega T kb m_0 v c")
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 5, (200, 4))
    bose = 1 / (F(float(np.exp(1 / (2 * np.pi))), 17) ** (h * omega / (T * kb)) - 1)
    assert _shown(bose, [h, omega, T, kb], X) == (
        1 / (sympy.exp(h * omega / (2 * sympy.pi * T * kb)) - 1))
    X = np.column_stack([rng.uniform(1, 5, 200), rng.uniform(1, 2, 200), rng.uniform(3, 10, 200)])
    base = 0.465879
    mass = m0 * F(base, 17) ** (sympy.log(1 - v**2 / c**2) / F(np.log(base) / -0.5, 17))
    assert _shown(mass, [m0, v, c], X) == m0 / sympy.sqrt(1 - v**2 / c**2)
    # a rate that is no simple number stays the fitted decimal it is
    fitted = F(269.9) * F(0.9996) ** x
    shown = _shown(fitted, [x], np.linspace(0.5, 3.0, 40)[:, None])
    assert shown.has(sympy.exp) and not shown.has(sympy.pi)


# ------------------------------------------------------------- what the data say about symbols
def _shown(expr, symbols, X):
    with np.errstate(all="ignore"):
        reference = sympy.lambdify(symbols, expr, "numpy")(*X.T)
    return simplest_equivalent(expr, X, np.broadcast_to(reference, (len(X),)).astype(float),
                               symbols)


def test_positive_features_give_the_law_as_a_physicist_writes_it():
    # Kepler's third law as the tree held it: equal to 2π a^(3/2)/√(G(m1 + m2)) only for
    # positive values, which every training row has
    a, G, m1, m2 = sympy.symbols("a G m1 m2")
    X = np.random.default_rng(0).uniform(1, 5, (40, 4))
    found = a / sympy.sqrt((G * m1 / (4 * sympy.pi**2) + G * m2 / (4 * sympy.pi**2)) / a)
    assert _shown(found, [a, G, m1, m2], X) == (
        2 * sympy.pi * a**sympy.Rational(3, 2) / sympy.sqrt(G * (m1 + m2)))
    # the Gaussian: 1/sqrt(exp(u)) is exp(-u/2) for real u
    s = sympy.Symbol("s")
    gauss = 2 / (5 * s * sympy.sqrt(sympy.exp(y**2 / s**2)))
    Xg = np.column_stack([np.linspace(1, 3, 30), np.linspace(-2, 2, 30)])
    assert _shown(gauss, [s, y], Xg) == 2 * sympy.exp(-y**2 / (2 * s**2)) / (5 * s)
    # a root of a ratio stays one: sqrt(L/g), not sqrt(L)/sqrt(g)
    L, g = sympy.symbols("L g")
    assert _shown(F(6.28318530717959) * sympy.sqrt(L / g), [L, g], X[:, :2]) == (
        2 * sympy.pi * sympy.sqrt(L / g))


def test_a_positive_factor_enters_a_root_where_it_clears_a_denominator():
    # what the search on dimensionless groups wrote back for the magnitude of a moment's
    # energy (prefactor Bx*mom, groups By/Bx and Bz/Bx): for Bx > 0 it is the law
    Bx, By, Bz, mom = sympy.symbols("Bx By Bz mom")
    X = np.random.default_rng(0).uniform(1, 5, (60, 4))
    found = Bx * mom * sympy.sqrt(1 + By**2 / Bx**2 + Bz**2 / Bx**2)
    assert _shown(found, [Bx, By, Bz, mom], X) == mom * sympy.sqrt(Bx**2 + By**2 + Bz**2)
    # a root of a dimensionless sum stays: c**3*m/sqrt(c**2 - v**2) would be shorter, but
    # it is not how the law is written, nor equal to it over the complex numbers
    m, v, c, w = sympy.symbols("m v c omega_0")
    Xr = np.column_stack([X[:, 0], X[:, 1] / 3, X[:, 2] + 5, X[:, 3]])
    for law in (c**2 * m / sympy.sqrt(1 - v**2 / c**2), m * v / sympy.sqrt(1 - v**2 / c**2),
                w * (1 + v / c) / sympy.sqrt(1 - v**2 / c**2)):
        assert _shown(law, [m, v, c, w], Xr) == law
    # a factor that gives the root's sum its 1 enters it (the relativistic mass as a
    # search with linear leaves wrote it; only the second is the law for SRBench's judge)
    assert _shown(c * m / sympy.sqrt(c**2 - v**2), [m, v, c, w], Xr) == (
        m / sympy.sqrt(1 - v**2 / c**2))
    # so does the root of a reciprocal once its sum's sign is out (a fit with units and
    # linear leaves wrote the first; SRBench's judge takes neither for the law)
    for tree in (m * sympy.sqrt(-1 / (-1 + v**2 / c**2)), m * sympy.sqrt(1 / (1 - v**2 / c**2))):
        assert _shown(tree, [m, v, c, w], Xr) == m / sympy.sqrt(1 - v**2 / c**2)
    # where Bx takes both signs, Bx does not enter the root
    X[::2, 0] *= -1
    assert _shown(found, [Bx, By, Bz, mom], X) == found


def test_a_root_that_other_rewrites_lay_bare_takes_the_factors_beside_it():
    # II.6.15a's law as the search wrote it in two fits: the root appears only once the
    # tree is expanded, or once the number common to its sum is taken out
    p, e, r, x, y, z = sympy.symbols("p_d epsilon r x y z")
    X = np.random.default_rng(0).uniform(1, 3, (60, 6))
    trees = [p / (e * r**3) * ((1 + sympy.sqrt(1 + (y / x)**2)) * z / r - z / r)
             / (F(4.18879020478639) / (x / r)),
             p / (e * r**3) * (z / r) * (x / r)
             / (F(0.056993165798815) * (y / x)**2 + F(0.056993165798815))**sympy.Rational(-1, 2)]
    law = 3 * p * z * sympy.sqrt(x**2 + y**2) / (4 * sympy.pi * e * r**5)
    for tree in trees:
        assert _shown(tree, [p, e, r, x, y, z], X) == law


def test_a_feature_with_a_negative_value_gets_no_positive_form():
    X = np.linspace(-2, 2, 21)[:, None]
    assert _shown(sympy.sqrt(x**3 + 8), [x], X) == sympy.sqrt(x**3 + 8)
    assert _shown(sympy.sqrt(x**2), [x], X) == sympy.Abs(x)


@pytest.mark.parametrize("found, reported", [
    (sympy.log(sympy.exp(F(0.9163) * x)), F(0.9163) * x),
    (sympy.exp(F(-0.6931471805599453) * x), 2**(-x)),  # a halving
    (sympy.exp(F(2.302585092994046) * x / 2), 10**(x / 2)),
])
def test_logs_of_exponentials_and_small_bases(found, reported):
    assert _shown(found, [x], np.linspace(-2, 2, 21)[:, None]) == reported


def test_no_shown_number_holds_more_than_two_digits_above_or_below():
    # 79/2 under a root comes out as sqrt(158)/2; a ten-digit integer under a root as
    # sqrt(3013074890): both are shown as the decimals they are
    X = np.random.default_rng(1).uniform(1, 5, (30, 2))
    L, g = sympy.symbols("L g")
    for found in (sympy.sqrt(sympy.Rational(79, 2) * L / g), sympy.sqrt(F(3013074890.0) * L)):
        shown = _shown(found, [L, g], X)
        assert all(abs(r.p) <= 99 and r.q <= 99 for r in shown.atoms(sympy.Rational)), shown
        assert shown.atoms(sympy.Float)
    assert snap_number(54891.482854810) is None  # √3013074890 to round-off: no simple number


def test_a_power_of_a_base_snapped_to_zero_is_zero():
    # a base the data could not tell from 0 is snapped to it: 0**(log(t) + 9.7) is 0 here
    t = sympy.Symbol("t")
    X = np.linspace(1, 3, 20)[:, None]
    found = sympy.exp(-t**2 / 2) / sympy.sin(F(1.048) * sympy.exp(
        sympy.Integer(0) ** (sympy.log(t) + F(9.7))))
    shown = _shown(found, [t], X)
    assert not shown.has(sympy.Integer(0) ** (sympy.log(t) + F(9.7))), shown
    assert shown.free_symbols == {t} and sympy_complexity(shown) < sympy_complexity(found)


def test_a_denominator_that_reads_negative_gives_its_sign_to_the_quotient():
    # SymPy keeps -39.56/(-g - 0.02629) as it is where no rewrite is shorter (here, next to
    # a product of sums that expand or factor_terms would lengthen): it reads
    # 39.56/(g + 0.02629), the same function
    L, g = sympy.symbols("L g")
    X = np.random.default_rng(0).uniform(0.5, 3.0, (30, 2))
    product = (L + sympy.Rational(13, 10)) * (g + sympy.Rational(21, 10))
    for found, reported in [
        (product + F(-39.56) / (-g - F(0.02629)), product + F(39.56) / (g + F(0.02629))),
        (product + L / (-g - F(0.02629)) ** 3, product - L / (g + F(0.02629)) ** 3),
        (product + F(2.537) / (-g - L), product - F(2.537) / (L + g)),
        (product + F(2.537) / (-g - L) ** 2, product + F(2.537) / (L + g) ** 2),
        # a sum that does not begin with a minus is left as it reads
        (product + F(-39.56) / (F(0.02629) - g), product + F(-39.56) / (F(0.02629) - g)),
    ]:
        shown = _shown(found, [L, g], X)
        assert shown == reported, (found, shown)
        with np.errstate(all="ignore"):
            grid = np.random.default_rng(1).uniform(-5, 5, (200, 2))  # off the rows too
            np.testing.assert_allclose(sympy.lambdify([L, g], shown)(*grid.T),
                                       sympy.lambdify([L, g], found)(*grid.T), rtol=1e-12)


def test_trigonometric_identities_join_a_snapped_phase():
    # an ODE's right-hand side as the search wrote it, 7π/6 to 15 digits
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (200, 2))
    x, y = sympy.symbols("x0 x1")
    found = (sympy.sin(x) * sympy.sin(y + sympy.Float(3.66519142918809))
             + sympy.sin(y) * sympy.sin(x + sympy.pi / 6) - sympy.sin(y))
    reference = sympy.lambdify([x, y], found, "numpy")(X[:, 0], X[:, 1])
    simplest = simplest_equivalent(found, X, reference, [x, y])
    assert sympy.simplify(simplest - (-sympy.sin(y) - sympy.sin(x - y) / 2)) == 0
    assert sympy_complexity(simplest) < sympy_complexity(found)
