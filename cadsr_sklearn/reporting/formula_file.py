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
of node kinds and functions, numbers from their digits
(:mod:`~cadsr_sklearn.reporting.sympy_json`), and trees from token names of a
:class:`~cadsr_sklearn.Library` whose custom operators are looked up by their
registered name (:func:`~cadsr_sklearn.register_operator`): no pickle, no
``eval``, no import. What it gives back (:class:`FormulaFile`) is everything a
fitted estimator shows and predicts with, so the estimator built from it
(:func:`load_model`, behind ``CADSRRegressor.load_formula``) predicts, prints,
exports and reports as the original did, ``return_std`` included; it holds no
search to continue (no ``warm_start`` from it) and no ``candidates_``.

A file is data from anywhere, corrupted or edited on its way: the reader takes
every field at its type and within its bounds, checks that the parts of each
row agree (the tree that ``predict`` evaluates, its SymPy form and its text, at
the probe points written with it) and that the file is as it was written (its
checksum): :mod:`~cadsr_sklearn.reporting.formula_checks` says how and why.
Whatever is wrong, reading raises one :class:`ValueError` that names the file,
and where it is a row, the row.

Floats are written as JSON numbers with every digit (Python's ``repr``), so
constants and predictions round-trip exactly; NaN and ±inf, which JSON lacks,
are the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.

The layout (schema 2; schema 1 was the same without ``probes`` and ``checksum``)::

    {"format": "cadsr-formula", "schema_version": 2, "written_by": "cadsr-sklearn 0.3.0",
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
                   "unsnapped": <tree> or null, "unsnapped_uncertainty": {…} or null,
                   "probes": [[1.23, 4.5], …]}, …],        # where tree, form and text agree
        "selections": {"criterion": 1, "accuracy": 2, "score": 1},  # each rule's row
        "unsnapped": <tree>, "guesses": [<front row> + {"guess": "0.5*m*v*v"}, …],
        "y_variance": …, "history": [{"epoch": 0, "best_reward": …, …}, …],
        "n_epochs": 5, "n_evaluations": 320, "stop_reason": "n_epochs", "interrupted": false}],
     "checksum": "sha256:…"}                              # of all the rest (formula_checks)

A tree's tokens are breadth-first (:class:`~cadsr_sklearn.Expression`); its
constants are in that order. A SymPy expression is nested JSON
(:mod:`~cadsr_sklearn.reporting.sympy_json`): ``{"symbol": "m"}``,
``{"integer": "2"}``, ``{"float": [sign, mantissa in hex, exponent, bits],
"precision": 53}`` (exact), ``{"node": "Mul", "args": […]}``….
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
from ..front.shown_constants import ShownConstants
from ..front.uncertainty import ConstantUncertainty
from ..multioutput import JoinedOutputs, Output, outputs_of
from ..units.quantities import Units
from .formula_checks import checksum, choose_probes
from .formula_parts import (NONFINITE, Invalid, as_list, as_object, as_strings, as_text,
                            read_output, short)
from .sympy_json import to_json

__all__ = ["FORMAT", "SCHEMA_VERSION", "FormulaFile", "write_formula_file",
           "read_formula_file", "load_model"]

#: The file's ``format`` field: what it is.
FORMAT = "cadsr-formula"
#: The layout's version; a reader refuses files of a later one. 2 added each row's
#: probe points and the checksum.
SCHEMA_VERSION = 2


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
    # sealed as a reader will see it: the content parsed back from its JSON
    document = json.loads(json.dumps(document, allow_nan=False))
    document["checksum"] = checksum(document)
    text = json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def _output(output: Output) -> dict:
    front, model = output.front, output.estimator  # its front, and its search's record
    library = front.rows[0].expression.library
    symbols = list(front.symbols)
    return {
        "target": output.target,
        "library": library.arguments(),
        "front": [_front_row(row, symbols) for row in front.rows],
        "selections": dict(front.selections),
        "unsnapped": _tree(model.unsnapped_expression_),
        "guesses": [{"guess": g.guess, **_front_row(g, symbols)} for g in front.guesses],
        "units": _units(front.data_units),
        "y_variance": _real(model.y_variance_),
        "history": [{k: _value(v) for k, v in record.items()} for record in model.history_],
        "n_epochs": int(model.n_epochs_),
        "n_evaluations": int(model.n_evaluations_),
        "stop_reason": model.stop_reason_,
        "interrupted": bool(model.interrupted_),
        "found_by": getattr(model, "found_by_", None),
        "reduction": _reduction(getattr(model, "reduction_", None)),
    }


