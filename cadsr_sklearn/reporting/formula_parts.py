"""The parts of a formula file, read from JSON and checked: each field at its type and bounds.

:func:`read_output` reads one output of a formula file
(:mod:`cadsr_sklearn.reporting.formula_file`): its token library, each row of its
Pareto front and each guess (tree, SymPy form, text, constants with their
covariance, probe points), the row each rule of ``model_selection`` chooses, its
units and its search's record. Every field is taken at its JSON type (a count
is an integer, a flag ``true`` or ``false``, never text that reads as one) and
within bounds that keep reading fast whatever the file holds; the parts of a
row are checked against one another: the covariance is of the tree's
constants, the units describe the tree, the tree, SymPy form and text agree at
the row's probe points (:mod:`.formula_checks`). Anything else raises
:class:`Invalid`, whose message the file's reader prefixes with the file's name.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from ..expressions.expression import Expression
from ..expressions.library import OPERATOR_ALIASES, Library
from ..front.rows import FrontRow, GuessRow
from ..front.selection import ALIASES, RULES
from ..front.shown_constants import FixedConstant, ShownConstants
from ..front.uncertainty import ConstantUncertainty
from ..search.reduction import ReducedSearch
from ..units.check import describe_units
from ..units.groups import Reduction
from ..units.quantities import Units
from .formula_checks import disagreement
from .formula_values import MAX_TEXT_LENGTH, NUMPY_FUNCTIONS
from .sympy_json import BadFormula, from_json

__all__ = ["Invalid", "read_output", "NONFINITE", "MAX_TREE_TOKENS", "as_object", "as_list",
           "as_text", "as_strings", "as_integer", "as_flag", "as_real", "as_reals", "short"]

#: JSON has no NaN or infinity: the file writes them as these strings.
NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
#: The longest tree read (``max_length`` is 32 by default).
MAX_TREE_TOKENS = 2_000
_MAX_LIST = 10_000_000  # features, rows, constants: a bound on a list before it is built


class Invalid(ValueError):
    """A part of the file is malformed or disagrees with another; the message says which."""


def read_output(j: int, output: Any, symbols: list[str], settings: dict,
                version: int) -> dict:
    """Output ``j`` of a formula file of schema ``version`` whose features have the symbols
    ``symbols`` and whose estimator has the parameters ``settings``: its fitted attributes,
    by name. A row of schema 2 or later must have probe points (an empty list where the
    writer found none); schema 1 had none."""
    return _OutputReader(j, symbols, settings, version).read(output)


class _OutputReader:
    """Reads output ``j`` of a file whose features have the symbols ``symbols``."""

    def __init__(self, j: int, symbols: list[str], settings: dict, version: int):
        self.j, self.symbols, self.settings, self.version = j, symbols, settings, version

    def read(self, output) -> dict:
        output = as_object(output, f"output {self.j}")
        self.library = _library(as_object(output["library"], "a library"), self.symbols)
        _check_operators(self.settings, self.library)
        self.functions = _functions(self.library)
        units = _read_units(output["units"], len(self.symbols))
        rows = as_list(output["front"], "a front")
        front = [self._row(row, i, units) for i, row in enumerate(rows)]
        if not front:
            raise Invalid(f"output {self.j} has an empty front.")
        selections = as_object(output["selections"], "the selections")
        if any(rule not in _RULE_NAMES for rule in selections):
            raise Invalid(f"the selections {short(selections)} name unknown rules.")
        selections = {rule: as_integer(i, "a selection", 0, len(front) - 1)
                      for rule, i in selections.items()}
        guesses = [GuessRow.of(self._row(g, f"guess {i}", units),
                               as_text(as_object(g, "a guess")["guess"], "a guess"))
                   for i, g in enumerate(as_list(output["guesses"], "the guesses"))]
        return {
            "front_rows_": front, "selections_": selections,
            "unsnapped_expression_": _read_tree(output["unsnapped"], self.library),
            "guesses_": guesses, "data_units_": units,
            "y_variance_": as_real(output["y_variance"]),
            "history_": [_history_record(r) for r in as_list(output["history"], "history")],
            "n_epochs_": as_integer(output["n_epochs"], "n_epochs", 0),
            "n_evaluations_": as_integer(output["n_evaluations"], "n_evaluations", 0),
            "stop_reason_": as_text(output["stop_reason"], "stop_reason"),
            "interrupted_": as_flag(output["interrupted"], "interrupted"),
            "found_by_": _read_found_by(output.get("found_by")), "search_state_": None,
            "reduction_": _read_reduction(output.get("reduction"), self.symbols),
        }

    def _row(self, row, i, units: Units | None) -> FrontRow:
        """Row ``i`` of the front (or a guess), its parts checked against one another."""
        where = f"output {self.j}, row {i}"
        try:
            read, probes = self._front_row(as_object(row, "a row"))
        except Invalid as err:
            raise Invalid(f"{where}: {err}") from None
        except KeyError as err:
            raise Invalid(f"{where}: it has no field {err}.") from None
        why = disagreement(read, self.symbols, probes)
        if why is None:
            why = _units_disagreement(read, units)
        if why is not None:
            raise Invalid(f"{where} ({short(read.formula)}): {why}. The file was corrupted "
                          "or edited after it was written; it is not loaded.")
        return read

    def _front_row(self, row: dict) -> tuple[FrontRow, np.ndarray]:
        tree = _read_tree(row["tree"], self.library)
        unsnapped = None if row["unsnapped"] is None else _read_tree(row["unsnapped"],
                                                                     self.library)
        unsnapped_uncertainty = row["unsnapped_uncertainty"]
        if (unsnapped is None) != (unsnapped_uncertainty is None):
            raise Invalid("its unsnapped tree and its uncertainty come apart.")
        read = FrontRow(
            complexity=as_integer(row["complexity"], "a complexity", 0),
            loss=as_real(row["loss"]), r2=as_real(row["r2"]),
            reward=as_real(row["reward"]), criterion=as_real(row["criterion"]),
            equation=self._sympy(row["equation"], self.symbols),
            formula=as_text(row["formula"], "a formula", MAX_TEXT_LENGTH), expression=tree,
            digits=as_integer(row["digits"], "digits", 1, 17),
            uncertainty=_tree_uncertainty(row["uncertainty"], tree),
            constants=self._shown(as_object(row["constants"], "the constants")),
            selected=as_flag(row["selected"], "selected"),
            cv_loss=None if row["cv_loss"] is None else as_real(row["cv_loss"]),
            unsnapped=unsnapped,
            unsnapped_uncertainty=(None if unsnapped is None
                                   else _tree_uncertainty(unsnapped_uncertainty, unsnapped)))
        probes = row["probes"] if self.version >= 2 else row.get("probes", [])
        return read, _probes(probes, len(self.symbols))

    def _sympy(self, node, symbols) -> sympy.Expr:
        try:
            return from_json(node, symbols, self.functions)
        except BadFormula as err:
            raise Invalid(str(err)) from None

    def _shown(self, shown: dict) -> ShownConstants:
        names = tuple(as_strings(shown["names"], "the constants' names"))
        texts = tuple(as_strings(shown["shown"], "the constants as shown"))
        if len(texts) != len(names) or len(set(names)) != len(names) \
                or set(names) & set(self.symbols):
            raise Invalid("its constants' names are not distinct from one another and from "
                          "the features, or not one per constant shown.")
        uncertainty = _read_uncertainty(shown["uncertainty"])
        if len(uncertainty.values) != len(names) or uncertainty.fixed.any():
            raise Invalid("its constants' uncertainty is not one of the constants shown.")
        fixed = tuple(_fixed_constant(f) for f in as_list(shown["fixed"], "fixed constants"))
        return ShownConstants(self._sympy(shown["form"], [*self.symbols, *names]), names,
                              texts, uncertainty, fixed)


_RULE_NAMES = frozenset(RULES) | frozenset(ALIASES)


def _read_found_by(value) -> str | None:
    """The proposer that wrote τ*: a name, or None (also for files written before it was kept)."""
    if value is not None and not isinstance(value, str):
        raise Invalid(f"'found_by' must be a string or null, got {short(value)}.")
    return value


def _read_reduction(value, symbols: list[str]) -> ReducedSearch | None:
    """The dimensionless groups the fit searched first (None also for files written
    before they were kept); the formulas that search handed over are in the front."""
    if value is None:
        return None
    value = as_object(value, "the reduction")

    def exponents(vector) -> tuple[Fraction, ...]:
        pairs = as_list(vector, "a reduction's exponents")
        if len(pairs) != len(symbols):
            raise Invalid(f"a reduction's exponents {short(vector)} are not one per feature.")
        out = []
        for pair in pairs:
            pair = as_list(pair, "an exponent")
            if len(pair) != 2:
                raise Invalid(f"an exponent must be [numerator, denominator], got {short(pair)}.")
            out.append(Fraction(as_integer(pair[0], "a numerator"),
                                as_integer(pair[1], "a denominator", 1)))
        return tuple(out)

    reduction = Reduction(tuple(symbols),
                          tuple(exponents(g) for g in as_list(value["groups"], "the groups")),
                          exponents(value["prefactor"]))
    note = value.get("note")
    return ReducedSearch(reduction, (), as_integer(value["n_epochs"], "n_epochs", 0),
                         as_integer(value["n_evaluations"], "n_evaluations", 0),
                         as_real(value["seconds"]), as_flag(value["interrupted"], "interrupted"),
                         note=None if note is None else as_text(note, "a note"))


def _library(arguments: dict, symbols: list[str]) -> Library:
    """The file's token library; its custom operators by the names they are registered under."""
    n_features = as_integer(arguments["n_features"], "n_features", 1)
    if n_features != len(symbols):
        raise Invalid(f"a library of {n_features} features for {len(symbols)} symbols.")
    binary = as_strings(arguments["binary_operators"], "binary operators")
    unary = as_strings(arguments["unary_operators"], "unary operators")
    complexity = as_object(arguments["operator_complexity"], "operator_complexity")
    try:
        return Library(n_features, tuple(binary), tuple(unary),
                       as_flag(arguments["use_constants"], "use_constants"),
                       as_flag(arguments["use_one"], "use_one"),
                       {k: as_integer(v, "an operator complexity", 1)
                        for k, v in complexity.items()})
    except Invalid:
        raise
    except ValueError as err:  # an operator not registered here: the library says which
        raise Invalid(f"{err} Register it under the name the file gives before loading.") \
            from None


