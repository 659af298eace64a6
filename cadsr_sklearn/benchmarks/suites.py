"""Benchmark problems: Nguyen-1…12, Constant-1…8 and a Feynman development sample.

A :class:`Problem` holds a ground-truth SymPy formula and, for each variable, a
uniform sampling range. :meth:`Problem.sample` draws a training set and a
noiseless test set from the same specification with a seed, and adds SRBench's
noise to the training targets: ``y += N(0, γ·sqrt(mean(y²)))``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np
import sympy

__all__ = ["Problem", "Dataset", "SUITES", "get_suite", "get_problem"]


@dataclass(frozen=True)
class Dataset:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple[str, ...]


@dataclass(frozen=True)
class Problem:
    """A benchmark problem.

    Parameters
    ----------
    name : str
        E.g. ``"Nguyen-1"``.
    formula : str
        Ground truth in SymPy syntax, in the names of ``variables``.
    variables : tuple of str
    ranges : tuple of (low, high)
        Uniform sampling range of each variable.
    n_train, n_test : int
        Rows of the training and test sets.
    binary_operators, unary_operators : tuple of str
        The operator set the suite is defined with.
    use_constants : bool
        Whether the suite's token set includes the constant token.
    """

    name: str
    formula: str
    variables: tuple[str, ...]
    ranges: tuple[tuple[float, float], ...]
    n_train: int = 20
    n_test: int = 1000
    binary_operators: tuple[str, ...] = ("add", "sub", "mul", "div")
    unary_operators: tuple[str, ...] = ("sin", "cos", "exp", "log")
    use_constants: bool = False

    @property
    def symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(sympy.Symbol(v) for v in self.variables)

    @property
    def expression(self) -> sympy.Expr:
        local = {v: s for v, s in zip(self.variables, self.symbols)}
        local.update({"arcsin": sympy.asin, "ln": sympy.log, "pi": sympy.pi})
        return sympy.sympify(self.formula, locals=local)

    def evaluate(self, X: np.ndarray) -> np.ndarray:
        f = sympy.lambdify(self.symbols, self.expression, "numpy")
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(*X.T), dtype=np.float64), (len(X),)).copy()

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.column_stack([rng.uniform(lo, hi, n) for lo, hi in self.ranges])

    def sample(self, seed: int = 0, noise: float = 0.0, n_train: int | None = None,
               n_test: int | None = None) -> Dataset:
        """Training and test data; ``noise`` is SRBench's γ (0, 0.001, 0.01, 0.1)."""
        rng = np.random.default_rng(seed)
        X_train = self._draw(rng, n_train or self.n_train)
        X_test = self._draw(rng, n_test or self.n_test)
        y_train = self.evaluate(X_train)
        y_test = self.evaluate(X_test)
        if noise:
            y_train = y_train + rng.normal(0.0, noise * np.sqrt(np.mean(y_train**2)), len(y_train))
        return Dataset(X_train, y_train, X_test, y_test, self.variables)


def _koza(name, formula, n_vars, lo, hi, constants=False):
    variables = ("x",) if n_vars == 1 else ("x1", "x2")
    return Problem(name, formula, variables, ((lo, hi),) * n_vars, use_constants=constants)


NGUYEN = tuple(
    _koza(f"Nguyen-{i}", f, n, lo, hi)
    for i, (f, n, lo, hi) in enumerate(
        [
            ("x**3 + x**2 + x", 1, -1, 1),
            ("x**4 + x**3 + x**2 + x", 1, -1, 1),
            ("x**5 + x**4 + x**3 + x**2 + x", 1, -1, 1),
            ("x**6 + x**5 + x**4 + x**3 + x**2 + x", 1, -1, 1),
            ("sin(x**2)*cos(x) - 1", 1, -1, 1),
            ("sin(x) + sin(x + x**2)", 1, -1, 1),
            ("log(x + 1) + log(x**2 + 1)", 1, 0, 2),
            ("sqrt(x)", 1, 0, 4),
            ("sin(x1) + sin(x2**2)", 2, 0, 1),
            ("2*sin(x1)*cos(x2)", 2, 0, 1),
            ("x1**x2", 2, 0, 1),
            ("x1**4 - x1**3 + x2**2/2 - x2", 2, 0, 1),
        ],
        start=1,
    )
)

CONSTANT = tuple(
    _koza(f"Constant-{i}", f, n, lo, hi, constants=True)
    for i, (f, n, lo, hi) in enumerate(
        [
            ("3.39*x**3 + 2.12*x**2 + 1.78*x", 1, -1, 1),
            ("sin(x**2)*cos(x) - 0.75", 1, -1, 1),
            ("sin(1.5*x1)*cos(0.5*x2)", 2, 0, 1),
            ("2.7*x1**x2", 2, 0, 1),
            ("sqrt(1.23*x)", 1, 0, 4),
            ("x**0.426", 1, 0, 4),
            ("2*sin(1.3*x1)*cos(x2)", 2, 0, 1),
            ("log(x + 1.4) + log(x**2 + 1.3)", 1, 0, 2),
        ],
        start=1,
    )
)


def _feynman() -> tuple[Problem, ...]:
    text = resources.files(__package__).joinpath("data/feynman_dev.csv").read_text()
    problems = []
    for row in csv.DictReader(text.splitlines()):
        # Trust the variable columns, not "# variables": the AI-Feynman table
        # undercounts III.10.19 (3 listed, 4 used).
        n = max(i for i in range(1, 11) if row.get(f"v{i}_name"))
        variables = tuple(row[f"v{i}_name"] for i in range(1, n + 1))
        ranges = tuple(
            (float(row[f"v{i}_low"]), float(row[f"v{i}_high"])) for i in range(1, n + 1)
        )
        problems.append(
            Problem(
                f"Feynman-{row['Filename']}",
                row["Formula"],
                variables,
                ranges,
                n_train=1000,
                n_test=1000,
                binary_operators=("add", "sub", "mul", "div", "pow"),
                unary_operators=("sin", "cos", "log", "sqrt", "exp"),
                use_constants=True,
            )
        )
    for problem in problems:
        unknown = problem.expression.free_symbols - set(problem.symbols)
        if unknown:  # pragma: no cover - guards the shipped data file
            raise ValueError(f"{problem.name}: formula uses undeclared {unknown}.")
    return tuple(problems)


SUITES: dict[str, tuple[Problem, ...]] = {
    "nguyen": NGUYEN,
    "constant": CONSTANT,
    "feynman": _feynman(),
}


def get_suite(name: str) -> tuple[Problem, ...]:
    """Problems of a built-in suite: "nguyen", "constant" or "feynman"."""
    try:
        return SUITES[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown suite {name!r}; choose from {sorted(SUITES)}.") from None


def get_problem(name: str) -> Problem:
    """A built-in problem by name, e.g. ``"Nguyen-7"``."""
    for suite in SUITES.values():
        for problem in suite:
            if problem.name.lower() == name.lower():
                return problem
    raise ValueError(f"Unknown problem {name!r}.")