def _front_row(row: FrontRow, symbols: list[str]) -> dict:
    return {
        "formula": row.formula,
        "equation": to_json(row.equation),
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
        # points where its tree, SymPy form and text agree, for the reader to check
        "probes": choose_probes(row, symbols),
    }


def _reduction(reduced) -> dict | None:
    """The dimensionless groups a fit searched first (exponents as [numerator,
    denominator]) and what that search spent; its formulas are in the front."""
    if reduced is None:
        return None
    reduction = reduced.reduction
    exponents = lambda vector: [[e.numerator, e.denominator] for e in vector]  # noqa: E731
    return {"groups": [exponents(g) for g in reduction.groups],
            "prefactor": exponents(reduction.prefactor),
            "n_epochs": reduced.n_epochs, "n_evaluations": reduced.n_evaluations,
            "seconds": _real(reduced.seconds), "interrupted": reduced.interrupted,
            "note": reduced.note}


def _tree(expression: Expression) -> dict:
    names = expression.library.names
    return {"tokens": [names[t] for t in expression.tokens],
            "constants": _reals(expression.constants), "fixed": expression.fixed.tolist()}


def _uncertainty(u: ConstantUncertainty) -> dict:
    return {"values": _reals(u.values), "fixed": np.asarray(u.fixed).tolist(),
            "covariance": _reals(u.covariance), "identifiable": np.asarray(u.identifiable).tolist(),
            "residual_variance": _real(u.residual_variance), "dof": _real(u.dof)}