def _check_operators(settings: dict, library: Library) -> None:
    """The settings' operators are the library's, by name (the library is built from them)."""
    written = library.arguments()
    for key in ("binary_operators", "unary_operators"):
        if key not in settings:
            continue
        names = settings[key]
        if not (isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names)
                and [OPERATOR_ALIASES.get(n, n) for n in names] == written[key]):
            raise Invalid(f"the settings' {key} {short(names)} are not its formulas' "
                          f"{short(written[key])}.")


def _functions(library: Library) -> frozenset[str]:
    """The SymPy functions a formula of ``library`` may hold: NumPy's of
    :mod:`.formula_values`, and those its custom operators' SymPy forms use."""
    names = set(NUMPY_FUNCTIONS)
    for operator in library.custom_operators:
        arguments = sympy.symbols(f"a0:{operator.arity}")
        try:
            form = sympy.sympify(operator.sympy_function(*arguments))  # registered here: trusted
        except Exception:  # noqa: BLE001 - its check at registration makes this unlikely
            continue
        names.update(type(f).__name__ for f in form.atoms(sympy.Function))
    return frozenset(names)


def _read_tree(tree, library: Library) -> Expression:
    tree = as_object(tree, "a tree")
    tokens = as_strings(tree["tokens"], "a tree's tokens", MAX_TREE_TOKENS)
    try:
        return Expression(library.encode(tokens), library, as_reals(tree["constants"], 1),
                          as_flags(tree["fixed"], "a tree's fixed flags"))
    except Invalid:
        raise
    except ValueError as err:  # not one tree, another number of constants, unknown tokens
        raise Invalid(f"a tree is malformed: {err}") from None


