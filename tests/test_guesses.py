"""The user's hypotheses: formulas read as trees, seeding the search, scored beside the front."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
import torch
from budgets import TINY
from sklearn.exceptions import NotFittedError

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.formula_parser import parse_formula
from cadsr_sklearn.front.rows import GuessRow
from cadsr_sklearn.search.guesses import seed_search
from cadsr_sklearn.expressions.library import DEFAULT_BINARY, Library
from cadsr_sklearn.search.build import build_search
from cadsr_sklearn.settings import SearchSettings

pd = pytest.importorskip("pandas")

NAMES = ["x0", "x1"]
DEFAULT = Library(2)  # add sub mul div pow; sin cos log sqrt exp; 1, c
RICH = Library(2, ("add", "sub", "mul", "div", "pow"), ("sin", "square", "neg", "inv", "exp"))
UNARY = ("sin", "cos", "log", "sqrt", "exp", "abs")
FULL = Library(2, DEFAULT_BINARY, UNARY)
FULL_RICH = Library(2, DEFAULT_BINARY, UNARY + ("square", "cube", "neg", "inv"))
ONE_EPOCH = {**TINY, "n_epochs": 1}


def _names(expression) -> list[str]:
    return [expression.library.names[t] for t in expression.prefix()]


# ------------------------------------------------------------------- the parser
@pytest.mark.parametrize("library, formula, prefix, constants", [
    (DEFAULT, "1.5*x0*x1**2", ["mul", "mul", "c", "x0", "pow", "x1", "c"], [1.5, 2.0]),
    (RICH, "1.5*x0*x1**2", ["mul", "mul", "c", "x0", "square", "x1"], [1.5]),
    (DEFAULT, "sin(x0)*x1 + 2", ["add", "mul", "sin", "x0", "x1", "c"], [2.0]),
    (DEFAULT, "x0 - 2*x1", ["sub", "x0", "mul", "c", "x1"], [2.0]),
    (DEFAULT, "-x0 + x1", ["sub", "x1", "x0"], []),  # positive terms first
    (DEFAULT, "x0 + 1", ["add", "x0", "1"], []),  # an exact 1 is the literal
    (DEFAULT, "x0/x1", ["div", "x0", "x1"], []),
    (DEFAULT, "1/x0", ["div", "1", "x0"], []),
    (RICH, "1/x0", ["inv", "x0"], []),
    (DEFAULT, "-x0", ["mul", "c", "x0"], [-1.0]),
    (RICH, "exp(-x0)", ["exp", "neg", "x0"], []),
    (DEFAULT, "2*(x0 + 1)", ["mul", "c", "add", "x0", "1"], [2.0]),  # kept as written
    (DEFAULT, "x0**-2.5", ["pow", "x0", "c"], [-2.5]),
    (RICH, "x0**-2", ["inv", "square", "x0"], []),
    (DEFAULT, "1/sqrt(x0)", ["div", "1", "sqrt", "x0"], []),
    (DEFAULT, "E**x0", ["exp", "x0"], []),
    (DEFAULT, "pi*x0 + 1 + 2", ["add", "mul", "c", "x0", "c"], [np.pi, 3.0]),
    (RICH, "square(x0) + neg(x1)", ["add", "square", "x0", "neg", "x1"], []),
])
def test_parser_writes_sympy_trees_with_the_librarys_tokens(library, formula, prefix, constants):
    expression = parse_formula(formula, NAMES, library)
    assert _names(expression) == prefix
    np.testing.assert_allclose(expression.prefix_constants(), constants)


def test_inverse_trigonometric_and_hyperbolic_functions_are_read_and_read_back():
    library = Library(2, DEFAULT_BINARY, ("asin", "acos", "atan", "sinh", "cosh"))
    expression = parse_formula("asin(x0/2) + acos(x1/4)*atan(x0) - sinh(x1) + cosh(x0)", NAMES,
                               library)
    assert {"asin", "acos", "atan", "sinh", "cosh"} <= set(_names(expression))
    X = np.random.default_rng(0).uniform(-1.9, 1.9, size=(40, 2))
    a, b = X.T
    expected = np.arcsin(a / 2) + np.arccos(b / 4) * np.arctan(a) - np.sinh(b) + np.cosh(a)
    np.testing.assert_allclose(expression.evaluate(X), expected, rtol=1e-12)
    written = expression.to_sympy(NAMES)
    for formula in (written, str(written)):  # SymPy's asin … cosh, as an object and as text
        again = parse_formula(formula, NAMES, library)
        np.testing.assert_allclose(again.evaluate(X), expected, rtol=1e-12)


@pytest.mark.parametrize("formula", [
    "1.5*x0*x1**2", "sin(x0)*x1 + 2", "x0 - 2*x1 - x0*x1/3", "-(x0 + x1)", "(x0 + 1)/2",
    "exp(-x0)/sqrt(x1)", "log(x0, 10)", "x1**x0 - 2**x0", "-1/x0 + 3.25", "abs(x0 - 2)*cos(x1)",
    "x0**-2 + x1**3", "1/sqrt(x0)",
])
@pytest.mark.parametrize("library", [FULL, FULL_RICH])
def test_parsed_tree_computes_the_formula_at_the_written_numbers(formula, library):
    X = np.random.default_rng(0).uniform(0.5, 3, size=(40, 2))
    expected = sympy.lambdify(sympy.symbols(NAMES), sympy.sympify(formula), "numpy")(*X.T)
    np.testing.assert_allclose(parse_formula(formula, NAMES, library).evaluate(X), expected,
                               rtol=1e-12)


@pytest.mark.parametrize("formula, library, message", [
    ("x0 + q", DEFAULT, "['q'], which is not a feature"),
    ("cosh(x0)", DEFAULT, "'cosh', which is not among this search's operators"),
    ("square(x0)", DEFAULT, "'square', which is not among"),
    ("x0 + ", DEFAULT, "cannot be read as a formula"),
    ("x0 > 1", DEFAULT, "not a formula"),
    ("I*x0", DEFAULT, "not a finite real number"),
    (3.5, DEFAULT, "must be a string or a SymPy expression"),
    ("2*x0", Library(2, use_constants=False), "no constant token"),
    ("x0*x1", Library(2, ("add",), ("sin",)), "needs the operator 'mul'"),
])
def test_parser_says_why_it_cannot_write_a_formula(formula, library, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_formula(formula, NAMES, library)


def test_parser_takes_sympy_expressions():
    x0, x1 = sympy.symbols(NAMES)
    expression = parse_formula(2 * x0 + x1, NAMES, DEFAULT)
    assert sorted(_names(expression)) == ["add", "c", "mul", "x0", "x1"]
    assert sympy.simplify(expression.to_sympy(NAMES) - (2 * x0 + x1)) == 0


# ------------------------------------------------------------ seeding the search
@pytest.fixture(scope="module")
def energy():
    """Kinetic energy with 5 % noise (so that no formula stops the search as exact)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"m": rng.uniform(1, 5, 200), "v": rng.uniform(1, 5, 200)})
    E = 0.5 * X.m * X.v**2
    return X, E + rng.normal(0, 0.05 * E.std(), 200)