def _shown(shown: ShownConstants) -> dict:
    return {"form": to_json(shown.form), "names": list(shown.names), "shown": list(shown.shown),
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
        As :func:`read_formula_file`, and for settings the class does not take or
        does not allow (a file written by another version, or edited).
    """
    saved = read_formula_file(path)
    try:
        outputs = [estimator_class(**saved.settings) for _ in saved.outputs]
        outputs[0]._validate_params()  # the values each parameter may take
    except (TypeError, ValueError) as err:  # a parameter this version does not have
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"{path}: its settings are not this version's ({first}); it was "
                         "written by another version of cadsr-sklearn, or edited.") from None
    for output, attributes, target in zip(outputs, saved.outputs,
                                          saved.shared["target_names_"]):
        vars(output).update(saved.shared, **attributes, target_names_=[target],
                            n_outputs_=1, version_=__version__)
    model = outputs[0]
    if len(outputs) > 1:
        model = estimator_class(**saved.settings)
        vars(model).update(saved.shared)
        vars(model).update(JoinedOutputs(outputs, saved.shared["target_names_"]).attributes())
    for j, output in enumerate(outputs_of(model)):
        try:
            output.front.chosen  # the row model_selection chooses: one the file recorded
        except ValueError as err:
            raise ValueError(f"{path}: output {j}: {err}") from None
    return model


#: What a malformed file can make the reading code raise where a check is missing: each
#: is reported as the ValueError that names the file.
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError,
              RecursionError)
_MAX_INT_DIGITS = 400  # a JSON integer: counts and indices; what reads as a number at all


def read_formula_file(path) -> FormulaFile:
    """The formula file at ``path``, read as data only.

    Raises
    ------
    ValueError
        For a file that is not a formula file (a pickle or joblib file, other
        JSON), one written with a later schema, one whose formulas use an
        operator that is not registered, one whose content is malformed, and
        one whose parts disagree (a row's tree, SymPy form and text at its
        probe points) or that was changed after it was written (its checksum);
        the message names the file, what is wrong, and where it is a row of
        the front, the output and the row.
    """
    raw = Path(path).read_bytes()
    if raw.lstrip()[:1] != b"{":  # a pickle, or a compressed one (joblib): never unpickled
        kind = "a pickle or joblib file" if raw[:1] == b"\x80" else "not JSON"
        raise ValueError(f"{path}: not a formula file ({kind}). A formula file is JSON; a "
                         "pickle or joblib file is refused unread, since loading one runs the "
                         "code it holds (joblib.load it only if you trust its source).")
    try:
        document = json.loads(raw.decode("utf-8"), parse_constant=_no_constant,
                              parse_int=_json_int, parse_float=_json_float)
    except (UnicodeDecodeError, json.JSONDecodeError, Invalid) as err:
        raise ValueError(f"{path}: not a formula file (not JSON: {err}).") from None
    except RecursionError:
        raise ValueError(f"{path}: not a formula file (nested too deeply).") from None
    try:
        return _document(document)
    except Invalid as err:
        raise ValueError(f"{path}: {err}") from None
    except KeyError as err:
        raise ValueError(f"{path}: not a valid formula file (it has no field {err}).") from None
    except _MALFORMED as err:
        raise ValueError(f"{path}: not a valid formula file ({type(err).__name__}: "
                         f"{err}).") from None


def _no_constant(name: str):
    raise Invalid(f"{name} is not JSON")


def _json_int(text: str) -> int:
    # Python reads up to 4300 digits, slowly; no count in a formula file has 400
    if len(text) > _MAX_INT_DIGITS:
        raise Invalid(f"an integer of {len(text)} digits")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: JSON has no infinity (the file writes "Infinity")
        raise Invalid(f"the number {text[:30]} is beyond float64")
    return value


def _document(document) -> FormulaFile:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise Invalid(f"not a formula file (no \"format\": \"{FORMAT}\" field).")
    version = document.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise Invalid(f"not a formula file (its schema_version is {version!r}).")
    if version > SCHEMA_VERSION:
        raise Invalid(f"written with formula-file schema {version!r} "
                      f"({document.get('written_by', 'unknown writer')}); this cadsr-sklearn "
                      f"{__version__} reads schema {SCHEMA_VERSION} and earlier: upgrade it.")
    settings = {key: _parameter(value) for key, value
                in as_object(document["settings"], "settings").items()}
    for key in as_strings(document.get("tuple_settings", []), "tuple_settings"):
        if not isinstance(settings.get(key), list):
            raise Invalid(f"tuple_settings names {key!r}, which is no list setting.")
        settings[key] = tuple(settings[key])
    features = as_object(document["features"], "features")
    symbols = _symbols(features["symbols"])
    outputs = as_list(document["outputs"], "outputs")
    if not outputs:
        raise Invalid("the file holds no output.")
    shared = {"n_features_in_": len(symbols), "symbol_names_": symbols,
              "device_": as_text(document["device"], "device"),
              "target_names_": [as_text(as_object(o, "an output")["target"], "a target")
                                for o in outputs]}
    if features["names"] is not None:
        names = as_strings(features["names"], "the feature names")
        if len(names) != len(symbols):
            raise Invalid(f"{len(names)} feature names for {len(symbols)} symbols.")
        shared["feature_names_in_"] = np.array(names, dtype=object)
    read = [read_output(j, output, symbols, settings, version)
            for j, output in enumerate(outputs)]
    # last: a part that is malformed, or a row whose parts disagree, is named as such
    _check_seal(document)
    return FormulaFile(settings, shared, read)


def _check_seal(document: dict) -> None:
    """Refuse a file changed after it was written: its checksum no longer matches."""
    if "checksum" not in document:
        return  # schema 1, or removed to load an edit: the rows' probe points still hold
    if document["checksum"] != checksum(document):
        raise Invalid("its content is not what was written: its checksum does not match "
                      "(the file is corrupted, or was edited). A formula file is written "
                      "whole by save_formula; to load a file edited on purpose, remove its "
                      "\"checksum\" field (its formulas are still checked).")


def _parameter(value) -> Any:
    """A setting as the estimator takes it (non-finite floats as floats)."""
    if isinstance(value, list):
        return [_parameter(v) for v in value]
    if isinstance(value, dict):
        return {k: _parameter(v) for k, v in value.items()}
    if isinstance(value, str) and value in NONFINITE:
        return NONFINITE[value]
    return value


def _symbols(value) -> list[str]:
    """The features' symbols: distinct names a formula can hold (identifiers)."""
    symbols = as_strings(value, "the features' symbols")
    if not symbols:
        raise Invalid("the file has no features.")
    bad = [s for s in symbols if not s.isidentifier()]
    if bad or len(set(symbols)) != len(symbols):
        raise Invalid(f"the features' symbols {short(symbols)} are not distinct names.")
    return symbols


