"""Operators of your own: a NumPy function, its derivative, a SymPy form and a display form.

``register_operator("gauss", lambda a: np.exp(-a * a), lambda a: -2 * a * np.exp(-a * a),
sympy_function=lambda a: sympy.exp(-a**2))`` makes ``"gauss"`` usable by name in
``unary_operators`` (a derivative given as a pair of functions makes a binary
operator). An :class:`Operator` can also be passed in the operator lists
directly. Registration checks the operator on a probe grid: the function keeps
the shape of its input and is finite on most of the grid, the derivative agrees
with central finite differences, and the SymPy form computes what the function
computes (so that displayed formulas mean what is predicted).

The operator then runs where the built-in ones do, in the compiled kernels of
:mod:`.program`: numba compiles the function and its derivative(s) on numbers
(``float64`` in, ``float64`` out) to C functions, whose addresses the kernels
receive in the library's operator table (:func:`.program.operator_table`).
Evaluation, the Jacobian and the Levenberg–Marquardt fit all call those same
functions, so what is fitted is what is predicted. Numbers the compiled
functions give must agree with the NumPy ones on the probe grid (to round-off).

A function numba cannot compile (one calling SciPy, say) or whose compiled
form computes something else still works, on the slower NumPy path of this
module: a formula holding such an operator is evaluated one array at a time
(every other node by the compiled :func:`.program.apply_rows`), its Jacobian by
reverse mode through the same derivatives, and its constants fitted by SciPy's
Levenberg–Marquardt from the constant fitter's starting points.
:attr:`Operator.compiled` tells which path an operator takes. A scalar function
numba compiles but NumPy cannot apply to arrays (``math.erf``) can be given as
``numba.vectorize(["float64(float64)"])(function)``, which works in both.

A fitted model carries its operators' definitions: pickles hold the functions
by value (with cloudpickle, which comes with joblib), and numba compiles them
again where the model is loaded, so a model saved in one process predicts in
another where the operator was never registered. Refitting there needs it
registered again (or the :class:`Operator` in the parameters).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import math
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numba
import numpy as np
import sympy
from scipy.optimize import least_squares

from . import program

__all__ = ["Operator", "register_operator", "registered_operator", "unregister_operator"]

logger = logging.getLogger(__name__)

_PROBE = np.linspace(-3.0, 3.0, 121) + 0.0123  # off the integers and 0, where many ops break
_REGISTRY: dict[str, "Operator"] = {}
_C_SIGNATURE = "float64(float64, float64)"  # every function, unary ones ignoring b


@dataclass(frozen=True)
class CompiledOperator:
    """An operator's functions compiled by numba to C functions ``double f(double, double)``."""

    functions: tuple  # numba cfunc objects: they hold the code the addresses point to
    row: tuple[int, int, int]  # its row of the operator table: value, ∂/∂a, ∂/∂b (0: none)