@pytest.fixture(scope="module")
def guessed(energy):
    X, y = energy
    return CADSRRegressor(**ONE_EPOCH, guesses=["1.5*m*v**2", "m + v"]).fit(X, y)


def test_a_guess_of_the_law_makes_a_one_epoch_fit_return_it(guessed, energy):
    m, v = sympy.symbols("m v")
    assert sympy.simplify(guessed.expression_ - m * v**2 / 2) == 0
    # the paper's loop: one epoch is not enough without it (the linear leaves, on by
    # default, write m*v**2/2 in one)
    blind = CADSRRegressor(**ONE_EPOCH, linear_terms=0, unary_edits=0).fit(*energy)
    assert sympy.simplify(blind.expression_ - m * v**2 / 2) != 0


def test_guesses_are_fitted_rows_beside_the_front(guessed):
    law, wrong = guessed.guesses_
    assert isinstance(law, GuessRow) and law.guess == "1.5*m*v**2"
    np.testing.assert_allclose(law.expression.constants, [0.5, 2.0], rtol=0.02)  # fitted
    assert law.r2 > 0.99 and wrong.r2 < 0.5 and law.criterion > wrong.criterion
    assert law.record()["guess"] == "1.5*m*v**2" and law.constant_errors
    chosen = guessed.pareto_front_[guessed.selections_["criterion"]]
    assert chosen.criterion >= law.criterion  # never worse than the best guess
    text = str(guessed)
    assert "your guesses" in text and "(1.5*m*v**2)" in text
    assert "the chosen formula beats it" in text or "ties with it" in text
    assert "Your guesses (2)" in guessed._repr_html_inner()


