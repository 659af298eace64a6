"""A fitted model as a formula file: JSON that is data, read without running code.

A pickle or joblib file runs whatever it holds when it is loaded, so a model
shared that way must come from someone the user trusts. A law is a few symbols
and numbers; the formula file holds exactly those, as JSON:

* the features' names and symbols, the targets' names, and their units;
* for each output, every row of the Pareto front: the formula's text, its
  SymPy form and the displayed form of its constants (as trees of SymPy node
  names, never as code), the expression tree as token names with its constants
  and which of them are fixed, the covariance of the constants, complexity,
  loss, R², reward and criterion; the row each rule of ``model_selection``
  chooses; the guesses' rows; the search's per-epoch history and counts;
* the estimator's parameters (``settings``).

Reading it (:func:`read_formula_file`) builds SymPy nodes from a fixed table
of node kinds and functions, numbers from their digits, and trees from token
names of a :class:`~cadsr_sklearn.Library` whose custom operators are looked
up by their registered name (:func:`~cadsr_sklearn.register_operator`): no
pickle, no ``eval``, no import. What it gives back (:class:`FormulaFile`) is
everything a fitted estimator shows and predicts with, so the estimator built
from it (:func:`load_model`, behind ``CADSRRegressor.load_formula``) predicts,
prints, exports and reports as the original did, ``return_std`` included; it
holds no search to continue (no ``warm_start`` from it) and no ``candidates_``.

Floats are written as JSON numbers with every digit (Python's ``repr``), so
constants and predictions round-trip exactly; NaN and ±inf, which JSON lacks,
are the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.

The layout (schema 1)::

    {"format": "cadsr-formula", "schema_version": 1, "written_by": "cadsr-sklearn 0.3.0",
     "settings": {"binary_operators": ["add", …], …},    # get_params(), operators by name
     "tuple_settings": ["binary_operators", …],          # those that were tuples
     "features": {"names": ["m", "v"] or null, "symbols": ["m", "v"]},
     "device": "cpu",
     "outputs": [{                                        # one per output
        "target": "E", "units": {"base": […], "features": [[…]], "target": […],
                                 "feature_labels": […], "target_label": "J", …} or null,
        "library": {"n_features": 2, "binary_operators": […], "unary_operators": […],
                    "use_constants": true, "use_one": true, "operator_complexity": {}},
        "front": [{"formula": "m*v**2/2", "equation": <SymPy>, "digits": 4,
                   "tree": {"tokens": ["mul", "x1", "mul", "x0", "div", "x1", "c"],
                            "constants": [2.0], "fixed": [true]},
                   "complexity": 7, "loss": …, "r2": …, "reward": …, "criterion": …,
                   "selected": true, "cv_loss": null,
                   "uncertainty": {"values", "fixed", "covariance", "identifiable",
                                   "residual_variance", "dof"},
                   "constants": {"form": <SymPy>, "names": ["c0"], "shown": ["0.5"],
                                 "uncertainty": {…}, "fixed": [{"name", "shown", "value",
                                                                "fitted", "index"}]},
                   "unsnapped": <tree> or null, "unsnapped_uncertainty": {…} or null}, …],
        "selections": {"reward": 1, "accuracy": 2, "score": 1},  # each rule's row
        "unsnapped": <tree>, "guesses": [<front row> + {"guess": "0.5*m*v*v"}, …],
        "y_variance": …, "history": [{"epoch": 0, "best_reward": …, …}, …],
        "n_epochs": 5, "n_evaluations": 320, "stop_reason": "n_epochs", "interrupted": false}]}

A tree's tokens are breadth-first (:class:`~cadsr_sklearn.Expression`); its
constants are in that order. A SymPy expression is ``{"symbol": "m"}``,
``{"integer": "2"}``, ``{"rational": ["1", "2"]}``, ``{"float": [sign,
mantissa in hex, exponent, bits], "precision": 53}`` (exact), ``{"number":
"pi"}``, or ``{"node": "Mul", "args": […]}`` for SymPy's ``Add``, ``Mul``,
``Pow``, ``Max``, ``Min`` and its functions (``exp``, ``log``, ``Abs``…);
``{"undefined": name, "args": […]}`` for any other function (a custom
operator's own SymPy class reads back as an undefined function of its name).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from .._version import __version__
from ..expressions.custom_operators import Operator
from ..expressions.expression import Expression
from ..front.rows import FrontRow
from ..front.rows import GuessRow
from ..expressions.library import Library
from ..multioutput import JoinedOutputs, Output, outputs_of
from ..front.shown_constants import FixedConstant, ShownConstants
from ..front.uncertainty import ConstantUncertainty
from ..units.quantities import Units

__all__ = ["FORMAT", "SCHEMA_VERSION", "FormulaFile", "write_formula_file",
           "read_formula_file", "load_model"]

#: The file's ``format`` field: what it is.
FORMAT = "cadsr-formula"
#: The layout's version; a reader refuses files of a later one.
SCHEMA_VERSION = 1

_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
# SymPy's named numbers, written by name.
_NAMED_NUMBERS = {"pi": sympy.pi, "E": sympy.E, "EulerGamma": sympy.EulerGamma,
                  "GoldenRatio": sympy.GoldenRatio, "Catalan": sympy.Catalan, "I": sympy.I,
                  "oo": sympy.oo, "-oo": -sympy.oo, "zoo": sympy.zoo, "nan": sympy.nan}
_CORE_NODES = {"Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow, "Max": sympy.Max,
               "Min": sympy.Min}


@dataclass(frozen=True)
class FormulaFile:
    """What a formula file holds: the estimator's parameters, the fitted attributes it
    shares across outputs, and each output's own fitted attributes (by attribute name)."""

    settings: dict[str, Any]
    shared: dict[str, Any]
    outputs: list[dict[str, Any]]


