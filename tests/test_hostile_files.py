"""Hostile files (issue 59): formula files and checkpoints mutated at random load or are
refused with one ValueError naming the file; the readers' pieces run no code of the file's.

The fuzzer is ``perf/fuzz_files.py`` (``--cases 3000`` for the full run); here a seeded few
hundred mutants of each kind, in a worker process, as the script runs them.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import sympy

from cadsr_sklearn.reporting.formula_values import Unevaluable, sympy_values, text_values
from cadsr_sklearn.reporting.sympy_json import BadFormula, from_json, to_json

FUZZER = Path(__file__).resolve().parents[1] / "perf" / "fuzz_files.py"


def _fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_files", FUZZER)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_files", module)  # its dataclasses look themselves up there
    spec.loader.exec_module(sys.modules["fuzz_files"])
    return sys.modules["fuzz_files"]


def test_mutated_files_load_consistently_or_are_refused_naming_the_file():
    fuzz = _fuzzer()
    report = fuzz.run(360, master_seed=59, checkpoint_share=1 / 3, timeout=60.0)
    holes = "\n".join(f"{h['kind']} case {h['case']} {h['mutation']}: {h['outcome']} "
                      f"{h['detail']}" for h in report.holes)
    assert report.n_holes == 0, f"{report.table()}\n{holes}"
    formulas, checkpoints = report.counts["formula"], report.counts["checkpoint"]
    assert sum(formulas.values()) == 240 and sum(checkpoints.values()) == 120
    # both ways out were taken: the oracle ran on loaded models, and files were refused
    assert formulas["consistent"] >= 5 and formulas["refused"] >= 100
    assert checkpoints["refused"] >= 100


@pytest.mark.parametrize("text", ["x*y**2/2", "-x**2 + 3*y", "2**(-x)", "x**(-3/2)",
                                  "exp(-0.0004*x)", "sqrt(x/y)*2*pi", "Abs(x - 1.5e-7)",
                                  "log(x)/log(10) + E", "Max(x, y) - Min(1, y)", "1/(x*y)",
                                  "-(x + 1)/2", "asin(x/5) + cosh(y)"])
def test_the_text_of_a_formula_reads_as_sympy_means_it(text):
    X = np.random.default_rng(0).uniform(0.5, 3, size=(20, 2))
    expr = sympy.sympify(text)  # the test's own text: what SymPy makes of it
    np.testing.assert_allclose(text_values(str(expr), ["x", "y"], X),
                               sympy_values(expr, ["x", "y"], X), rtol=1e-13)
    reference = sympy.lambdify(sympy.symbols("x y"), expr, "numpy")(X[:, 0], X[:, 1])
    np.testing.assert_allclose(sympy_values(expr, ["x", "y"], X), reference, rtol=1e-13)


@pytest.mark.parametrize("text", ["__import__('os').system('touch PWNED')", "exit(1)", "x0)+(",
                                  "x.real", "x[0]", "lambda: 1", "y", "breakpoint()",
                                  "I*x", "(" * 300 + "x" + ")" * 300, "x " * 20_000])
def test_a_texts_code_never_runs(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    X = np.ones((3, 1))
    with pytest.raises(Unevaluable):
        text_values(text, ["x"], X)
    assert not (tmp_path / "PWNED").exists()


def test_a_formulas_symbols_and_functions_are_its_features_and_known_ones():
    x = sympy.Symbol("x")
    with pytest.raises(Unevaluable, match="no feature"):
        sympy_values(sympy.Symbol("__import__('os')") + x, ["x"], np.ones((2, 1)))
    with pytest.raises(Unevaluable, match="'print'"):
        sympy_values(sympy.Function("print")(x), ["x"], np.ones((2, 1)))
    gamma = sympy_values(sympy.gamma(x), ["x"], np.array([[4.0]]))  # SciPy's, by its class
    np.testing.assert_allclose(gamma, [6.0])


@pytest.mark.parametrize("node, message", [
    ({"node": "Pow", "args": [{"integer": "2"}, {"integer": "100000000000000000000"}]},
     "power of exact numbers"),
    ({"float": [0, "1", 10**9, 1], "precision": 53}, "not one mpmath writes"),
    ({"float": [0, "3", -1, 2], "precision": 10**12}, "precision"),
    ({"integer": "9" * 5000}, "at most 400 digits"),
    ({"node": "factorial", "args": [{"symbol": "x"}]}, "unknown formula node"),
    ({"undefined": "sin", "args": [{"symbol": "x"}]}, "no custom operator"),
    ({"symbol": "y"}, "none of the file's features"),
    ({"node": "sin", "args": [{"symbol": "x"}], "extra": 1}, "not an object of a known form"),
])
def test_a_formulas_json_is_bounded_and_refused_quickly(node, message):
    start = time.perf_counter()
    with pytest.raises(BadFormula, match=message):
        from_json(node, ["x"], ["sin", "exp"])
    assert time.perf_counter() - start < 1.0


def test_nesting_is_bounded_where_sympy_prints_it_still():
    deep = {"symbol": "x"}
    for _ in range(100):
        deep = {"node": "sin", "args": [deep]}
    assert str(from_json(deep, ["x"], ["sin"])).count("sin") == 100
    with pytest.raises(BadFormula, match="nests more than 100"):
        from_json({"node": "sin", "args": [deep]}, ["x"], ["sin"])


def test_formulas_round_trip_through_json():
    x, y = sympy.symbols("x y")
    for expr in (sympy.Float(0.1) * x**sympy.Rational(3, 2) - sympy.pi * sympy.exp(-y),
                 sympy.Abs(x - 1) / (2 * y), sympy.Max(x, y), sympy.Float("1e-300") + x):
        assert from_json(to_json(expr), ["x", "y"], ["exp", "Abs", "Max"]) == expr