@dataclass(frozen=True, eq=False)
class Operator:
    """A user-defined operator (see :func:`register_operator`).

    Parameters
    ----------
    name : str
        The name used in ``unary_operators``/``binary_operators``.
    function : callable
        ``f(a)`` or ``f(a, b)`` on float64 arrays, elementwise, NaN where undefined.
    derivative : callable or (callable, callable)
        ``f'(a)`` for a unary operator; ``(∂f/∂a, ∂f/∂b)`` for a binary one.
    sympy_function : callable
        The SymPy form: ``sympy_function(a)`` or ``sympy_function(a, b)`` of SymPy expressions.
    display : str, optional
        A format string for readable text, e.g. ``"gauss({})"`` (the default: the name
        applied to the arguments).

    Notes
    -----
    :attr:`compiled` holds the functions numba compiled for the kernels, or None for an
    operator on the NumPy path (see the module docstring). Copies of an operator are the
    operator itself: it is immutable, and so a ``clone`` keeps what was compiled.
    """

    name: str
    function: Callable
    derivative: Callable | tuple[Callable, Callable]
    sympy_function: Callable
    display: str | None = None

    @property
    def arity(self) -> int:
        return 2 if isinstance(self.derivative, (tuple, list)) else 1

    @property
    def display_format(self) -> str:
        if self.display is not None:
            return self.display
        return f"{self.name}({{}})" if self.arity == 1 else f"{self.name}({{}}, {{}})"

    def __eq__(self, other: object) -> bool:
        # By what the functions are, not which objects hold them: an operator read back from
        # a pickle (a checkpoint, a warm-started search) is the operator it was.
        return (isinstance(other, Operator) and self.name == other.name
                and ((self.function, self.derivative) == (other.function, other.derivative)
                     or self.fingerprint == other.fingerprint))

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the function and derivative pickled by value: equal for an operator
        and its copy read back from a pickle."""
        return hashlib.sha256(_cloudpickle().dumps((self.function, self.derivative))).hexdigest()

    def __hash__(self) -> int:
        return hash(self.name)

    def __deepcopy__(self, memo) -> "Operator":
        return self  # immutable: a copy (scikit-learn's clone) keeps the compiled functions

    @cached_property
    def compiled(self) -> CompiledOperator | None:
        """The functions compiled for the kernels, or None when the operator takes the
        NumPy path (numba cannot compile them, or they compute something else)."""
        return _compile(self)

    @property
    def table_row(self) -> tuple[int, int, int]:
        """The operator's row of :func:`.program.operator_table` (zeros on the NumPy path)."""
        return self.compiled.row if self.compiled is not None else (0, 0, 0)

    def __reduce__(self):
        # By value: the functions are often lambdas or defined in a script's __main__.
        fields = (self.name, self.function, self.derivative, self.sympy_function, self.display)
        return (_operator_from_bytes, (_cloudpickle().dumps(fields),))

    # -------------------------------------------------------------- evaluation
    def values(self, *args: np.ndarray) -> np.ndarray:
        """The function on float64 arrays ``(n,)``, as a float64 array ``(n,)``.

        Callers silence floating-point warnings (``np.errstate``) around it.
        """
        return _rows(self.function(*args), args[0].shape)

    def partials(self, *args: np.ndarray) -> list[np.ndarray]:
        """The partial derivative(s) on float64 arrays, one ``(n,)`` array per argument."""
        derivatives = self.derivative if self.arity == 2 else (self.derivative,)
        return [_rows(d(*args), args[0].shape) for d in derivatives]


def _cloudpickle():
    """cloudpickle, which pickles functions by value (a dependency of joblib since 1.5)."""
    try:
        import cloudpickle
    except ImportError:  # older joblib ships it inside
        from joblib.externals import cloudpickle
    return cloudpickle


def _rows(values, shape: tuple) -> np.ndarray:
    """A user function's result as float64 of ``shape`` (a scalar one broadcast)."""
    values = np.asarray(values, dtype=np.float64)
    return values if values.shape == shape else np.broadcast_to(values, shape)


def _operator_from_bytes(data: bytes) -> Operator:
    import pickle

    return Operator(*pickle.loads(data))


def register_operator(name: str, function: Callable,
                      derivative: Callable | tuple[Callable, Callable],
                      sympy_function: Callable, display: str | None = None) -> Operator:
    """Make a custom operator usable by name in ``unary_operators``/``binary_operators``.

    Parameters are those of :class:`Operator`. The operator is checked first
    (see the module docstring); registering a name again replaces it.

    Returns
    -------
    Operator
        The registered operator, which can also be passed in the lists directly.

    Raises
    ------
    ValueError
        When the name is taken by a built-in or is not an identifier, or a check fails.
    """
    operator = Operator(name, function, derivative, sympy_function, display)
    check_operator(operator)
    _REGISTRY[name] = operator
    return operator


def unregister_operator(name: str) -> None:
    """Forget a registered operator (fitted models keep their own copy)."""
    _REGISTRY.pop(name, None)


def registered_operator(name: str) -> Operator | None:
    """The operator registered as ``name``, or None."""
    return _REGISTRY.get(name)