# --------------------------------------------------------------------------- writing
def write_formula_file(model, path) -> None:
    """Write the fitted ``model`` (a :class:`~cadsr_sklearn.CADSRRegressor`) to ``path``."""
    names = getattr(model, "feature_names_in_", None)
    params = model.get_params(deep=False)
    document = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "written_by": f"cadsr-sklearn {__version__}",
        "settings": {key: _setting(value) for key, value in params.items()},
        # which settings were tuples (JSON has lists only), so that get_params() reads the same
        "tuple_settings": [key for key, value in params.items() if isinstance(value, tuple)],
        "features": {"names": None if names is None else [str(n) for n in names],
                     "symbols": list(model.symbol_names_)},
        "device": str(model.device_),
        "outputs": [_output(output) for output in outputs_of(model)],
    }
    text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def _output(output: Output) -> dict:
    front, model = output.front, output.estimator  # its front, and its search's record
    library = front.rows[0].expression.library
    return {
        "target": output.target,
        "library": library.arguments(),
        "front": [_front_row(row) for row in front.rows],
        "selections": dict(front.selections),
        "unsnapped": _tree(model.unsnapped_expression_),
        "guesses": [{"guess": g.guess, **_front_row(g)} for g in front.guesses],
        "units": _units(front.data_units),
        "y_variance": _real(model.y_variance_),
        "history": [{k: _value(v) for k, v in record.items()} for record in model.history_],
        "n_epochs": int(model.n_epochs_),
        "n_evaluations": int(model.n_evaluations_),
        "stop_reason": model.stop_reason_,
        "interrupted": bool(model.interrupted_),
        "found_by": getattr(model, "found_by_", None),
    }


def _front_row(row: FrontRow) -> dict:
    return {
        "formula": row.formula,
        "equation": _sympy(row.equation),
        "tree": _tree(row.expression),
        "complexity": int(row.complexity), "loss": _real(row.loss), "r2": _real(row.r2),
        "reward": _real(row.reward), "criterion": _real(row.criterion),
        "digits": int(row.digits), "selected": bool(row.selected),
        "cv_loss": None if row.cv_loss is None else _real(row.cv_loss),
        "uncertainty": _uncertainty(row.uncertainty),
        "constants": _shown(row.constants),
        "unsnapped": None if row.unsnapped is None else _tree(row.unsnapped),
        "unsnapped_uncertainty": (None if row.unsnapped_uncertainty is None
                                  else _uncertainty(row.unsnapped_uncertainty)),
    }


def _tree(expression: Expression) -> dict:
    names = expression.library.names
    return {"tokens": [names[t] for t in expression.tokens],
            "constants": _reals(expression.constants), "fixed": expression.fixed.tolist()}


def _uncertainty(u: ConstantUncertainty) -> dict:
    return {"values": _reals(u.values), "fixed": np.asarray(u.fixed).tolist(),
            "covariance": _reals(u.covariance), "identifiable": np.asarray(u.identifiable).tolist(),
            "residual_variance": _real(u.residual_variance), "dof": _real(u.dof)}


