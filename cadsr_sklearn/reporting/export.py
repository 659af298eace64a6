"""Take a formula anywhere: NumPy, PyTorch, JAX, Python source and C source.

Every export is the token tree that :meth:`~cadsr_sklearn.CADSRRegressor.predict`
evaluates, written out node by node in the same order of operations as the
compiled interpreter (:func:`cadsr_sklearn.expressions.operations.apply`), with each constant
at full float64 precision (``repr``: it reads back as the same double). The
semantics are the interpreter's plain IEEE ones: ``log`` of a negative number,
``sqrt`` of one and ``asin`` or ``acos`` beyond ±1 are NaN, ``1/0`` is inf, a
negative base to a non-integer power is NaN, and no warning is raised. So every
export agrees with ``predict`` to round-off (the math libraries may differ in the
last bit of ``sin`` or ``exp``), with one difference kept on purpose: ``predict``
reports every non-finite value as NaN ("undefined here"), while an export returns
the value the arithmetic gives, inf included, as the code it is pasted into would
compute it.

One code generator (:func:`_infix`) writes the tree for every target; a
:class:`_Dialect` says how each target spells the operators, the variables and
the constants. The NumPy callable is the Python source, compiled.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from ..expressions import opcodes
from ..expressions.expression import Expression
from ..front.fitted import FittedFront

__all__ = ["TARGETS", "export", "export_row", "FormulaModule", "FormulaUnits", "to_numpy",
           "to_torch", "to_jax", "to_python_source", "to_c_source"]

#: What :meth:`~cadsr_sklearn.CADSRRegressor.export` can write.
TARGETS = ("numpy", "torch", "jax", "python", "c")



@dataclass(frozen=True)
class FormulaUnits:
    """The physical units an export states, so that none drops them silently: each
    feature's as the user wrote them, and the formula's
    (:func:`~cadsr_sklearn.units.check.describe_units`)."""

    features: tuple[str, ...]
    formula: str

    def columns(self, names: Sequence[str]) -> list[str]:
        """``["a [au]", …]``: each feature's name with its units."""
        return [f"{name} [{unit}]" for name, unit in zip(names, self.features)]

    def comment(self) -> str:
        return f"units: y in {self.formula}"


_FUNCTIONS = ("sin", "cos", "tan", "log", "sqrt", "exp", "tanh", "sinh", "cosh")
# NumPy's names of the inverse functions (before NumPy 2 its only ones), which PyTorch and
# JAX take too; C's are the tokens' own.
_ARC = {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}
# Powers as the interpreter computes them (a·a, a·a·a), not as pow(a, 2) rounds them.
_PYTHON_HELPERS = {"_square": "def _square(a):\n    return a * a\n",
                   "_cube": "def _cube(a):\n    return a * a * a\n"}
_C_HELPERS = {"cadsr_square": "static double cadsr_square(double a) { return a * a; }\n",
              "cadsr_cube": "static double cadsr_cube(double a) { return a * a * a; }\n"}


@dataclass(frozen=True)
class _Dialect:
    """How one target writes a tree: operators, variables, constants and the literal 1."""

    module: str  # prefix of the elementary functions ("np.", "torch.", "" for C)
    variable: Callable[[int, str], str]  # (column, name) -> text
    constant: Callable[[int, float], str]  # (BFS number, value) -> text
    one: str
    overrides: dict[str, str] = field(default_factory=dict)
    custom: bool = False  # a custom operator calls its own function, _custom_<name>(…)

    def template(self, name: str) -> str:
        if name in self.overrides:
            return self.overrides[name]
        if name in _FUNCTIONS:
            return f"{self.module}{name}({{0}})"
        if name in _ARC:
            return f"{self.module}{_ARC[name]}({{0}})"
        return {
            "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
            "div": "({0} / {1})", "pow": "({0} ** {1})", "neg": "(-{0})",
            "inv": "(1.0 / {0})", "square": "_square({0})", "cube": "_cube({0})",
            "abs": f"{self.module}abs({{0}})",
        }[name]


