"""Benchmark problems: Nguyen-1…12, Constant-1…8, a Feynman development sample, user files.

A :class:`Problem` holds a ground-truth SymPy formula and, for each variable, a
uniform sampling range. :meth:`Problem.sample` draws a training set and a
noiseless test set from the same specification with a seed, and adds SRBench's
noise to the training targets: ``y += N(0, γ·sqrt(mean(y²)))``.

A :class:`TableProblem` is a dataset read from a file in SRBench/PMLB format
(``.tsv``, ``.tsv.gz``, ``.csv``, ``.csv.gz`` with a ``target`` column), with an
optional ground-truth formula; :meth:`TableProblem.sample` makes SRBench's
seeded 75/25 train/test split, keeps at most 10,000 training rows and adds the
same noise. Both return a :class:`Dataset`.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import sympy

__all__ = [
    "Problem",
    "TableProblem",
    "Dataset",
    "SUITES",
    "get_suite",
    "get_problem",
    "add_noise",
    "read_table",
    "load_dataset",
]


@dataclass(frozen=True)
class Dataset:
    """Training and test data of one (problem, seed, noise).

    ``truth`` is the ground-truth formula in ``sympy.Symbol(name)`` of the
    ``feature_names``, or None when it is unknown; ``units`` and
    ``target_units`` are the variables' physical units (pint strings), when known.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple[str, ...]
    name: str = ""
    truth: sympy.Expr | None = None
    units: tuple[str, ...] | None = None
    target_units: str | None = None


def add_noise(y: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """SRBench's target noise: ``y + N(0, γ·sqrt(mean(y²)))`` with γ = ``noise``."""
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}.")
    if not noise:
        return y
    return y + rng.normal(0.0, noise * np.sqrt(np.mean(y**2)), len(y))


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
    units, target_units : tuple of str and str, or None
        Physical units of the variables and of the target (pint strings), when known.
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
    units: tuple[str, ...] | None = None
    target_units: str | None = None

    @property
    def suite(self) -> str:
        """The suite a built-in problem belongs to: "nguyen", "constant" or "feynman"."""
        return self.name.split("-", 1)[0].lower()

    @property
    def symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(sympy.Symbol(v) for v in self.variables)

    @property
    def expression(self) -> sympy.Expr:
        return _parse_formula(self.formula, self.variables)

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
        X_train = self._draw(rng, self.n_train if n_train is None else n_train)
        X_test = self._draw(rng, self.n_test if n_test is None else n_test)
        y_train = self.evaluate(X_train)
        y_test = self.evaluate(X_test)
        # the noise is drawn last, so every γ shares the same X for a seed
        y_train = add_noise(y_train, noise, rng)
        return Dataset(X_train, y_train, X_test, y_test, self.variables, self.name, self.expression,
                       self.units, self.target_units)


def _parse_formula(formula: str, variables: tuple[str, ...]) -> sympy.Expr:
    """Parse ``formula`` with each variable as a plain ``Symbol`` (even "E", "S", "beta")."""
    local = {"arcsin": sympy.asin, "ln": sympy.log, "pi": sympy.pi}
    local.update({v: sympy.Symbol(v) for v in variables})
    try:
        expr = sympy.sympify(formula, locals=local)
    except (sympy.SympifyError, SyntaxError, TypeError) as err:
        raise ValueError(f"Cannot parse the formula {formula!r}: {err}") from None
    unknown = {str(s) for s in expr.free_symbols} - set(variables)
    if unknown:
        raise ValueError(
            f"The formula {formula!r} uses {sorted(unknown)}, "
            f"which are not columns {list(variables)}."
        )
    return expr


# ------------------------------------------------------------------ user data
_EXTENSIONS = (".tsv.gz", ".csv.gz", ".tsv", ".csv", ".txt.gz", ".txt")


def _stem(path: Path) -> str:
    name = path.name
    for ext in _EXTENSIONS:
        if name.lower().endswith(ext):
            return name[: -len(ext)]
    return path.stem


def read_table(
    path: str | Path, target: str = "target"
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Read a PMLB/SRBench table: ``(X, y, feature_names)``.

    Tab-separated for ``.tsv[.gz]`` (PMLB's format), comma-separated for
    ``.csv[.gz]``, sniffed otherwise; gzip by the ``.gz`` suffix. Every column
    but ``target`` is a feature; all values must be finite numbers.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", newline="") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot be read ({err})") from None
    lower = path.name.lower()
    if ".tsv" in lower:
        delimiter = "\t"
    elif ".csv" in lower:
        delimiter = ","
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",\t; ").delimiter
        except csv.Error:
            delimiter = ","
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]
    if len(rows) < 2:
        raise ValueError(f"{path}: needs a header line and at least one data row")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise ValueError(f"{path}: no column {target!r}; columns are {header}")
    if len(set(header)) != len(header):
        raise ValueError(f"{path}: duplicate column names in {header}")
    try:
        values = np.array([[float(v) for v in r] for r in rows[1:]], dtype=np.float64)
    except ValueError as err:
        raise ValueError(
            f"{path}: non-numeric value ({err}); encode or drop such columns"
        ) from None
    if values.ndim != 2 or values.shape[1] != len(header):
        raise ValueError(f"{path}: rows do not all have {len(header)} fields")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{path}: NaN or infinite values; clean or drop them")
    j = header.index(target)
    names = tuple(h for i, h in enumerate(header) if i != j)
    if not names:
        raise ValueError(f"{path}: no feature columns besides {target!r}")
    return np.delete(values, j, axis=1), values[:, j], names