def check_operator(operator: Operator) -> None:
    """Raise ValueError saying what is wrong with ``operator``, if anything."""
    from .library import BINARY_OPERATORS, UNARY_OPERATORS

    name = operator.name
    if not isinstance(name, str) or not name.isidentifier() or name in ("c",):
        raise ValueError(f"An operator's name must be a Python identifier, got {name!r}.")
    if name in BINARY_OPERATORS or name in UNARY_OPERATORS:
        raise ValueError(f"{name!r} is a built-in operator; choose another name.")
    if name.startswith("x") and name[1:].isdigit():
        raise ValueError(f"{name!r} is the name of an input variable; choose another name.")
    derivative = operator.derivative
    if isinstance(derivative, (tuple, list)) and len(derivative) != 2:
        raise ValueError(f"Operator {name!r}: give one derivative (unary) or a pair of partial "
                         f"derivatives (binary), not {len(derivative)}.")
    for f in (operator.function, operator.sympy_function,
              *(derivative if isinstance(derivative, (tuple, list)) else (derivative,))):
        if not callable(f):
            raise ValueError(f"Operator {name!r}: {f!r} is not callable.")
    args = _probe_arguments(operator.arity)
    try:
        with np.errstate(all="ignore"):
            values = np.asarray(operator.function(*args), dtype=np.float64)
            partials = operator.partials(*args) if values.shape == args[0].shape else []
    except Exception as err:  # noqa: BLE001 - the user's code: say which part failed
        raise ValueError(f"Operator {name!r} raised on float64 arrays: {err!r}.") from err
    if values.shape != args[0].shape:
        raise ValueError(f"Operator {name!r}: the function must be elementwise (arrays of shape "
                         f"{args[0].shape} in, the same out), got shape {values.shape}.")
    finite = np.isfinite(values)
    if finite.mean() < 0.5:
        raise ValueError(f"Operator {name!r} is finite at only {finite.mean():.0%} of the probe "
                         "points in [-3, 3]: it cannot fit data there.")
    _check_derivatives(operator, args, values, partials)
    _check_sympy(operator, args, values)
    operator.compiled  # compiled (or found not to compile) now, not during a search


def _compile(operator: Operator) -> CompiledOperator | None:
    """``operator``'s functions compiled by numba, if it can and they compute what the
    NumPy ones compute on the probe grid; else None (logged at info level)."""
    derivatives = operator.derivative if operator.arity == 2 else (operator.derivative,)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's own warnings: the fallback says enough
            functions = tuple(_c_function(f, operator.arity)
                              for f in (operator.function, *derivatives))
    except Exception as err:  # noqa: BLE001 - any reason numba gives means the NumPy path
        logger.info("operator %r takes the NumPy path: numba cannot compile it (%s)",
                    operator.name, err)
        return None
    addresses = [f.address for f in functions]
    compiled = CompiledOperator(functions, tuple(addresses + [0] * (3 - len(addresses))))
    if not _compiled_agrees(operator, compiled):
        logger.info("operator %r takes the NumPy path: compiled, it computes something else "
                    "than its NumPy functions", operator.name)
        return None
    return compiled


def _c_function(function: Callable, arity: int):
    """``function`` compiled to a C function of two numbers (a unary one ignores the second)."""
    if inspect.isfunction(function):  # plain Python; ufuncs and jitted ones are called as they are
        function = numba.njit(error_model="numpy")(function)
    if arity == 1:
        def both(a, b):
            return function(a)
    else:
        def both(a, b):
            return function(a, b)
    return numba.cfunc(_C_SIGNATURE, error_model="numpy")(both)


def _compiled_agrees(operator: Operator, compiled: CompiledOperator) -> bool:
    """Whether the compiled functions give the NumPy ones' numbers on the probe grid, to
    round-off (NumPy's vectorised loops and the C library may differ in the last bits)."""
    args = _probe_arguments(operator.arity)
    op = program.CUSTOM_BINARY if operator.arity == 2 else program.CUSTOM_UNARY
    table = program.operator_table([compiled.row])
    second = args[1] if operator.arity == 2 else np.zeros_like(args[0])
    values = program.apply_rows(op, args[0], second, table)
    partials = program.partials_rows(op, args[0], second, values, table)[:operator.arity]
    with np.errstate(all="ignore"):
        expected = [operator.values(*args), *operator.partials(*args)]
    for got, want in zip([values, *partials], expected):
        finite = np.isfinite(want)
        if not np.array_equal(np.isfinite(got), finite):
            return False
        if np.any(np.abs(got[finite] - want[finite])
                  > 1e-9 * np.maximum(1.0, np.abs(want[finite]))):
            return False
    return True


