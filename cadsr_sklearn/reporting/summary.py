"""What ``print(model)`` and a notebook show of a fitted estimator: the chosen formula
and the front.

``print(model)`` (``str``), IPython's text display (``_repr_pretty_``) and a
notebook's rich display (``_repr_mimebundle_``, ``_repr_html_``) show, under
scikit-learn's parameter repr, each output's chosen formula named after its
target, its complexity, training R² and (in a fit with units) its units, the
numbers it fixed to simple ones (each with the value and standard error it was
fitted with and the gap to its nearest rival simple number), and
the Pareto front as a compact table (:func:`text_summary`, :func:`html_summary`);
below it, the user's ``guesses`` fitted, each with whether the chosen formula
beats it on the criterion. An unfitted estimator shows scikit-learn's display
alone; a fitted one, for instance::

    CADSRRegressor(max_time=20, random_state=0)
    T = 6.282*sqrt(L/g)
      k = 7, training R² = 0.999571; model_selection='criterion' chose row 3 of 5
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

:class:`FittedDisplay` gives the estimator these displays; :func:`formula_mathml`
typesets a formula as MathML, for the notebook and the HTML report
(:mod:`cadsr_sklearn.reporting.html_report`) alike. Each output is read through its
:class:`~cadsr_sklearn.front.fitted.FittedFront`
(:func:`~cadsr_sklearn.multioutput.outputs_of`).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

from ..expressions.notation import DISPLAY_DIGITS, html_text, shortened
from ..front.fitted import FittedFront
from ..front.rows import constant_rows, verdict
from ..multioutput import Output, outputs_of
from ..front.selection import SelectionError

__all__ = ["FittedDisplay", "text_summary", "html_summary", "formula_mathml", "MAX_ROWS",
           "MAX_WIDTH"]

#: Rows of the front shown: the chosen one and the simplest others.
MAX_ROWS = 12

#: Characters of a formula shown in the text table before it is cut.
MAX_WIDTH = 90


class FittedDisplay:
    """``print``, IPython's and Jupyter's displays of an estimator: scikit-learn's, and when
    fitted, the chosen formula and the front (a mixin of
    :class:`~cadsr_sklearn.CADSRRegressor`).

    ``repr()`` stays scikit-learn's parameter repr: a pipeline's repr embeds it,
    and scikit-learn's pretty printer wraps long parameter lists only for
    estimators that keep ``BaseEstimator.__repr__``. ``print()`` and the
    notebook add the fitted formula and front.
    """

    def __str__(self) -> str:
        """scikit-learn's parameter repr; when fitted, also the chosen formula and the front."""
        params = self.__repr__()
        if "selections_" not in vars(self):
            return params
        return f"{params}\n{text_summary(self)}"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text display: what ``print`` shows."""
        printer.text(f"{type(self).__name__}(...)" if cycle else str(self))

    def _repr_html_inner(self) -> str:
        """The notebook's HTML: the summary of a fitted model above scikit-learn's
        diagram of the estimator."""
        from sklearn.utils import estimator_html_repr

        diagram = estimator_html_repr(self)
        if "selections_" not in vars(self):
            return diagram
        return html_summary(self) + diagram

    def _repr_mimebundle_(self, **kwargs) -> dict[str, str]:
        """What Jupyter shows: ``print``'s text, and the HTML unless scikit-learn's
        ``display`` configuration is ``"text"`` (as for any estimator)."""
        from sklearn import get_config

        output = {"text/plain": str(self)}
        if get_config()["display"] == "diagram":
            output["text/html"] = self._repr_html_inner()
        return output


@dataclass(frozen=True)
class _Shown:
    """One output, and which row the summary says was chosen."""

    output: Output
    position: int | None  # the chosen row; None when model_selection names none
    problem: str | None  # why not (the SelectionError's message)

    @property
    def front(self) -> FittedFront:
        return self.output.front

    @property
    def target(self) -> str:
        return self.output.target


def _outputs(model) -> list[_Shown]:
    shown = []
    for output in outputs_of(model):  # read by the model's model_selection
        try:
            position, problem = output.front.position, None
        except SelectionError as err:  # a display never raises: it says what is wrong
            position, problem = None, str(err)
        shown.append(_Shown(output, position, problem))
    return shown


def _listed_rows(rows: list, chosen: int | None) -> tuple[list[int], int]:
    """Positions of the rows to list (the chosen one and the simplest others, at most
    :data:`MAX_ROWS`), and how many are left out."""
    keep = list(range(len(rows)))
    if len(rows) > MAX_ROWS:
        chosen_ones = [] if chosen is None else [chosen]
        others = [i for i in keep if i != chosen][: MAX_ROWS - len(chosen_ones)]
        keep = sorted(others + chosen_ones)
    return keep, len(rows) - len(keep)


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
        if output.position is None:
            lines.append(f"{indent}{output.problem}")
        else:
            lines.append(f"{indent}{output.target} = {output.front.rows[output.position].formula}")
            lines.append(f"{indent}  {_facts(output)}")
            lines += [indent + line for line in _fixed_numbers(output)]
            lines += [indent + line for line in _reduction(output)]
        lines += [indent + line for line in _symbols(output.front)]
        lines += [indent + "  " + line for line in _front_lines(output)]
        lines += [indent + "  " + line for line in _guess_lines(output)]
    return "\n".join(lines)


def _facts(output: _Shown) -> str:
    """Complexity, training R² and which rule chose the row."""
    front = output.front
    row = front.rows[output.position]
    r2 = front.r2(row.loss)
    facts = [f"k = {row.complexity}"] + ([f"training R² = {r2:.6f}"] if r2 is not None else [])
    units = front.units(row)
    facts += [f"units: {units}"] if units is not None else []
    return (", ".join(facts) + f"; model_selection={front.rule!r} chose row "
            f"{output.position} of {len(front.rows)}")


def _fixed_numbers(output: _Shown) -> list[str]:
    """The chosen formula's numbers fixed to simple ones, each with the value and standard
    error it was fitted with and the gap to its nearest rival (see ``constants_``)."""
    fixed = [r for r in constant_rows(output.front.rows[output.position])
             if r["fixed"] and math.isfinite(r["fitted_value"])]
    described = [f"{r['shown']} (fitted {r['fitted_value']:.6g} ± {r['fitted_std_error']:.2g}, "
                 f"gap {r['gap']:.3g})" for r in fixed]
    return [f"  fixed numbers: {'; '.join(described)}"] if described else []


def _reduction(output: _Shown) -> list[str]:
    """The dimensionless groups the search used, and whether the chosen formula came from
    their search (:mod:`cadsr_sklearn.search.reduction`)."""
    model = output.output.estimator
    reduced = getattr(model, "reduction_", None)
    return [f"  {reduced.sentence(model.found_by_)}"] if reduced is not None else []


def _symbols(front: FittedFront) -> list[str]:
    """Which symbol stands for which column, where a column name is not one."""
    renamed = [f"{s} = {c!r}" for s, c in front.labels.items()]
    return [f"  symbols: {', '.join(renamed)}"] if renamed else []


def _with_r2(front: FittedFront) -> bool:
    """Whether rows have a training R² (not where the targets were constant)."""
    return front.r2(0.0) is not None


def _front_lines(output: _Shown) -> list[str]:
    front = output.front
    keep, left_out = _listed_rows(front.rows, output.position)
    lines = ["row    k" + ("    train R²" if _with_r2(front) else "") + "  formula"]
    for i in keep:
        row = front.rows[i]
        mark = "*" if i == output.position else " "
        r2 = f"  {front.r2(row.loss):10.6f}" if _with_r2(front) else ""
        lines.append(f"{mark}{i:3d} {row.complexity:4d}{r2}  {shortened(row.formula, MAX_WIDTH)}")
    if left_out:
        lines.append(f"… {_more(left_out)}: see equations_")
    return lines


def _verdicts(output: _Shown) -> list[str]:
    """Whether the chosen formula beats each guess on the criterion (none without a choice)."""
    guesses = output.front.guesses
    if output.position is None:
        return ["" for _ in guesses]
    return [verdict(output.front.rows[output.position], guess) for guess in guesses]


def _guess_lines(output: _Shown) -> list[str]:
    """Each guess fitted, beside the front, and whether the chosen formula beats it."""
    front = output.front
    if not front.guesses:
        return []
    lines = ["your guesses, fitted and scored as the search's formulas:",
             "guess  k" + ("    train R²" if _with_r2(front) else "") + "  formula (as written)"]
    for i, (guess, said) in enumerate(zip(front.guesses, _verdicts(output))):
        r2 = f"  {front.r2(guess.loss):10.6f}" if _with_r2(front) else ""
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
        if len(outputs) > 1:
            parts.append(f"<div style=\"font-weight:600\">Output {j}: "
                         f"{html_text(output.target)}</div>")
        if output.position is None:
            parts.append(f"<div style=\"{_BOX}\">{html_text(output.problem)}</div>")
        else:
            parts.append(f"<div style=\"{_BOX}\">{_formula(output)}</div>"
                         f"<div style=\"{_MUTED}\">{html_text(_facts(output))}</div>")
        parts += [f"<div style=\"{_MUTED}\">{html_text(line.strip())}</div>"
                  for line in _symbols(output.front) + _reduction(output)]
        parts.append(_front_table(output))
        parts.append(_guess_table(output))
    parts.append("</div>")
    return "".join(parts)


def _formula(output: _Shown) -> str:
    """The chosen formula typeset (MathML, column names as in the LaTeX), its text beneath."""
    row = output.front.rows[output.position]
    try:
        typeset = formula_mathml(output.front, output.position, target=output.target)
    except Exception:  # noqa: BLE001 - a form SymPy cannot typeset: the text still shows
        typeset = ""
    text = f"{output.target} = {row.formula}"
    return (f"<div style=\"font-size:1.25em\">{typeset}</div>" if typeset else "") + (
        f"<code style=\"{_MUTED}\">{html_text(text)}</code>")


def _front_table(output: _Shown) -> str:
    front = output.front
    keep, left_out = _listed_rows(front.rows, output.position)
    head = _head(front, ("<th style=\"{0}\" title=\"the index= of predict, sympy, latex, "
                         "export\">row</th>").format(_CELL), ("formula",))
    body = []
    for i in keep:
        chosen = i == output.position
        style = " style=\"font-weight:600;color:#d62728\"" if chosen else ""
        body.append(f"<tr{style}>{_cells(front, f'★ {i}' if chosen else i, front.rows[i])}</tr>")
    more = (f"<div style=\"{_MUTED}\">… {_more(left_out)}: see <code>equations_</code>"
            "</div>" if left_out else "")
    return _table(f"Pareto front ({len(front.rows)} rows, simplest first)", head, body, more)


def _guess_table(output: _Shown) -> str:
    front = output.front
    if not front.guesses:
        return ""
    head = _head(front, f"<th style=\"{_CELL}\">guess</th>",
                 ("fitted", "as written", "on the criterion"))
    body = [f"<tr>{_cells(front, i, guess)}"
            f"<td style=\"{_CELL};text-align:left\"><code>{html_text(guess.guess)}</code></td>"
            f"<td style=\"{_CELL};text-align:left\">{html_text(said)}</td></tr>"
            for i, (guess, said) in enumerate(zip(front.guesses, _verdicts(output)))]
    return _table(f"Your guesses ({len(front.guesses)}), fitted and scored as the search's "
                  "formulas", head, body)


def _head(front: FittedFront, first: str, texts: tuple[str, ...]) -> str:
    """A table's header row: ``first``, k, the training R² where there is one, ``texts``."""
    return (f"<tr>{first}<th style=\"{_CELL}\">k</th>"
            + (f"<th style=\"{_CELL}\">train R²</th>" if _with_r2(front) else "")
            + "".join(f"<th style=\"{_CELL};text-align:left\">{h}</th>" for h in texts)
            + "</tr>")


