"""What the command lines read from their user, and the error that reports it.

Both ``cadsr`` (:mod:`cadsr_sklearn.cli`) and ``cadsr bench``
(:mod:`cadsr_sklearn.benchmarks.command`) report bad input as a
:class:`UsageError` (one line on stderr, exit status 2), and both read
estimator settings given as ``KEY=VALUE`` text (``--param``, ``--params``,
``--sweep``) with :func:`estimator_params`. They live here, below both
command lines, so that neither imports the other to share them.
"""

from __future__ import annotations

import ast

__all__ = ["UsageError", "estimator_params", "parse_value", "nested_constraints",
           "operator_complexity", "column_units"]


class UsageError(Exception):
    """A problem with the user's input: reported in one line, exit status 2."""


def estimator_params(pairs: list[str]) -> dict:
    """``--param KEY=VALUE`` options as estimator parameters (VALUE a Python literal, else text)."""

    from .estimator import CADSRRegressor

    known = CADSRRegressor().get_params()
    params = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"--param {pair!r}: expected KEY=VALUE, e.g. --param alpha=2.5")
        if key not in known:
            raise UsageError(f"--param {key}: not a CADSRRegressor parameter; "
                             f"choose from {' '.join(sorted(known))}")
        params[key] = parse_value(text)
    return params


def parse_value(text: str):
    """A ``--param`` value: a Python literal, else a float (``inf``, ``nan``), else the text."""
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return float(text)  # inf, nan: numbers literal_eval does not read
        except ValueError:
            return text


def nested_constraints(entries: list[str]) -> dict[str, dict[str, int]]:
    """``--nested OUTER:INNER=N …`` as ``nested_constraints``: ``sin:cos=0`` is
    ``{"sin": {"cos": 0}}``."""
    limits: dict[str, dict[str, int]] = {}
    for entry in entries:
        pair, _, limit = entry.partition("=")
        outer, _, inner = pair.partition(":")
        if not (outer.strip() and inner.strip() and limit.strip().isdigit()):
            raise UsageError(f"--nested {entry!r}: expected OUTER:INNER=N with N an integer "
                             ">= 0, e.g. --nested sin:cos=0 exp:exp=1")
        limits.setdefault(outer.strip(), {})[inner.strip()] = int(limit)
    return limits


def operator_complexity(entries: list[str]) -> dict[str, int]:
    """``--complexity OP=N …`` as ``operator_complexity``: ``sin=3`` is ``{"sin": 3}``."""
    weights: dict[str, int] = {}
    for entry in entries:
        name, _, weight = entry.partition("=")
        if not (name.strip() and weight.strip().isdigit() and int(weight) >= 1):
            raise UsageError(f"--complexity {entry!r}: expected OP=N with N an integer >= 1, "
                             "e.g. --complexity sin=3 pow=2")
        weights[name.strip()] = int(weight)
    return weights


def column_units(pairs: list[str], features: list[str], target: str) -> tuple[dict, str | None]:
    """``--units NAME=UNITS …`` as ``fit``'s ``X_units`` (by feature name) and ``y_units``."""
    units = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--units {pair!r}: expected NAME=UNITS, e.g. --units g=m/s^2")
        if name not in features and name != target:
            raise UsageError(f"--units {name}: not a column of the fit; the columns are "
                             f"{' '.join([*features, target])}")
        units[name] = text.strip()
    y_units = units.pop(target, None)
    missing = [f for f in features if f not in units]
    if missing:
        raise UsageError(f"--units gives no units for {' '.join(missing)}; give every "
                         f"feature's ('1' for a dimensionless one)")
    return units, y_units