def _probe_arguments(arity: int) -> tuple[np.ndarray, ...]:
    if arity == 1:
        return (_PROBE.copy(),)
    a, b = np.meshgrid(_PROBE[::6], _PROBE[::6][::-1])
    return a.ravel().copy(), b.ravel().copy()


def _check_derivatives(operator, args, values, partials) -> None:
    """Each partial against the central difference of the function, where both are finite."""
    for k, partial in enumerate(partials):
        h = 1e-6 * np.maximum(1.0, np.abs(args[k]))
        up = list(args)
        down = list(args)
        up[k], down[k] = args[k] + h, args[k] - h
        with np.errstate(all="ignore"):
            numeric = (operator.values(*up) - operator.values(*down)) / (2 * h)
        both = np.isfinite(numeric) & np.isfinite(partial) & np.isfinite(values)
        if not both.any():
            raise ValueError(f"Operator {operator.name!r}: its derivative is nowhere finite on "
                             "the probe points.")
        error = np.abs(partial[both] - numeric[both]) / np.maximum(1.0, np.abs(numeric[both]))
        if error.max() > 1e-4:
            at = tuple(float(a[both][np.argmax(error)]) for a in args)
            which = "derivative" if operator.arity == 1 else f"partial derivative {k + 1}"
            raise ValueError(
                f"Operator {operator.name!r}: the {which} disagrees with finite differences "
                f"at {at if len(at) > 1 else at[0]:} ({partial[both][np.argmax(error)]:.6g} "
                f"against {numeric[both][np.argmax(error)]:.6g})."
            )


def _check_sympy(operator, args, values) -> None:
    """The SymPy form computes what the function computes (where the function is finite)."""
    symbols = sympy.symbols("a b")[:operator.arity]
    try:
        expr = sympy.sympify(operator.sympy_function(*symbols))
        computed = sympy.lambdify(symbols, expr, modules=["scipy", "numpy"])  # erf, gamma …
        with np.errstate(all="ignore"):
            shown = np.broadcast_to(np.asarray(computed(*args), dtype=np.complex128),
                                    values.shape)
    except Exception as err:  # noqa: BLE001 - the user's code: say which part failed
        raise ValueError(f"Operator {operator.name!r}: its SymPy form cannot be evaluated "
                         f"({err!r}).") from err
    finite = np.isfinite(values)
    scale = np.maximum(1.0, np.abs(values[finite]))
    if np.any(np.abs(shown[finite] - values[finite]) / scale > 1e-8):
        raise ValueError(f"Operator {operator.name!r}: its SymPy form {expr} does not compute "
                         "what its function computes, so displayed formulas would not mean "
                         "what is predicted.")