def _read_uncertainty(u) -> ConstantUncertainty:
    u = as_object(u, "an uncertainty")
    values = as_reals(u["values"], 1)
    fixed = as_flags(u["fixed"], "an uncertainty's fixed flags")
    if len(fixed) != len(values):
        raise Invalid("an uncertainty's fixed flags do not match its values.")
    q = int(len(values) - fixed.sum())
    covariance = as_reals(u["covariance"], 2 if q else None)
    identifiable = as_flags(u["identifiable"], "an uncertainty's identifiable flags")
    if covariance.size != q * q or len(identifiable) != q:
        raise Invalid(f"an uncertainty's covariance or flags are not those of {q} fitted "
                      "constants.")
    return ConstantUncertainty(values, fixed, covariance.reshape(q, q), identifiable,
                               as_real(u["residual_variance"]), as_real(u["dof"]))


def _tree_uncertainty(u, tree: Expression) -> ConstantUncertainty:
    """The uncertainty of ``tree``'s constants: of its values, fixed where it is."""
    read = _read_uncertainty(u)
    if not (np.array_equal(read.values, tree.constants, equal_nan=True)
            and np.array_equal(read.fixed, tree.fixed)):
        raise Invalid("its constants' uncertainty is not of its tree's constants.")
    return read


def _fixed_constant(f) -> FixedConstant:
    f = as_object(f, "a fixed constant")
    fitted = None if f["fitted"] is None else _read_uncertainty(f["fitted"])
    index = as_integer(f["index"], "a fixed constant's index", 0,
                       None if fitted is None else len(fitted.values) - 1)
    return FixedConstant(as_text(f["name"], "a name"), as_text(f["shown"], "a constant shown"),
                         as_real(f["value"]), fitted, index)