def _infix(expression: Expression, dialect: _Dialect, names: Sequence[str]) -> str:
    """The tree as one expression in ``dialect``, children before parents, as evaluated."""
    library = expression.library
    constant_number = {}
    for i, token in enumerate(expression.tokens):
        if token == library.const_id:
            constant_number[i] = len(constant_number)
    text: list[str] = [""] * len(expression.tokens)
    for i in range(len(expression.tokens) - 1, -1, -1):  # BFS: children come after parents
        token = library[expression.tokens[i]]
        if token.kind == "variable":
            text[i] = dialect.variable(token.feature, names[token.feature])
        elif token.kind == "constant":
            k = constant_number[i]
            text[i] = dialect.constant(k, float(expression.constants[k]))
        elif token.kind == "one":
            text[i] = dialect.one
        elif token.opcode >= opcodes.CUSTOM_UNARY:
            if not dialect.custom:
                raise ValueError(f"The formula uses the custom operator {token.name!r}, which "
                                 "is defined by its Python function only: export it with "
                                 "export('numpy').")
            text[i] = f"_custom_{token.name}({', '.join(text[c] for c in expression.children(i))})"
        else:
            text[i] = dialect.template(token.name).format(
                *(text[c] for c in expression.children(i)))
    return text[0]


def _python_literal(value: float) -> str:
    """A float64 as Python text that reads back as the same double, inf and NaN included."""
    return repr(value) if np.isfinite(value) else f"float({str(value)!r})"


def _c_literal(value: float) -> str:
    """A float64 as C99 text that reads back as the same double (math.h's INFINITY, NAN)."""
    if np.isnan(value):
        return "NAN"
    if np.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    return f"({value!r})"


def _helpers(body: str, helpers: dict[str, str], separator: str) -> str:
    """The definitions of the helper functions ``body`` calls, and only those."""
    return "".join(code + separator for name, code in helpers.items() if f"{name}(" in body)


def _names(expression: Expression, feature_names: Sequence[str] | None,
           reserved: set[str]) -> list[str]:
    """A Python name per feature: its own where that is an identifier not taken, else x{i}."""
    n = expression.library.n_features
    given = list(feature_names) if feature_names is not None else [f"x{i}" for i in range(n)]
    if len(given) != n:
        raise ValueError(f"Expected {n} feature names, got {len(given)}.")
    names = []
    for i, name in enumerate(given):
        ok = (str(name).isidentifier() and not keyword.iskeyword(name) and name not in reserved
              and name not in names)
        names.append(str(name) if ok else f"x{i}")
    return names


def _python_dialect(module: str) -> _Dialect:
    return _Dialect(module=module, variable=lambda i, name: name,
                    constant=lambda k, v: f"c[{k}]", one="one")


def _python_function(expression: Expression, feature_names, module: str, header: str,
                     one: str, units: FormulaUnits | None = None) -> str:
    """``def formula(X, c)`` in ``module`` ("np", "torch" or "jnp"): y at the rows of X."""
    reserved = {"X", "c", "y", "one", "np", "torch", "jnp", "formula", "_square", "_cube"}
    names = _names(expression, feature_names, reserved)
    body = _infix(expression, _python_dialect(f"{module}."), names)
    columns = "".join(f"    {name} = X[:, {i}]{_unit_comment(units, i)}\n"
                      for i, name in enumerate(names))
    stated = "" if units is None else f"# {units.comment()}\n"
    return (f"{header}\n\n\n{_helpers(body, _PYTHON_HELPERS, chr(10) * 2)}{stated}"
            f"def formula(X, c):\n    one = {one}\n{columns}    return {body}\n")


def _unit_comment(units: FormulaUnits | None, i: int) -> str:
    return "" if units is None else f"  # {units.features[i]}"


def to_python_source(expression: Expression, feature_names: Sequence[str] | None = None, *,
                     units: FormulaUnits | None = None) -> str:
    """Self-contained Python source: ``formula(X)`` with NumPy, X of shape (n, n_features).

    The constants are written out at full precision; no warning is raised
    where the formula is undefined (NaN) or infinite. With ``units`` its
    docstrings state each column's units and the formula's. A formula with a
    custom operator has no self-contained source (its function is the user's
    code): ValueError; :func:`to_numpy` exports it.
    """
    return _python_source(expression, feature_names, custom=False, units=units)


