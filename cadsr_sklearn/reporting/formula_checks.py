"""Whether a formula file's parts agree: each row's probe points, and the file's checksum.

A formula file holds each formula of the front three ways: the token tree that
``predict`` evaluates, its SymPy form (what ``sympy()``, ``latex()`` and
``cadsr show`` print, rounded to the row's ``digits``) and its text (the
``formula`` column of ``equations_``). A file whose parts disagree (a
corrupted digit, a hand edit, tampering) would show one formula and predict
with another: a tree whose constants were tripled showed ``x1**(3.394 -
0.3243*x2)`` and predicted 2.2e9 where that formula gives 9.1. Two checks refuse
such a file when it is read, in this order (so that a row whose parts disagree
is named as such):

* **Probe points**: the writer evaluates each row's tree, its SymPy form, the
  form its constants are listed with (``constants_``), its text, and the text
  the SymPy form prints as when rounded to the row's digits, at fixed
  candidate points (:func:`candidate_points`: spread over scales and signs);
  keeps up to :data:`PROBES_PER_ROW` where all of them are finite and each
  agrees with what it is made from (the SymPy form with the tree, the
  constants' form with the SymPy form, the text with the rounded form printed),
  and writes them with the row (:func:`choose_probes`). The reader evaluates
  them all there again (:func:`disagreement`) and refuses the row where they
  do not agree. The SymPy form and the texts are evaluated from fixed tables,
  never as code (:mod:`cadsr_sklearn.reporting.formula_values`); a text's
  numbers are its decimal digits.

* **The checksum**: the writer seals the file with the SHA-256 of its content
  (:func:`checksum`, of the JSON with sorted keys, so that the indentation does
  not count); the reader refuses a file whose content no longer matches it. It
  finds any change, to any number (a loss, a covariance, a setting), and never
  refuses a file as written; but anyone can recompute it, so it finds
  corruption, not forgery. A file without one (written before it, or whose
  ``checksum`` field was removed to load an edit) is read with the first check
  only.

Why points the writer chose rather than points the reader makes up: a file
holds no training data, and the SymPy form equals the tree on the training rows
only. Simplification removes an ``Abs`` whose argument is positive there,
splits a ``log`` of a product, snaps a constant next to nothing to 0; the shown
digits are faithful there (:mod:`cadsr_sklearn.expressions.notation`), not
necessarily far away. Off the training domain the parts of a correct file may
disagree, so points made up by the reader would refuse correct files. Points
where the writer found them agreeing cannot, and on them a change to any part
shows: the parts agree to :data:`WRITE_RTOL` when written, and a change of a
constant moves them further unless its term vanishes at every probe point. The
reader allows :data:`READ_RTOL`, for another machine's round-off. The rounded
form is not compared with the tree: its digits are faithful on the training
rows, and its text is checked against the SymPy form it was printed from, so a
changed ``digits`` shows as a text that is no longer that form's. A formula
defined at none of the candidates (a domain far from all of them), or that
cannot be evaluated from the tables (a custom operator's SymPy form of a
function that is neither SciPy's nor registered), has no probe points: the
checksum alone guards its row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..expressions.notation import round_floats
from ..front.rows import FrontRow
from .formula_values import Unevaluable, sympy_values, text_values

__all__ = ["PROBES_PER_ROW", "WRITE_RTOL", "READ_RTOL", "candidate_points", "choose_probes",
           "disagreement", "checksum", "CHECKSUM_PREFIX"]

#: Probe points written with a row: enough that one constant's term is unlikely to
#: vanish at all of them, few enough that reading stays fast.
PROBES_PER_ROW = 4
#: How closely the forms of a row agree at the points the writer keeps.
WRITE_RTOL = 1e-9
#: How closely they must agree when read: 1000 x the writer's, for round-off of another
#: machine's libm; a changed constant moves a value by far more.
READ_RTOL = 1e-6
#: How the checksum field starts: the hash function, for a later one.
CHECKSUM_PREFIX = "sha256:"

_N_CANDIDATES = 48


def candidate_points(n_features: int) -> np.ndarray:
    """(48, n_features) deterministic points, each coordinate to four digits: a third in
    [0.5, 5] (where physical laws are written), a third spread over 1e-3 to 1e3, a third
    of either sign over 1e-2 to 1e2; interleaved, so that the first few span all three."""
    rng = np.random.default_rng(59)  # the points are written in the file: any fixed seed
    k = _N_CANDIDATES // 3
    typical = rng.uniform(0.5, 5.0, (k, n_features))
    spread = 10.0 ** rng.uniform(-3.0, 3.0, (k, n_features))
    signed = rng.choice([-1.0, 1.0], (k, n_features)) * 10.0 ** rng.uniform(-2.0, 2.0,
                                                                             (k, n_features))
    points = np.stack([typical, spread, signed], axis=1).reshape(-1, n_features)
    return np.vectorize(lambda v: float(f"{v:.4g}"))(points)


def _forms(row: FrontRow, symbols: Sequence[str], X: np.ndarray) -> dict[str, np.ndarray]:
    """Each part of ``row`` evaluated at the rows of ``X``: the tree, its SymPy form, the
    form of the listed constants with their values, the text, and the text the SymPy
    form prints as when rounded to the row's digits (as the writer wrote it).

    Raises :class:`~cadsr_sklearn.reporting.formula_values.Unevaluable` for a part the
    tables cannot evaluate.
    """
    with np.errstate(all="ignore"):
        tree = row.expression.evaluate(X)
    constants = row.constants
    values = np.asarray(constants.uncertainty.values, dtype=np.float64)
    if len(values) != len(constants.names):
        raise Unevaluable("its constants' form has another number of values than names")
    listed = np.hstack([X, np.broadcast_to(values, (len(X), len(values)))])
    return {"tree": tree,
            "SymPy form": sympy_values(row.equation, symbols, X),
            "constants' form": sympy_values(constants.form, [*symbols, *constants.names],
                                            listed),
            "text": text_values(row.formula, symbols, X),
            # evaluated as text: a rounded float's value is its decimal digits, not the
            # nearest binary fraction of SymPy's few bits of precision
            "text as printed": text_values(_printed(row.equation, row.digits), symbols, X)}


#: What evaluating or printing a formula of a malformed file can raise besides Unevaluable.
_EVALUATION_ERRORS = (TypeError, ValueError, ArithmeticError, AttributeError, IndexError,
                      RecursionError)


def _printed(equation, digits: int) -> str:
    """The text of the form as shown: its floats to ``digits`` digits."""
    try:
        return str(round_floats(equation, digits))
    except _EVALUATION_ERRORS as err:
        raise Unevaluable(f"it cannot be rounded as shown ({type(err).__name__})") from None


# (part, the part it must agree with): the text is printed from the SymPy form, which is
# the tree simplified, and the constants' form is the SymPy form with its floats named
_PAIRS = (("SymPy form", "tree"), ("constants' form", "SymPy form"),
          ("text", "text as printed"))


def _agreeing(forms: dict[str, np.ndarray], rtol: float) -> np.ndarray:
    """(n,) whether every part is finite and agrees with its reference at each point."""
    ok = np.ones(len(forms["tree"]), dtype=bool)
    for values in forms.values():
        ok &= np.isfinite(values)
    ok &= forms["tree"] != 0  # relative agreement needs a scale
    with np.errstate(all="ignore"):
        for part, reference in _PAIRS:
            ok &= np.abs(forms[part] - forms[reference]) <= rtol * np.abs(forms[reference])
    return ok


def choose_probes(row: FrontRow, symbols: Sequence[str]) -> list[list[float]]:
    """Up to :data:`PROBES_PER_ROW` candidate points where every part of ``row`` is finite
    and agrees (none where its forms cannot be evaluated, or agree at no candidate)."""
    points = candidate_points(len(symbols))
    try:
        good = _agreeing(_forms(row, symbols, points), WRITE_RTOL)
    except Exception:  # noqa: BLE001 - saving must not fail: the checksum guards this row
        return []
    return points[good][:PROBES_PER_ROW].tolist()


def disagreement(row: FrontRow, symbols: Sequence[str], probes: np.ndarray) -> str | None:
    """What disagrees in ``row`` at its ``probes`` ((k, n_features) points), or None."""
    if not len(probes):
        return None
    try:
        forms = _forms(row, symbols, probes)
    except Unevaluable as err:
        return f"its formula cannot be evaluated to check it ({err})"
    except _EVALUATION_ERRORS as err:  # a custom operator's function, SciPy's, failing here
        return f"its formula cannot be evaluated to check it ({type(err).__name__}: {err})"
    ok = _agreeing(forms, READ_RTOL)
    if ok.all():
        return None
    i = int(np.flatnonzero(~ok)[0])
    point = ", ".join(f"{s}={v:.4g}" for s, v in zip(symbols, probes[i]))
    values = ", ".join(f"the {part} {v[i]:.10g}" for part, v in forms.items())
    return f"its parts disagree at the probe point ({point}): {values}"


def checksum(document: dict[str, Any]) -> str:
    """The seal of a formula file's ``document`` (its ``checksum`` field left out): the
    SHA-256 of its JSON with sorted keys and no spaces, which any reader of the same
    JSON computes alike, however the file was indented."""
    content = {key: value for key, value in document.items() if key != "checksum"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)
    return CHECKSUM_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()