def _read_units(units, n_features: int) -> Units | None:
    if units is None:
        return None
    units = as_object(units, "the units")
    base = tuple(as_strings(units["base"], "the units' base"))
    features = as_reals(units["features"], 2 if base else None)
    target = None if units["target"] is None else as_reals(units["target"], 1)
    labels = tuple(as_strings(units["feature_labels"], "the units' labels"))
    if (features.size != n_features * len(base) or len(labels) != n_features
            or (target is not None and target.shape != (len(base),))
            or not np.all(np.abs(features) <= 1_000)
            or (target is not None and not np.all(np.abs(target) <= 1_000))):
        raise Invalid("the units are not exponents of each feature's and the target's "
                      "base units.")
    label = units["target_label"]
    return Units(base, features.reshape(n_features, len(base)), target, labels,
                 None if label is None else as_text(label, "the target's units"),
                 as_flag(units["dimensional_constant"], "dimensional_constant"))


def _units_disagreement(row: FrontRow, units: Units | None) -> str | None:
    """Why the units cannot describe ``row``'s tree (its units are checked to be consistent
    when shown), or None."""
    try:
        describe_units(row.expression, units)
    except (RuntimeError, ValueError, ArithmeticError, TypeError, IndexError) as err:
        return f"the file's units do not fit its formula ({err})"
    return None


#: The fields of an epoch's record that views compute with (the run's time, the learning
#: curve): there, and numbers. Others are kept as written, any JSON scalar (a later
#: version's fields).
_HISTORY_NUMBERS = ("epoch", "time", "best_loss", "best_criterion", "best_reward")


def _history_record(record) -> dict:
    """An epoch's record: numbers by name (non-finite ones written as text)."""
    record = as_object(record, "a history record")
    missing = [key for key in _HISTORY_NUMBERS if key not in record]
    if missing:
        raise Invalid(f"a history record has no {', '.join(missing)}.")
    read = {}
    for key, value in record.items():
        if key in _HISTORY_NUMBERS or (isinstance(value, str) and value in NONFINITE):
            read[key] = as_real(value) if key != "epoch" else as_integer(value, "an epoch", 0)
        elif value is None or isinstance(value, (str, bool, int, float)):
            read[key] = value
        else:
            raise Invalid(f"a history record's {short(key)} is {short(value)}, not a number.")
    return read


def _probes(value, n_features: int) -> np.ndarray:
    """(k, n_features) finite probe points, at most 16."""
    points = as_list(value, "the probe points", 16)
    read = as_reals(points, 2) if points else np.empty((0, n_features))
    if read.shape[1:] != (n_features,) or not np.isfinite(read).all():
        raise Invalid("its probe points are not finite points of the features.")
    return read


# ----------------------------------------------------------------- typed fields
def as_object(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise Invalid(f"{what} is {short(value)}, not an object.")
    return value


def as_list(value, what: str, most: int = _MAX_LIST) -> list:
    if not isinstance(value, list) or len(value) > most:
        raise Invalid(f"{what} is {short(value)}, not a list of at most {most}.")
    return value


def as_text(value, what: str, most: int = 100_000) -> str:
    if not isinstance(value, str) or len(value) > most:
        raise Invalid(f"{what} is {short(value)}, not a text of at most {most} characters.")
    return value


def as_strings(value, what: str, most: int = _MAX_LIST) -> list[str]:
    return [as_text(v, f"one of {what}") for v in as_list(value, what, most)]


def as_integer(value, what: str, low: int | None = None, high: int | None = None) -> int:
    if (isinstance(value, bool) or not isinstance(value, int)
            or (low is not None and value < low) or (high is not None and value > high)):
        raise Invalid(f"{what} is {short(value)}, not an integer from {low} to {high}.")
    return value


def as_flag(value, what: str) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"{what} is {short(value)}, not true or false.")
    return value


def as_flags(value, what: str) -> np.ndarray:
    return np.array([as_flag(v, what) for v in as_list(value, what)], dtype=bool)


def as_real(x) -> float:
    if isinstance(x, str):
        if x not in NONFINITE:
            raise Invalid(f"{short(x)} is not a number.")
        return NONFINITE[x]
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise Invalid(f"{short(x)} is not a number.")
    return float(x)


def as_reals(values, ndim: int | None = None) -> np.ndarray:
    """An array of reals from nested lists (of ``ndim`` dimensions where given)."""
    if isinstance(values, list):
        rows = [as_reals(v) for v in as_list(values, "an array")]
        if len({np.shape(row) for row in rows}) > 1:
            raise Invalid("an array's rows are of different lengths.")
        read = np.array(rows, dtype=np.float64) if rows else np.empty(0)
    else:
        read = np.float64(as_real(values))
    if ndim is not None and np.ndim(read) != ndim and np.size(read):
        raise Invalid(f"an array of {np.ndim(read)} dimensions where {ndim} belong.")
    return np.asarray(read, dtype=np.float64)


def short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