# -------------------------------------------------------------- the NumPy path
def node_values(expression, X: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """The value ``(n,)`` of every node of ``expression`` on the rows of ``X``, BFS order:
    operators on the NumPy path by their NumPy function, the others by the kernels'."""
    ops, args = expression.program
    custom = expression.library.custom_operators
    table = expression.library.operator_table
    n = X.shape[0]
    val: list = [None] * len(ops)
    with np.errstate(all="ignore"):
        for i in range(len(ops) - 1, -1, -1):  # children come after their parent
            op, a = int(ops[i]), int(args[i])
            if op == program.VARIABLE:
                val[i] = np.ascontiguousarray(X[:, a], dtype=np.float64)
            elif op == program.ONE:
                val[i] = np.ones(n)
            elif op == program.CONSTANT:
                val[i] = np.full(n, c[a])
            elif op >= program.CUSTOM_UNARY and custom[op % 100].compiled is None:
                children = val[a:a + program.arity(op)]
                val[i] = custom[op % 100].values(*children)
            elif program.arity(op) == 2:
                val[i] = program.apply_rows(op, val[a], val[a + 1], table)
            else:
                val[i] = program.apply_rows(op, val[a], np.zeros(n), table)
    return val


def evaluate(expression, X: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Output ``(n,)`` of ``expression`` at constants ``c`` (BFS order) on the rows of ``X``,
    on the NumPy path (for a formula :func:`takes_numpy_path`)."""
    return np.array(node_values(expression, X, c)[0], dtype=np.float64)


def jacobian(expression, X: np.ndarray, c: np.ndarray,
             values: list[np.ndarray] | None = None) -> np.ndarray:
    """d output / d c ``(p, n)`` on the NumPy path, reverse mode; entries that are not
    finite are 0 (as the compiled :func:`~cadsr_sklearn.program.jacobian`). ``values`` are
    the node values at ``c``, when already computed."""
    ops, args = expression.program
    custom, table = expression.library.custom_operators, expression.library.operator_table
    val = node_values(expression, X, c) if values is None else values
    n = X.shape[0]
    J = np.zeros((len(c), n))
    adjoint: list = [None] * len(ops)
    adjoint[0] = np.ones(n)
    with np.errstate(all="ignore"):
        for i in range(len(ops)):  # parents first: each node has one parent
            op, a, g = int(ops[i]), int(args[i]), adjoint[i]
            if op == program.CONSTANT:
                J[a] = g
            elif op >= program.CUSTOM_UNARY and custom[op % 100].compiled is None:
                k = program.arity(op)
                partials = custom[op % 100].partials(*val[a:a + k])
                for child, partial in zip(range(a, a + k), partials):
                    adjoint[child] = g * partial
            elif op >= program.ADD:
                right = val[a + 1] if program.arity(op) == 2 else np.zeros(n)
                left_partial, right_partial = program.partials_rows(op, val[a], right, val[i],
                                                                    table)
                adjoint[a] = g * left_partial
                if program.arity(op) == 2:
                    adjoint[a + 1] = g * right_partial
    J[~np.isfinite(J)] = 0.0
    return J


def fit(expression, X: np.ndarray, target: np.ndarray, sqrt_w: np.ndarray,
        starts: np.ndarray, max_nfev: int, xtol: float, ftol: float) -> np.ndarray | None:
    """Constants ``(p,)`` of ``expression`` fitted by least squares from each row of
    ``starts``, the best fit kept; None when no start gives finite residuals."""
    free = ~expression.fixed
    best, best_cost = None, math.inf
    X = np.ascontiguousarray(X, dtype=np.float64)
    for start in starts:
        c = np.array(start, dtype=np.float64)
        last: dict = {}  # the node values at the last θ: SciPy asks for the Jacobian there

        def values_at(theta, c=c, last=last):
            if last.get("theta") is None or not np.array_equal(last["theta"], theta):
                c[free] = theta
                last["theta"], last["values"] = theta.copy(), node_values(expression, X, c)
            return last["values"]

        def residuals(theta):
            return (values_at(theta)[0] - target) * sqrt_w

        def jac(theta, c=c):
            values = values_at(theta)
            return (jacobian(expression, X, c, values)[free] * sqrt_w).T

        if not np.all(np.isfinite(residuals(c[free]))):
            continue
        method = "lm" if len(target) >= free.sum() else "trf"
        try:
            with np.errstate(all="ignore"):
                solution = least_squares(residuals, c[free], jac=jac, method=method,
                                         max_nfev=max_nfev, xtol=xtol, ftol=ftol)
        except (ValueError, np.linalg.LinAlgError):
            continue
        if np.isfinite(solution.cost) and solution.cost < best_cost:
            best_cost = solution.cost
            best = c.copy()
            best[free] = solution.x
    return best


def takes_numpy_path(expression) -> bool:
    """Whether ``expression`` holds an operator that numba did not compile."""
    uncompiled = expression.library.numpy_path_opcodes
    return bool(uncompiled) and bool(np.isin(expression.program[0], uncompiled).any())


def apply_scalar(library, op: int, a: float, b: float) -> float:
    """The value of operator ``op`` at numbers: :func:`program.apply`, or the NumPy
    function of one on the NumPy path."""
    if op < program.CUSTOM_UNARY or library.custom_operators[op % 100].compiled is not None:
        return program.apply(op, a, b, library.operator_table)
    operator = library.custom_operators[op % 100]
    args = (np.array([a]), np.array([b]))[:operator.arity]
    with np.errstate(all="ignore"):
        return float(operator.values(*args)[0])