def _shown(shown: ShownConstants) -> dict:
    return {"form": _sympy(shown.form), "names": list(shown.names), "shown": list(shown.shown),
            "uncertainty": _uncertainty(shown.uncertainty),
            "fixed": [{"name": f.name, "shown": f.shown, "value": _real(f.value),
                       "fitted": None if f.fitted is None else _uncertainty(f.fitted),
                       "index": int(f.index)} for f in shown.fixed]}


def _units(units: Units | None) -> dict | None:
    if units is None:
        return None
    return {"base": list(units.base), "features": _reals(units.features),
            "target": None if units.target is None else _reals(units.target),
            "feature_labels": list(units.feature_labels), "target_label": units.target_label,
            "dimensional_constant": bool(units.dimensional_constant)}


def _sympy(expr: sympy.Basic) -> Any:
    """``expr`` as nested JSON: a symbol, a number, or a node with its arguments."""
    if expr.is_Symbol:
        return {"symbol": expr.name}
    for name, number in _NAMED_NUMBERS.items():
        if expr is number:
            return {"number": name}
    if expr.is_Integer:
        return {"integer": str(expr)}
    if expr.is_Rational:
        return {"rational": [str(expr.p), str(expr.q)]}
    if expr.is_Float:
        sign, mantissa, exponent, bits = expr._mpf_
        return {"float": [sign, format(mantissa, "x"), exponent, bits], "precision": expr._prec}
    args = [_sympy(a) for a in expr.args]
    if _known_node(type(expr).__name__) is type(expr):
        return {"node": type(expr).__name__, "args": args}
    # an undefined function, or a node of a user's own (a custom operator's SymPy form):
    # read back as an undefined function of that name, which prints the same
    return {"undefined": expr.func.__name__, "args": args}