def test_the_replay_buffer_holds_the_guess_after_the_first_epoch(energy):
    X, y = energy
    settings = SearchSettings.from_params(
        CADSRRegressor(**ONE_EPOCH, guesses=["1.5*x0*x1**2"]).get_params())
    search = build_search(settings, X.to_numpy(), y.to_numpy(), None, torch.device("cpu"), 0, 0)
    seed_search(search, settings.guesses, ["x0", "x1"])
    key = parse_formula("1.5*x0*x1**2", NAMES, search.library).key
    assert [c.expression.key for c in search.state.replay] == [key]
    assert search.state.best.expression.key == key
    search.run()
    assert search.state.n_epochs == 1
    assert key in [c.expression.key for c in search.state.replay]
    assert key in [c.expression.key for c in search.state.hall_of_fame.by_complexity.values()]


def test_an_exact_guess_stops_the_search_before_the_first_epoch():
    X = np.random.default_rng(1).uniform(1, 3, size=(80, 2))
    y = 2.5 * np.sin(X[:, 0]) * X[:, 1] + 2
    model = CADSRRegressor(**TINY, guesses=["3*sin(x0)*x1 + 1.5"]).fit(X, y)
    assert model.stop_reason_ == "tol" and model.n_epochs_ == 0
    x0, x1 = sympy.symbols(NAMES)
    assert sympy.simplify(model.expression_ - (sympy.Rational(5, 2) * sympy.sin(x0) * x1 + 2)) == 0


@pytest.mark.parametrize("guess, message", [
    ("m + q", r"guesses\[1\] = 'm \+ q': it uses \['q'\]"),
    ("cosh(m)", "'cosh', which is not among this search's operators"),
    ("exp(log(m))", "breaks the sampler's rule inverse_rule"),
    ("sin(cos(m))", "breaks the sampler's rule trig_rule"),
    ("m*v*m*v*m*v*m*v*m*v*m*v", "more than max_length=14"),
    ("m", "min_length_rule"),
    ("log(1 - m*v)", "not finite on every training row"),  # m*v >= 1, no constant to move
])
def test_a_guess_the_search_cannot_take_raises_saying_which_and_why(energy, guess, message):
    with pytest.raises(ValueError, match=message):
        CADSRRegressor(**ONE_EPOCH, guesses=["m*v", guess]).fit(*energy)


def test_guesses_must_be_a_list():
    with pytest.raises(ValueError, match="'guesses' parameter"):
        CADSRRegressor(**ONE_EPOCH, guesses="m*v").fit(np.ones((5, 1)), np.arange(5.0))


# ---------------------------------------------------------------- score_formula
def test_score_formula_of_the_law_beats_a_wrong_one(guessed, energy):
    X, y = energy
    law = guessed.score_formula("0.5*m*v**2", X, y)
    wrong = guessed.score_formula("m*v", X, y)
    assert isinstance(law, GuessRow) and law.criterion > wrong.criterion and law.r2 > 0.99
    # the same fitter, seeded as fit seeds it: a guess scores as it did in the fit
    again = guessed.score_formula("1.5*m*v**2", X, y)
    assert again.criterion == pytest.approx(guessed.guesses_[0].criterion, rel=1e-9)
    # on other rows: its loss there
    held = guessed.score_formula("0.5*m*v**2", X[:50], y[:50])
    assert held.loss == pytest.approx(np.mean((y[:50] - held.expression.evaluate(
        X[:50].to_numpy())) ** 2))
    # nothing is sampled, so the sampler's limits do not apply
    assert guessed.score_formula("m", X, y).complexity == 1


