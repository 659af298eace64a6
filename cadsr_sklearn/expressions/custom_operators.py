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
:mod:`.expressions.program` and :mod:`.scoring.levenberg_marquardt`, which receive in the
library's operator table
(:func:`.opcodes.operator_table`) the addresses of C functions that apply the
function and its derivative(s) to a block of rows. Numba compiles them from the
function (``float64`` in, ``float64`` out) where it can, and the numbers they give
must agree with the NumPy ones on the probe grid (to round-off). A function numba
cannot compile (one calling SciPy, say), or whose compiled form computes
something else, is called back instead: a C callback (:mod:`ctypes`) applies the
NumPy function to the block, taking the GIL while it runs. Either way the same
kernels evaluate the formula, take its Jacobian and fit its constants with the
same Levenberg–Marquardt, so what is fitted is what is predicted, and whether
numba compiles an operator changes only the speed. :attr:`Operator.compiled`
tells which. A scalar function numba compiles but NumPy cannot apply to arrays
(``math.erf``) can be given as ``numba.vectorize(["float64(float64)"])(function)``,
which works in both.

A fitted model carries its operators' definitions: pickles hold the functions
by value (with cloudpickle, which comes with joblib), and numba compiles them
again where the model is loaded, so a model saved in one process predicts in
another where the operator was never registered. Refitting there needs it
registered again (or the :class:`Operator` in the parameters).
"""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import logging
import threading
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numba
import numpy as np
import sympy

from . import opcodes
from . import operations

__all__ = ["Operator", "register_operator", "registered_operator", "unregister_operator"]

logger = logging.getLogger(__name__)

_PROBE = np.linspace(-3.0, 3.0, 121) + 0.0123  # off the integers and 0, where many ops break
_REGISTRY: dict[str, "Operator"] = {}
# The C functions of the operator table: f(a, b, out, n) writes out[:n]; unary ones ignore b.
_ROWS_SIGNATURE = numba.types.void(*[numba.types.CPointer(numba.types.float64)] * 3,
                                   numba.types.int64)
_ROWS_CALLBACK = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64)


@dataclass(frozen=True)
class OperatorKernels:
    """An operator's functions as the C functions of a row of the operator table."""

    functions: tuple  # numba cfuncs or ctypes callbacks: they hold what the addresses point to
    row: tuple[int, int, int]  # its row of the operator table: value, ∂/∂a, ∂/∂b (0: none)
    compiled: bool  # by numba; else calls back into the NumPy functions


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
    :attr:`kernels` holds the C functions the compiled kernels call, and :attr:`compiled`
    whether numba compiled them (see the module docstring). Copies of an operator are the
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
    def derivatives(self) -> tuple[Callable, ...]:
        """The partial derivative(s), one per argument."""
        return tuple(self.derivative) if self.arity == 2 else (self.derivative,)

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

    def __post_init__(self):
        # Guards the first build of ``kernels``: threads building libraries from one fresh
        # operator must compile it once. functools.cached_property takes no lock from
        # Python 3.12 (and, before, one lock for every operator). Not a field: no pickle,
        # copy or comparison sees it, and an operator read back from a pickle gets its own.
        object.__setattr__(self, "_kernels_lock", threading.Lock())

    @property
    def kernels(self) -> OperatorKernels:
        """The C functions the kernels call: compiled by numba where it can, else calls back
        into the NumPy functions (see the module docstring). Built once, on first use, even
        when several threads ask at once."""
        built = self.__dict__.get("_built_kernels")
        if built is None:
            with self._kernels_lock:
                built = self.__dict__.get("_built_kernels")  # another thread may have built it
                if built is None:
                    built = _kernels(self)
                    object.__setattr__(self, "_built_kernels", built)
        return built

    @property
    def compiled(self) -> bool:
        """Whether numba compiled the operator (else the kernels call its NumPy functions)."""
        return self.kernels.compiled

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
        return [_rows(d(*args), args[0].shape) for d in self.derivatives]


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


def registered_operators() -> dict[str, Operator]:
    """Every registered operator by name (a copy)."""
    return dict(_REGISTRY)