@dataclass(frozen=True, eq=False)
class TableProblem:
    """A dataset from a file, split and noised SRBench's way on every :meth:`sample`.

    Parameters
    ----------
    name : str
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    variables : tuple of str
        Column names of ``X``.
    formula : str or None
        Ground truth in SymPy syntax in the column names, if known.
    test_size : float, default=0.25
        Fraction of rows held out for testing (SRBench: 0.25).
    max_train_samples : int or None, default=10000
        At most this many training rows are kept (SRBench: 10,000).
    suite : str, default="file"
    binary_operators, unary_operators, use_constants
        Operator set offered to the methods (default: the paper's SRBench set).

    The data arrays travel with the problem, so a task can run on a machine
    that cannot see the file (a Dask cluster).
    """

    name: str
    X: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    variables: tuple[str, ...]
    formula: str | None = None
    test_size: float = 0.25
    max_train_samples: int | None = 10_000
    suite: str = "file"
    binary_operators: tuple[str, ...] = ("add", "sub", "mul", "div", "pow")
    unary_operators: tuple[str, ...] = ("sin", "cos", "log", "sqrt", "exp")
    use_constants: bool = True

    def __post_init__(self):
        if not 0 < self.test_size < 1:
            raise ValueError(f"test_size must be in (0, 1), got {self.test_size}.")
        if self.max_train_samples is not None and self.max_train_samples < 1:
            raise ValueError(
                f"max_train_samples must be >= 1 or None, got {self.max_train_samples}."
            )
        if len(self.X) < 2:
            raise ValueError(f"{self.name}: at least 2 rows are needed for a train/test split.")
        if self.formula is not None:
            self.expression  # noqa: B018 - fail early on a bad formula

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        target: str = "target",
        formula: str | None = None,
        name: str | None = None,
        **kwargs,
    ) -> "TableProblem":
        """Read ``path`` (see :func:`read_table`).

        ``name`` defaults to the file name without suffixes.
        """
        X, y, names = read_table(path, target)
        return cls(name or _stem(Path(path)), X, y, names, formula, **kwargs)

    @property
    def symbols(self) -> tuple[sympy.Symbol, ...]:
        return tuple(sympy.Symbol(v) for v in self.variables)

    @property
    def expression(self) -> sympy.Expr | None:
        return None if self.formula is None else _parse_formula(self.formula, self.variables)

    def sample(self, seed: int = 0, noise: float = 0.0) -> Dataset:
        """SRBench's split: seeded shuffle, ``test_size`` held out, training rows capped.

        Noise is added to the training targets only.
        """
        from sklearn.model_selection import train_test_split

        X_train, X_test, y_train, y_test = train_test_split(
            self.X, self.y, test_size=self.test_size, random_state=seed
        )
        rng = np.random.default_rng(seed)
        if self.max_train_samples is not None and len(y_train) > self.max_train_samples:
            keep = np.sort(rng.choice(len(y_train), self.max_train_samples, replace=False))
            X_train, y_train = X_train[keep], y_train[keep]
        y_train = add_noise(y_train, noise, rng)
        return Dataset(X_train, y_train, X_test, y_test, self.variables, self.name, self.expression)


def load_dataset(
    path: str | Path,
    target: str = "target",
    formula: str | None = None,
    seed: int = 0,
    noise: float = 0.0,
    test_size: float = 0.25,
    max_train_samples: int | None = 10_000,
) -> Dataset:
    """Read a PMLB/SRBench file and return SRBench's seeded train/test split as a :class:`Dataset`.

    Parameters
    ----------
    path : str or Path
        ``.tsv``, ``.tsv.gz``, ``.csv`` or ``.csv.gz`` with a header line.
    target : str, default="target"
        The column to predict.
    formula : str, optional
        Ground truth in SymPy syntax, in the column names.
    seed : int, default=0
        Seed of the split, of the training-row cap and of the noise.
    noise : float, default=0
        SRBench's γ: ``y_train += N(0, γ·sqrt(mean(y_train²)))``; the test set stays noiseless.
    test_size : float, default=0.25
    max_train_samples : int or None, default=10000
    """
    problem = TableProblem.from_file(
        path, target, formula, test_size=test_size, max_train_samples=max_train_samples
    )
    return problem.sample(seed=seed, noise=noise)


# ------------------------------------------------------------- built-in suites
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


def _feynman_units() -> dict[str, str]:
    """Units of every AI-Feynman variable as a pint string, from the units table
    (exponents of m, s, kg, kelvin and volt; the table's T is kelvin)."""
    text = resources.files(__package__).joinpath("data/feynman_units.csv").read_text()
    symbols = {"m": "m", "s": "s", "kg": "kg", "T": "K", "V": "V"}
    units = {}
    for row in csv.DictReader(text.splitlines()):
        if row["Variable"]:
            units[row["Variable"]] = "*".join(
                f"{symbol}**{float(row[column]):g}" for column, symbol in symbols.items()
                if float(row[column])) or "1"
    return units


#: The unary operators the laws of the AI-Feynman database are written with: the paper's
#: SRBench five, ``asin`` (I.26.2, I.30.5) and ``tanh`` (II.35.21). Without the last two,
#: three of the development sample's twenty laws cannot be written at all.
FEYNMAN_UNARY_OPERATORS = ("sin", "cos", "log", "sqrt", "exp", "asin", "tanh")


def _feynman() -> tuple[Problem, ...]:
    text = resources.files(__package__).joinpath("data/feynman_dev.csv").read_text()
    units = _feynman_units()
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
                unary_operators=FEYNMAN_UNARY_OPERATORS,
                use_constants=True,
                units=(tuple(units[v] for v in variables)
                       if all(v in units for v in variables) else None),
                target_units=units.get(row["Output"]),
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