def _setting(value) -> Any:
    """A parameter's value as JSON: operators by name, formulas and paths as text."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _real(value)
    if isinstance(value, dict):
        return {str(k): _setting(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_setting(v) for v in value]
    if isinstance(value, Operator):  # by name: registered where the file is read
        return value.name
    if isinstance(value, (sympy.Basic, os.PathLike)):
        return str(value)
    return None  # a random generator, a callable: nothing a file can hold


def _value(v) -> Any:
    return _real(v) if isinstance(v, (float, np.floating)) else _setting(v)


def _real(x) -> float | str:
    x = float(x)
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _reals(a) -> list:
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0:
        return _real(a)
    return [_reals(row) for row in a] if a.ndim > 1 else [_real(x) for x in a]


# --------------------------------------------------------------------------- reading
def load_model(path, estimator_class):
    """The fitted model in the formula file at ``path``: ``estimator_class(**settings)``
    with the fitted attributes the file holds, as unpickling would set them (a model
    of several outputs joins one such estimator per output).

    Raises
    ------
    ValueError
        As :func:`read_formula_file`, and for settings the class does not take (a
        file written by another version).
    """
    saved = read_formula_file(path)
    try:
        outputs = [estimator_class(**saved.settings) for _ in saved.outputs]
    except TypeError as err:  # a parameter this version does not have
        raise ValueError(f"{path}: {err}; it was written by another version of "
                         "cadsr-sklearn.") from None
    for output, attributes, target in zip(outputs, saved.outputs,
                                          saved.shared["target_names_"]):
        vars(output).update(saved.shared, **attributes, target_names_=[target],
                            n_outputs_=1, version_=__version__)
    if len(outputs) == 1:
        return outputs[0]
    model = estimator_class(**saved.settings)
    vars(model).update(saved.shared)
    vars(model).update(JoinedOutputs(outputs, saved.shared["target_names_"]).attributes())
    return model


class _Invalid(ValueError):
    """The file is not a formula file this version can read; the message says why."""


def read_formula_file(path) -> FormulaFile:
    """The formula file at ``path``, read as data only.

    Raises
    ------
    ValueError
        For a file that is not a formula file (a pickle or joblib file, other
        JSON), one written with a later schema, one whose formulas use an
        operator that is not registered, or one whose content is malformed;
        the message names the file and what is wrong.
    """
    raw = Path(path).read_bytes()
    if raw.lstrip()[:1] != b"{":  # a pickle, or a compressed one (joblib): never unpickled
        kind = "a pickle or joblib file" if raw[:1] == b"\x80" else "not JSON"
        raise ValueError(f"{path}: not a formula file ({kind}). A formula file is JSON; a "
                         "pickle or joblib file is refused unread, since loading one runs the "
                         "code it holds (joblib.load it only if you trust its source).")
    try:
        document = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, _Invalid) as err:
        raise ValueError(f"{path}: not a formula file (not JSON: {err}).") from None
    except RecursionError:
        raise ValueError(f"{path}: not a formula file (nested too deeply).") from None
    try:
        return _document(document)
    except _Invalid as err:
        raise ValueError(f"{path}: {err}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as err:
        raise ValueError(f"{path}: not a valid formula file ({type(err).__name__}: "
                         f"{err}).") from None


def _no_constant(name: str):
    raise _Invalid(f"{name} is not JSON")


def _document(document) -> FormulaFile:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _Invalid(f"not a formula file (no \"format\": \"{FORMAT}\" field).")
    version = document.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise _Invalid(f"written with formula-file schema {version!r} "
                       f"({document.get('written_by', 'unknown writer')}); this cadsr-sklearn "
                       f"{__version__} reads schema {SCHEMA_VERSION} and earlier: upgrade it.")
    settings = {key: _parameter(value) for key, value in document["settings"].items()}
    for key in document.get("tuple_settings", ()):
        settings[key] = tuple(settings[key])
    features = document["features"]
    symbols = [str(s) for s in features["symbols"]]
    shared = {"n_features_in_": len(symbols), "symbol_names_": symbols,
              "device_": str(document["device"]),
              "target_names_": [str(o["target"]) for o in document["outputs"]]}
    if features["names"] is not None:
        shared["feature_names_in_"] = np.array([str(n) for n in features["names"]],
                                               dtype=object)
    outputs = [_read_output(output) for output in document["outputs"]]
    if not outputs:
        raise _Invalid("the file holds no output.")
    return FormulaFile(settings, shared, outputs)


def _parameter(value) -> Any:
    """A setting as the estimator takes it (non-finite floats as floats)."""
    if isinstance(value, list):
        return [_parameter(v) for v in value]
    if isinstance(value, dict):
        return {k: _parameter(v) for k, v in value.items()}
    if isinstance(value, str) and value in _NONFINITE:
        return _NONFINITE[value]
    return value


def _read_output(output: dict) -> dict:
    library = _library(output["library"])
    front = [_read_front_row(row, library) for row in output["front"]]
    if not front:
        raise _Invalid("an output has an empty front.")
    selections = {str(rule): int(i) for rule, i in output["selections"].items()}
    if any(not 0 <= i < len(front) for i in selections.values()):
        raise _Invalid("a selection points outside the front.")
    guesses = [GuessRow.of(_read_front_row(g, library), str(g["guess"]))
               for g in output["guesses"]]
    return {
        "front_rows_": front, "selections_": selections,
        "unsnapped_expression_": _read_tree(output["unsnapped"], library),
        "guesses_": guesses, "data_units_": _read_units(output["units"]),
        "y_variance_": _read_real(output["y_variance"]),
        "history_": [{str(k): _read_value(v) for k, v in r.items()} for r in output["history"]],
        "n_epochs_": int(output["n_epochs"]), "n_evaluations_": int(output["n_evaluations"]),
        "stop_reason_": str(output["stop_reason"]), "interrupted_": bool(output["interrupted"]),
        "found_by_": _read_found_by(output.get("found_by")), "search_state_": None,
    }


def _read_found_by(value) -> str | None:
    """The proposer that wrote τ*: a name, or None (also for files written before it was kept)."""
    if value is not None and not isinstance(value, str):
        raise _Invalid(f"'found_by' must be a string or null, got {value!r}.")
    return value


def _library(arguments: dict) -> Library:
    """The file's token library; its custom operators by the names they are registered under."""
    try:
        return Library(int(arguments["n_features"]), tuple(map(str, arguments["binary_operators"])),
                       tuple(map(str, arguments["unary_operators"])),
                       bool(arguments["use_constants"]), bool(arguments["use_one"]),
                       {str(k): int(v) for k, v in arguments["operator_complexity"].items()})
    except ValueError as err:  # an operator not registered here: the library says which
        raise _Invalid(f"{err} Register it under the name the file gives before loading.") \
            from None


def _read_tree(tree: dict, library: Library) -> Expression:
    return Expression(library.encode(tree["tokens"]), library, _read_reals(tree["constants"]),
                      np.array(tree["fixed"], dtype=bool))