def _python_source(expression: Expression, feature_names: Sequence[str] | None,
                   custom: bool, units: FormulaUnits | None = None) -> str:
    """:func:`to_python_source`; with ``custom``, custom operators call ``_custom_<name>``,
    which the caller puts in the namespace the source runs in."""
    reserved = {"X", "y", "np", "formula", "_square", "_cube"}
    names = _names(expression, feature_names, reserved)
    constants = ", ".join(_python_literal(float(v)) for v in expression.constants)
    dialect = _Dialect(module="np.", variable=lambda i, name: name,
                       constant=lambda k, v: f"np.float64({_python_literal(v)})",
                       one="np.float64(1.0)",
                       custom=custom)
    body = _infix(expression, dialect, names)
    columns = "".join(f"    {name} = X[:, {i}]\n" for i, name in enumerate(names))
    used = ", ".join(names if units is None else units.columns(names))
    stated = "" if units is None else f"\n\n{units.comment()}"
    return (
        f'"""{expression.to_sympy(names)}{stated}"""\n\nimport numpy as np\n\n\n'
        f"{_helpers(body, _PYTHON_HELPERS, chr(10) * 2)}"
        f"def formula(X):\n"
        f'    """y at the rows of X, of shape (n, {len(names)}): columns {used}.'
        f'{"" if units is None else f"; {units.comment()}"}'
        f'\n\n    Constants (BFS order): [{constants}].\n    """\n'
        f"    X = np.asarray(X, dtype=np.float64)\n{columns}"
        f'    with np.errstate(all="ignore"):\n'
        f"        y = {body}\n"
        f"    return np.array(np.broadcast_to(y, (X.shape[0],)), dtype=np.float64)\n"
    )