def test_score_formula_errors(guessed, energy):
    X, y = energy
    with pytest.raises(NotFittedError):
        CADSRRegressor().score_formula("m*v", X, y)
    with pytest.raises(ValueError, match="'tanh', which is not among"):
        guessed.score_formula("tanh(m)", X, y)
    with pytest.raises(ValueError, match="feature names"):  # validated as predict does
        guessed.score_formula("m*v", X[["m"]], y)


# ---------------------------------------------- warm start, several outputs, CLI
def test_warm_start_keeps_the_guesses_and_refuses_others(energy):
    X, y = energy
    model = CADSRRegressor(**ONE_EPOCH, warm_start=True, guesses=["1.5*m*v**2"]).fit(X, y)
    first = model.guesses_[0].criterion
    model.fit(X, y)
    assert model.n_epochs_ == 2 and model.guesses_[0].criterion == first
    model.set_params(guesses=["m*v"])
    with pytest.raises(ValueError, match="other guesses"):
        model.fit(X, y)


def test_a_checkpoint_resumes_with_its_guesses_only(energy, tmp_path):
    X, y = energy
    path = tmp_path / "run.ckpt"
    params = dict(ONE_EPOCH, checkpoint=path, guesses=["1.5*m*v**2"])
    first = CADSRRegressor(**params).fit(X, y)
    resumed = CADSRRegressor(**params).fit(X, y)  # the stopped search, taken up from the file
    assert resumed.guesses_[0].criterion == first.guesses_[0].criterion
    assert str(resumed.expression_) == str(first.expression_)
    with pytest.raises(ValueError, match="other guesses"):
        CADSRRegressor(**{**params, "guesses": None}).fit(X, y)


def test_every_output_is_seeded_and_scored(energy):
    X, y = energy
    Y = np.column_stack([y, X.m + X.v])
    model = CADSRRegressor(**ONE_EPOCH, guesses=["0.5*m*v**2", "m + v"]).fit(X, Y)
    assert [len(g) for g in model.guesses_] == [2, 2]
    assert model.guesses_[1][1].r2 == pytest.approx(1.0)
    rows = model.score_formula("m + v", X, Y)
    assert len(rows) == 2 and rows[1].r2 == pytest.approx(1.0) and rows[0].r2 < 0.9
    assert str(model).count("your guesses") == 2


def test_cli_fit_takes_guesses(tmp_path, capsys):
    from cadsr_sklearn.cli import main

    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, size=(2, 60))
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": a, "b": b, "y": 2.0 * a + b**2 + rng.normal(0, 0.1, 60)}).to_csv(
        data, index=False)
    out = tmp_path / "m.joblib"
    assert main(["fit", str(data), "--target", "y", "--guess", "2*a + b**2", "--guess", "a*b",
                 "--out", str(out), "--epochs", "1", "--batch-size", "32", "--device", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "Your guesses (--guess)" in printed and "(2*a + b**2)" in printed and "(a*b)" in printed
    assert main(["show", str(out)]) == 0
    assert "Your guesses (--guess)" in capsys.readouterr().out
    assert main(["fit", str(data), "--target", "y", "--guess", "a + zz", "--out", str(out),
                 "--epochs", "1", "--batch-size", "32", "--device", "cpu"]) == 2
    assert "zz" in capsys.readouterr().err


def test_score_formula_of_a_cosine_the_rows_sample_below_the_nyquist_rate_says_why(guessed):
    # body masses from 5 g to 6.6 t in kg: cos(m) spans ~1000 periods over 40 rows
    m = np.geomspace(0.005, 6654.0, 40)
    X = pd.DataFrame({"m": m, "v": np.linspace(1, 2, 40)})
    y = 10 * m**0.75
    with pytest.raises(ValueError, match="criterion rejects it.*Nyquist"):
        guessed.score_formula("m*(1.7 - cos(m))", X, y)
    assert np.isfinite(guessed.score_formula("m*(1.7 - cos(v))", X, y).criterion)