def _read_front_row(row: dict, library: Library) -> FrontRow:
    unsnapped = row["unsnapped"]
    unsnapped_uncertainty = row["unsnapped_uncertainty"]
    return FrontRow(
        complexity=int(row["complexity"]), loss=_read_real(row["loss"]),
        r2=_read_real(row["r2"]), reward=_read_real(row["reward"]),
        criterion=_read_real(row["criterion"]), equation=_read_sympy(row["equation"]),
        formula=str(row["formula"]), expression=_read_tree(row["tree"], library),
        digits=int(row["digits"]), uncertainty=_read_uncertainty(row["uncertainty"]),
        constants=_read_shown(row["constants"]), selected=bool(row["selected"]),
        cv_loss=None if row["cv_loss"] is None else _read_real(row["cv_loss"]),
        unsnapped=None if unsnapped is None else _read_tree(unsnapped, library),
        unsnapped_uncertainty=(None if unsnapped_uncertainty is None
                               else _read_uncertainty(unsnapped_uncertainty)))


def _read_uncertainty(u: dict) -> ConstantUncertainty:
    values = _read_reals(u["values"])
    fixed = np.array(u["fixed"], dtype=bool).reshape(-1)
    q = int(len(values) - fixed.sum())
    covariance = _read_reals(u["covariance"]).reshape(q, q)
    identifiable = np.array(u["identifiable"], dtype=bool).reshape(q)
    if len(fixed) != len(values):
        raise _Invalid("an uncertainty's fixed flags do not match its values.")
    return ConstantUncertainty(values, fixed, covariance, identifiable,
                               _read_real(u["residual_variance"]), _read_real(u["dof"]))


def _read_shown(shown: dict) -> ShownConstants:
    fixed = tuple(FixedConstant(str(f["name"]), str(f["shown"]), _read_real(f["value"]),
                                None if f["fitted"] is None else _read_uncertainty(f["fitted"]),
                                int(f["index"])) for f in shown["fixed"])
    return ShownConstants(_read_sympy(shown["form"]), tuple(map(str, shown["names"])),
                          tuple(map(str, shown["shown"])), _read_uncertainty(shown["uncertainty"]),
                          fixed)


def _read_units(units: dict | None) -> Units | None:
    if units is None:
        return None
    base = tuple(map(str, units["base"]))
    target = units["target"]
    return Units(base, _read_reals(units["features"]).reshape(-1, len(base)),
                 None if target is None else _read_reals(target).reshape(len(base)),
                 tuple(map(str, units["feature_labels"])),
                 None if units["target_label"] is None else str(units["target_label"]),
                 bool(units["dimensional_constant"]))


def _read_sympy(node) -> sympy.Expr:
    """A SymPy expression from :func:`_sympy`'s JSON, built from the tables only."""
    if not isinstance(node, dict):
        raise _Invalid(f"a formula node is {type(node).__name__}, not an object.")
    if "symbol" in node:
        return sympy.Symbol(str(node["symbol"]))
    if "number" in node:
        if node["number"] not in _NAMED_NUMBERS:
            raise _Invalid(f"unknown named number {node['number']!r}.")
        return _NAMED_NUMBERS[node["number"]]
    if "integer" in node:
        return sympy.Integer(int(str(node["integer"])))
    if "rational" in node:
        p, q = node["rational"]
        return sympy.Rational(int(str(p)), int(str(q)))
    if "float" in node:
        sign, mantissa, exponent, bits = node["float"]
        mpf = (int(sign), format(int(str(mantissa), 16), "x"), int(exponent), int(bits))
        return sympy.Float(mpf, precision=int(node["precision"]))
    args = [_read_sympy(a) for a in node["args"]]
    if "undefined" in node:
        return sympy.Function(str(node["undefined"]))(*args)
    kind = _known_node(str(node["node"]))
    if kind is None:
        raise _Invalid(f"unknown formula node {node['node']!r}.")
    return kind(*args, evaluate=False)


def _known_node(name: str) -> type | None:
    """SymPy's class for a node name: Add, Mul, Pow, Max, Min or one of SymPy's functions."""
    if name in _CORE_NODES:
        return _CORE_NODES[name]
    function = getattr(sympy.functions, name, None)
    if isinstance(function, type) and issubclass(function, sympy.Function):
        return function
    return None


def _read_value(v) -> Any:
    if isinstance(v, str) and v in _NONFINITE:
        return _NONFINITE[v]
    return v


def _read_real(x) -> float:
    if isinstance(x, str):
        if x not in _NONFINITE:
            raise _Invalid(f"{x!r} is not a number.")
        return _NONFINITE[x]
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _Invalid(f"{x!r} is not a number.")
    return float(x)


def _read_reals(values) -> np.ndarray:
    if isinstance(values, list):
        return np.array([_read_reals(v) for v in values], dtype=np.float64)
    return np.float64(_read_real(values))
