"""What ``print(model)`` and a notebook show of a fitted estimator: the chosen formula
and the front.

``print(model)`` (``str``), IPython's text display (``_repr_pretty_``) and a
notebook's rich display (``_repr_mimebundle_``, ``_repr_html_``) show, under
scikit-learn's parameter repr, each output's chosen formula named after its
target, its complexity, training R² and (in a fit with units) its units, and
the Pareto front as a compact
table (:func:`text_summary`, :func:`html_summary`); below it, the user's
``guesses`` fitted, each with whether the chosen formula beats it on the
criterion. An unfitted estimator
shows scikit-learn's display alone::

    CADSRRegressor(max_time=20, random_state=0)
    T = 6.282*sqrt(L/g)
      k = 7, training R² = 0.999571; model_selection='reward' chose row 3 of 5
      row    k    train R²  formula
         0    2   -0.616600  sqrt(L)
         1    3    0.331445  L + 1
         2    5    0.939872  L + 8/g
      *  3    7    0.999571  6.282*sqrt(L/g)
         4    9    0.999572  sqrt((79*L/2 - 0.04689)/g)

``repr(model)`` stays scikit-learn's parameter repr: a pipeline's repr embeds
its steps' parameter reprs (never their ``__repr__``), and scikit-learn's
pretty printer wraps long parameter lists only for estimators that keep
``BaseEstimator.__repr__``. In the HTML, the summary comes above
scikit-learn's diagram of the estimator (its parameters and fitted
attributes), which a pipeline containing the estimator draws as before.
Every text that comes from the user (target and column names) is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .display import html_text, r2_from_loss, shortened
from .guesses import verdict
from .multioutput import outputs_of
from .selection import SelectionError, chosen_row
from .units import describe_units

__all__ = ["text_summary", "html_summary", "MAX_ROWS", "MAX_WIDTH"]

#: Rows of the front shown: the chosen one and the simplest others.
MAX_ROWS = 12

#: Characters of a formula shown in the text table before it is cut.
MAX_WIDTH = 90


@dataclass(frozen=True)
class _Output:
    """One output's estimator, its target's name, and what the summary says of it."""

    estimator: Any  # a fitted CADSRRegressor of one output
    target: str
    position: int | None  # the chosen row; None when model_selection names none
    problem: str | None  # why not (the SelectionError's message)


def _outputs(model) -> list[_Output]:
    outputs = []
    for estimator, name in outputs_of(model):
        try:  # the parent's model_selection decides, as in its attributes
            position, problem = chosen_row(estimator.selections_, model.model_selection), None
        except SelectionError as err:  # a display never raises: it says what is wrong
            position, problem = None, str(err)
        outputs.append(_Output(estimator, name, position, problem))
    return outputs


def _shown(rows: list, chosen: int | None) -> tuple[list[int], int]:
    """Positions of the rows to list (the chosen one and the simplest others, at most
    :data:`MAX_ROWS`), and how many are left out."""
    keep = list(range(len(rows)))
    if len(rows) > MAX_ROWS:
        chosen_ones = [] if chosen is None else [chosen]
        others = [i for i in keep if i != chosen][: MAX_ROWS - len(chosen_ones)]
        keep = sorted(others + chosen_ones)
    return keep, len(rows) - len(keep)


def _r2(estimator, loss: float) -> float | None:
    """Training R² of a row; None where the targets were constant."""
    variance = getattr(estimator, "y_variance_", None)
    return None if variance is None or not variance > 0 else r2_from_loss(loss, variance)


def _more(n: int) -> str:
    return f"{n} more row{'s' if n > 1 else ''}"


# ----------------------------------------------------------------------- text
def text_summary(model) -> str:
    """The lines ``print(model)`` adds under the parameter repr of a fitted ``model``."""
    lines = []
    outputs = _outputs(model)
    for j, output in enumerate(outputs):
        indent = "  " if len(outputs) > 1 else ""
        if len(outputs) > 1:
            lines.append(f"Output {j}:")
        rows = output.estimator.front_rows_
        if output.position is None:
            lines.append(f"{indent}{output.problem}")
        else:
            lines.append(f"{indent}{output.target} = {rows[output.position].formula}")
            lines.append(f"{indent}  {_facts(model, output, rows)}")
        lines += [indent + line for line in _symbols(output.estimator)]
        lines += [indent + "  " + line for line in _front_lines(output, rows)]
        lines += [indent + "  " + line for line in _guess_lines(output, rows)]
    return "\n".join(lines)


def _facts(model, output: _Output, rows: list) -> str:
    """Complexity, training R² and which rule chose the row."""
    row = rows[output.position]
    r2 = _r2(output.estimator, row.loss)
    facts = [f"k = {row.complexity}"] + ([f"training R² = {r2:.6f}"] if r2 is not None else [])
    units = describe_units(row.expression, getattr(output.estimator, "data_units_", None))
    facts += [f"units: {units}"] if units is not None else []
    return (", ".join(facts) + f"; model_selection={model.model_selection!r} chose row "
            f"{output.position} of {len(rows)}")


def _symbols(estimator) -> list[str]:
    """Which symbol stands for which column, where a column name is not one."""
    renamed = [f"{s} = {c!r}" for s, c in estimator._labels().items()]
    return [f"  symbols: {', '.join(renamed)}"] if renamed else []


def _front_lines(output: _Output, rows: list) -> list[str]:
    keep, left_out = _shown(rows, output.position)
    with_r2 = _r2(output.estimator, 0.0) is not None
    lines = ["row    k" + ("    train R²" if with_r2 else "") + "  formula"]
    for i in keep:
        row = rows[i]
        mark = "*" if i == output.position else " "
        r2 = f"  {_r2(output.estimator, row.loss):10.6f}" if with_r2 else ""
        lines.append(f"{mark}{i:3d} {row.complexity:4d}{r2}  {shortened(row.formula, MAX_WIDTH)}")
    if left_out:
        lines.append(f"… {_more(left_out)}: see equations_")
    return lines


def _guesses(output: _Output) -> list:
    return list(getattr(output.estimator, "guesses_", None) or [])  # older models have none


def _verdicts(output: _Output, rows: list) -> list[str]:
    """Whether the chosen formula beats each guess on the criterion (none without a choice)."""
    if output.position is None:
        return ["" for _ in _guesses(output)]
    return [verdict(rows[output.position], guess) for guess in _guesses(output)]


def _guess_lines(output: _Output, rows: list) -> list[str]:
    """Each guess fitted, beside the front, and whether the chosen formula beats it."""
    guesses = _guesses(output)
    if not guesses:
        return []
    with_r2 = _r2(output.estimator, 0.0) is not None
    lines = ["your guesses, fitted and scored as the search's formulas:",
             "guess  k" + ("    train R²" if with_r2 else "") + "  formula (as written)"]
    for i, (guess, said) in enumerate(zip(guesses, _verdicts(output, rows))):
        r2 = f"  {_r2(output.estimator, guess.loss):10.6f}" if with_r2 else ""
        text = shortened(f"{guess.formula}  ({guess.guess})", MAX_WIDTH)
        lines.append(f"{i:5d} {guess.complexity:2d}{r2}  {text}")
        if said:
            lines.append(f"      {said}")
    return lines


# ----------------------------------------------------------------------- HTML
_BOX = ("border-left:4px solid #d62728;background:rgba(127,127,127,.08);"
        "padding:.35em .8em;margin:.2em 0 .3em;overflow-x:auto")
_MUTED = "opacity:.75;font-size:.9em"
_CELL = "padding:.1em .6em;text-align:right;white-space:nowrap"


def html_summary(model) -> str:
    """The chosen formulas and fronts of a fitted ``model`` as an HTML fragment
    (inline styles only, so nothing leaks into the notebook's page)."""
    parts = ["<div class=\"cadsr-summary\" style=\"margin-bottom:.8em\">"]
    outputs = _outputs(model)
    for j, output in enumerate(outputs):
        rows = output.estimator.front_rows_
        if len(outputs) > 1:
            parts.append(f"<div style=\"font-weight:600\">Output {j}: "
                         f"{html_text(output.target)}</div>")
        if output.position is None:
            parts.append(f"<div style=\"{_BOX}\">{html_text(output.problem)}</div>")
        else:
            parts.append(f"<div style=\"{_BOX}\">{_formula(output)}</div>"
                         f"<div style=\"{_MUTED}\">{html_text(_facts(model, output, rows))}</div>")
        parts += [f"<div style=\"{_MUTED}\">{html_text(line.strip())}</div>"
                  for line in _symbols(output.estimator)]
        parts.append(_front_table(output, rows))
        parts.append(_guess_table(output, rows))
    parts.append("</div>")
    return "".join(parts)


def _formula(output: _Output) -> str:
    """The chosen formula typeset (MathML, column names as in the LaTeX), its text beneath."""
    from .html_report import formula_mathml  # the report's typesetting, one way for both

    row = output.estimator.front_rows_[output.position]
    try:
        typeset = formula_mathml(output.estimator, output.position, target=output.target)
    except Exception:  # noqa: BLE001 - a form SymPy cannot typeset: the text still shows
        typeset = ""
    text = f"{output.target} = {row.formula}"
    return (f"<div style=\"font-size:1.25em\">{typeset}</div>" if typeset else "") + (
        f"<code style=\"{_MUTED}\">{html_text(text)}</code>")


def _front_table(output: _Output, rows: list) -> str:
    keep, left_out = _shown(rows, output.position)
    with_r2 = _r2(output.estimator, 0.0) is not None
    head = ("<tr><th style=\"{0}\" title=\"the index= of predict, sympy, latex, export\">row"
            "</th><th style=\"{0}\">k</th>".format(_CELL)
            + (f"<th style=\"{_CELL}\">train R²</th>" if with_r2 else "")
            + f"<th style=\"{_CELL};text-align:left\">formula</th></tr>")
    body = []
    for i in keep:
        row = rows[i]
        chosen = i == output.position
        style = " style=\"font-weight:600;color:#d62728\"" if chosen else ""
        r2 = (f"<td style=\"{_CELL}\">{_r2(output.estimator, row.loss):.6f}</td>"
              if with_r2 else "")
        body.append(f"<tr{style}><td style=\"{_CELL}\">{'★ ' if chosen else ''}{i}</td>"
                    f"<td style=\"{_CELL}\">{row.complexity}</td>{r2}"
                    f"<td style=\"{_CELL};text-align:left\">"
                    f"<code>{html_text(row.formula)}</code></td>"
                    "</tr>")
    more = (f"<div style=\"{_MUTED}\">… {_more(left_out)}: see <code>equations_</code>"
            "</div>" if left_out else "")
    return (f"<details open><summary style=\"{_MUTED}\">Pareto front ({len(rows)} rows, "
            "simplest first)</summary><table style=\"border-collapse:collapse;"
            f"font-variant-numeric:tabular-nums\">{head}{''.join(body)}</table>{more}</details>")


def _guess_table(output: _Output, rows: list) -> str:
    guesses = _guesses(output)
    if not guesses:
        return ""
    with_r2 = _r2(output.estimator, 0.0) is not None
    head = (f"<tr><th style=\"{_CELL}\">guess</th><th style=\"{_CELL}\">k</th>"
            + (f"<th style=\"{_CELL}\">train R²</th>" if with_r2 else "")
            + "".join(f"<th style=\"{_CELL};text-align:left\">{h}</th>"
                      for h in ("fitted", "as written", "on the criterion")) + "</tr>")
    body = []
    for i, (guess, said) in enumerate(zip(guesses, _verdicts(output, rows))):
        r2 = (f"<td style=\"{_CELL}\">{_r2(output.estimator, guess.loss):.6f}</td>"
              if with_r2 else "")
        body.append(f"<tr><td style=\"{_CELL}\">{i}</td><td style=\"{_CELL}\">"
                    f"{guess.complexity}</td>{r2}"
                    f"<td style=\"{_CELL};text-align:left\">"
                    f"<code>{html_text(guess.formula)}</code></td>"
                    f"<td style=\"{_CELL};text-align:left\"><code>{html_text(guess.guess)}</code>"
                    "</td>"
                    f"<td style=\"{_CELL};text-align:left\">{html_text(said)}</td></tr>")
    return (f"<details open><summary style=\"{_MUTED}\">Your guesses ({len(guesses)}), "
            "fitted and scored as the search's formulas</summary><table style=\""
            f"border-collapse:collapse;font-variant-numeric:tabular-nums\">{head}"
            f"{''.join(body)}</table></details>")