def to_numpy(expression: Expression, feature_names: Sequence[str] | None = None, *,
             units: FormulaUnits | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """A NumPy function ``f(X) -> y``: the Python source of :func:`to_python_source`,
    compiled; its ``units`` attribute is ``units`` (None without)."""
    source = _python_source(expression, feature_names, custom=True, units=units)
    namespace: dict = {f"_custom_{op.name}": op.function
                       for op in expression.library.custom_operators}
    exec(compile(source, "<cadsr formula>", "exec"), namespace)  # our own generated source
    function = namespace["formula"]
    function.source, function.units = source, units
    return function


def to_torch(expression: Expression, feature_names: Sequence[str] | None = None, *,
             units: FormulaUnits | None = None) -> "FormulaModule":
    """A :class:`torch.nn.Module` whose ``forward(X)`` is the formula, constants trainable.

    See :class:`FormulaModule`.
    """
    source = _python_function(expression, feature_names, "torch", "import torch",
                              "torch.ones((), dtype=X.dtype, device=X.device)", units)
    namespace: dict = {}
    exec(compile(source, "<cadsr formula>", "exec"), namespace)  # our own generated source
    module = FormulaModule(namespace["formula"], expression, source)
    module.units = units
    return module


class FormulaModule(torch.nn.Module):
    """A formula as a PyTorch module: ``forward(X)`` (n, n_features) → (n,).

    The fitted constants are one trainable float64 parameter vector,
    ``constants``; constants fixed to simple numbers by snapping are a buffer,
    ``fixed_constants``, and are not trained. ``all_constants()`` is every
    constant of the tree in BFS order. Move it with ``.to(device)``; ``source``
    is the generated ``forward`` code; ``units`` the :class:`FormulaUnits` of a
    fit with units (None without).
    """

    units: FormulaUnits | None = None

    def __init__(self, function: Callable, expression: Expression, source: str) -> None:
        super().__init__()
        values = torch.as_tensor(np.asarray(expression.constants), dtype=torch.float64)
        fixed = np.asarray(expression.fixed, dtype=bool)
        self.constants = torch.nn.Parameter(values[~fixed].clone())
        self.register_buffer("fixed_constants", values[fixed].clone())
        self.register_buffer("fitted_index", torch.as_tensor(np.flatnonzero(~fixed)))
        self.register_buffer("fixed_index", torch.as_tensor(np.flatnonzero(fixed)))
        self._function, self.source = function, source

    def all_constants(self) -> torch.Tensor:
        c = self.constants.new_zeros(len(self.fitted_index) + len(self.fixed_index))
        c = c.index_copy(0, self.fitted_index, self.constants)
        return c.index_copy(0, self.fixed_index, self.fixed_constants.to(c.dtype))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        y = self._function(X, self.all_constants().to(X.dtype))
        return torch.broadcast_to(y, (X.shape[0],))


def to_jax(expression: Expression, feature_names: Sequence[str] | None = None, *,
           units: FormulaUnits | None = None):
    """A JAX function ``f(X, constants=fitted) -> y``, jit- and grad-able in ``constants``.

    JAX computes in float32 unless ``jax.config.update("jax_enable_x64", True)``
    is set before use; with it, the function agrees with ``predict`` to
    round-off. Needs the optional ``jax`` package (``pip install jax``).
    """
    try:
        import jax.numpy as jnp
    except ImportError as err:
        raise ImportError("Exporting to JAX needs JAX: pip install 'cadsr-sklearn[jax]' "
                          "(or pip install jax).") from err
    source = _python_function(expression, feature_names, "jnp", "import jax.numpy as jnp",
                              "jnp.ones((), dtype=X.dtype)", units)
    namespace: dict = {}
    exec(compile(source, "<cadsr formula>", "exec"), namespace)
    inner = namespace["formula"]
    fitted = np.asarray(expression.constants, dtype=np.float64)

    def formula(X, constants=fitted):
        X = jnp.asarray(X)
        return jnp.broadcast_to(inner(X, jnp.asarray(constants, dtype=X.dtype)), (X.shape[0],))

    formula.source, formula.units = source, units
    return formula


def to_c_source(expression: Expression, feature_names: Sequence[str] | None = None,
                function_name: str = "formula", *, units: FormulaUnits | None = None) -> str:
    """C99 source of ``double formula(const double *x)``, one row's features in, y out.

    Uses ``<math.h>`` (link with ``-lm``); compile without ``-ffast-math``,
    which would break the NaN and inf semantics. ``x[i]`` is feature ``i``;
    the names (and with ``units``, each one's units and the formula's) are in
    a comment.
    """
    if not function_name.isidentifier():
        raise ValueError(f"function_name must be a C identifier, got {function_name!r}.")
    n = expression.library.n_features
    names = list(feature_names) if feature_names is not None else [f"x{i}" for i in range(n)]
    dialect = _Dialect(
        module="", variable=lambda i, name: f"x[{i}]",
        constant=lambda k, v: _c_literal(v), one="1.0",
        overrides={"pow": "pow({0}, {1})", "abs": "fabs({0})",
                   "square": "cadsr_square({0})", "cube": "cadsr_cube({0})",
                   **{name: f"{name}({{0}})" for name in _ARC}},
    )
    body = _infix(expression, dialect, names)
    helpers = _helpers(body, _C_HELPERS, "")
    shown = names if units is None else units.columns(names)
    legend = ", ".join(f"x[{i}] = {name}" for i, name in enumerate(shown)).replace("*/", "* /")
    formula = str(expression.to_sympy(names)).replace("*/", "* /")
    stated = "" if units is None else f"/* {units.comment().replace('*/', '* /')} */\n"
    return (
        f"/* {formula} */\n{stated}"
        "#include <math.h>\n\n"
        f"{helpers}{chr(10) if helpers else ''}"
        f"/* {legend} */\n"
        f"double {function_name}(const double *x)\n{{\n"
        "    (void)x;\n"
        f"    return {body};\n}}\n"
    )


def export_row(front: FittedFront, target: str, index: int | None = None):
    """Row ``index`` of a fitted ``front`` (the chosen one when None) as ``target``, in the
    features' symbols, stating its units in a fit with units: the estimator's ``export``."""
    row = front.row(index)
    units = None if front.data_units is None else FormulaUnits(
        front.data_units.feature_labels, front.units(row))
    return export(row.expression, front.symbols, target, units=units)


def export(expression: Expression, feature_names: Sequence[str] | None, target: str, *,
           units: FormulaUnits | None = None):
    """``expression`` as ``target``, one of :data:`TARGETS`: its function above."""
    exporters = {"numpy": to_numpy, "torch": to_torch, "jax": to_jax,
                 "python": to_python_source, "c": to_c_source}
    if target not in exporters:
        raise ValueError(f"target must be one of {list(TARGETS)}, got {target!r}.")
    return exporters[target](expression, feature_names, units=units)