def _cells(front: FittedFront, label, row) -> str:
    """A row's first cells: ``label``, its complexity, its training R² where there is one,
    its formula."""
    r2 = f"<td style=\"{_CELL}\">{front.r2(row.loss):.6f}</td>" if _with_r2(front) else ""
    return (f"<td style=\"{_CELL}\">{label}</td><td style=\"{_CELL}\">{row.complexity}</td>"
            f"{r2}<td style=\"{_CELL};text-align:left\"><code>{html_text(row.formula)}</code></td>")


def _table(summary: str, head: str, body: list[str], more: str = "") -> str:
    """A folding table, open, under ``summary``."""
    return (f"<details open><summary style=\"{_MUTED}\">{summary}</summary><table style=\""
            f"border-collapse:collapse;font-variant-numeric:tabular-nums\">{head}"
            f"{''.join(body)}</table>{more}</details>")


# ------------------------------------------------------------------- MathML
class _LabelledMathML(MathMLPresentationPrinter):
    """SymPy's presentation MathML, with column names for the symbols that stand for them.

    A column such as ``force [N]`` is the symbol ``force_N`` in a formula's
    text; the typeset formula shows the column's own name, as the LaTeX does.
    """

    def __init__(self, labels: dict[str, str]):
        super().__init__()
        self._labels = labels

    def _print_Symbol(self, sym, style="plain"):
        label = self._labels.get(sym.name)
        if label is None:
            return super()._print_Symbol(sym, style)
        text = self.dom.createElement("mtext")
        # SymPy's printer writes text nodes unescaped (so that its entities such as
        # &InvisibleTimes; pass through): a column name is escaped here.
        text.appendChild(self.dom.createTextNode(html.escape(label, quote=False)))
        text.setAttribute("class", "column")  # drawn as one unit: "a [AU]" is one name
        return text


def formula_mathml(front: FittedFront, index: int, target: str | None = None,
                   display: str = "inline") -> str:
    """Row ``index`` of ``front``, its formula as shown, as a ``<math>`` element
    (``target = …`` if given): the notebook's and the HTML report's typesetting."""
    expr = front.sympy(index, precision=DISPLAY_DIGITS)
    rhs = _typographic(_LabelledMathML(front.labels).doprint(expr))
    lhs = ""
    if target is not None:
        symbol_like = target.isidentifier()
        lhs = _LabelledMathML({} if symbol_like else {target: target}).doprint(
            sympy.Symbol(target)) + "<mo>=</mo>"
    alt = html_text(("" if target is None else f"{target} = ") + str(expr))
    return (f"<math display=\"{display}\" alttext=\"{alt}\"><mrow>{lhs}{rhs}</mrow></math>")


def _typographic(math_ml: str) -> str:
    """Minus signs for SymPy's hyphens, and an italic e for its double-struck ⅇ."""
    return (math_ml.replace("<mo>-</mo>", "<mo>&#x2212;</mo>").replace("<mn>-", "<mn>&#x2212;")
            .replace("<mi>&ExponentialE;</mi>", "<mi>e</mi>"))