def check_operator(operator: Operator) -> None:
    """Raise ValueError saying what is wrong with ``operator``, if anything."""
    name = operator.name
    if not isinstance(name, str) or not name.isidentifier() or name in ("c",):
        raise ValueError(f"An operator's name must be a Python identifier, got {name!r}.")
    if name in opcodes.OPCODES:
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
    operator.kernels  # compiled (or found not to compile) now, not during a search


def _kernels(operator: Operator) -> OperatorKernels:
    """``operator``'s C functions: numba's, if it compiles them and they compute what the
    NumPy ones compute on the probe grid; else callbacks into the NumPy ones."""
    functions = (operator.function, *operator.derivatives)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's own warnings: the fallback says enough
            compiled = _as_kernels([_compiled_rows(f, operator.arity) for f in functions], True)
    except Exception as err:  # noqa: BLE001 - any reason numba gives means the callback
        logger.info("operator %r is called back: numba cannot compile it (%s)",
                    operator.name, err)
    else:
        if _compiled_agrees(operator, compiled):
            return compiled
        logger.info("operator %r is called back: compiled, it computes something else than "
                    "its NumPy functions", operator.name)
    return _as_kernels([_callback_rows(f, operator.arity) for f in functions], False)


def _as_kernels(functions: list, compiled: bool) -> OperatorKernels:
    addresses = [_address(f) for f in functions]
    return OperatorKernels(tuple(functions), tuple(addresses + [0] * (3 - len(addresses))),
                           compiled)


def _address(function) -> int:
    return function.address if hasattr(function, "address") else ctypes.cast(
        function, ctypes.c_void_p).value


def _compiled_rows(function: Callable, arity: int):
    """``function`` compiled to the C function of a row of the operator table."""
    if inspect.isfunction(function):  # plain Python; ufuncs and jitted ones are called as they are
        function = numba.njit(error_model="numpy")(function)
    if arity == 1:
        def rows(a, b, out, n):
            x, y = numba.carray(a, n), numba.carray(out, n)
            for r in range(n):
                y[r] = function(x[r])
    else:
        def rows(a, b, out, n):
            x, z, y = numba.carray(a, n), numba.carray(b, n), numba.carray(out, n)
            for r in range(n):
                y[r] = function(x[r], z[r])
    return numba.cfunc(_ROWS_SIGNATURE, error_model="numpy")(rows)


def _callback_rows(function: Callable, arity: int):
    """A C callback applying the NumPy ``function`` to a block of rows: NaN on every row
    where it raises (it was checked on the probe grid; a kernel cannot take an exception).

    A Ctrl-C that lands inside the function cannot leave the callback either (ctypes
    would print it and drop it): the block is NaN, and the Python that called the
    kernel raises the KeyboardInterrupt once it returns
    (:func:`cadsr_sklearn.expressions.operations.raise_if_interrupted`).
    """
    def rows(a, b, out, n):
        try:
            result = _block(out, n)
            result[:] = np.nan  # whatever happens below, never the buffer's old contents
            arguments = [_block(a, n), _block(b, n)][:arity]
            for argument in arguments:
                argument.flags.writeable = False  # the kernels' node values
            with np.errstate(all="ignore"):
                result[:] = _rows(function(*arguments), (n,))
        except Exception as err:  # noqa: BLE001 - see the docstring
            logger.debug("operator function %r raised %r: NaN", function, err)
        except BaseException:  # KeyboardInterrupt, SystemExit: raised again, see above
            operations.interrupt_from_callback()
    return _ROWS_CALLBACK(rows)


def _block(address: int, n: int) -> np.ndarray:
    """The ``n`` float64 at ``address`` as an array (no copy)."""
    return np.ctypeslib.as_array((ctypes.c_double * n).from_address(address))


def _compiled_agrees(operator: Operator, compiled: OperatorKernels) -> bool:
    """Whether the compiled functions give the NumPy ones' numbers on the probe grid, to
    round-off (NumPy's vectorised loops and the C library may differ in the last bits)."""
    args = _probe_arguments(operator.arity)
    op = opcodes.custom_opcode(0, operator.arity)
    table = opcodes.operator_table([compiled.row])
    second = args[1] if operator.arity == 2 else np.zeros_like(args[0])
    values = operations.apply_rows(op, args[0], second, table)
    partials = operations.partials_rows(op, args[0], second, values, table)[:operator.arity]
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
