"""A fitted model as one HTML page to share: formula, front, constants, plots, data, settings.

:func:`write_report` writes, and :func:`report_html` returns, a single
self-contained HTML file: no scripts, no stylesheets, fonts or images fetched
from anywhere, so it opens offline and can be mailed or archived as it is.
It holds

- the chosen formula, as MathML (which browsers render natively) with its
  text and LaTeX beneath, its complexity, training error and R²;
- the constants of :attr:`~cadsr_sklearn.CADSRRegressor.constants_` (the
  numbers of the formula as displayed) with their standard errors and
  confidence intervals, and the numbers fixed to simple ones with their
  intervals before;
- the Pareto front of :attr:`~cadsr_sklearn.CADSRRegressor.equations_`, one
  row per formula, the chosen one marked;
- the three plots of :mod:`cadsr_sklearn.reporting.plotting` as inline SVG: Pareto
  front, learning curve, and predicted vs. true, which needs data: a model
  keeps none, so it is drawn on the ``X, y`` given here, and named as such;
- what the search did (epochs, time, device, why it stopped, an interrupt),
  the features and targets, and every setting, those that differ from the
  defaults first.

A model fitted on several outputs gets one section per output. matplotlib is
needed only for the plots: without it the page says so where they would be.
Every text that comes from the user (column names, file names) is escaped.

Each output is read through its fitted front
(:class:`~cadsr_sklearn.front.fitted.FittedFront`, by the model's
``model_selection``; :func:`~cadsr_sklearn.multioutput.outputs_of`); formulas
are typeset by :func:`cadsr_sklearn.reporting.summary.formula_mathml`, as in a notebook.

Example
-------
>>> from cadsr_sklearn.reporting.html_report import write_report    # doctest: +SKIP
>>> write_report(model, "report.html", X_test, y_test,
...              data_name="the held-out rows")           # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import io
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..expressions.notation import html_text
from ..front.fitted import FittedFront
from ..front.rows import constant_rows
from ..multioutput import Output, outputs_of
from .summary import formula_mathml

__all__ = ["report_html", "write_report"]

_NO_MATPLOTLIB = (
    "No plots: matplotlib is not installed where this report was written "
    "(pip install 'cadsr-sklearn[plot]')."
)

# Inline only: a report must render the same offline, so nothing is linked.
_STYLE = """
:root { --chosen: #d62728; --line: #dcdcdc; --muted: #5f6368; --soft: #f6f7f8; }
* { box-sizing: border-box; }
body { margin: 0; color: #202124; background: #fff;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1140px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0 0 .15em; }
h2 { font-size: 1.3em; margin: 1.8em 0 .6em; padding-bottom: .2em;
  border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05em; margin: 1.4em 0 .5em; }
p { margin: .4em 0; }
.muted, figcaption, caption { color: var(--muted); }
.banner { border-left: 4px solid #e6a700; background: #fff8e1; padding: .5em .9em;
  margin: .8em 0; }
.formula { border-left: 4px solid var(--chosen); background: var(--soft);
  padding: .7em 1.1em; margin: .6em 0; overflow-x: auto; }
/* a font with OpenType MATH tables, for stretched radicals and fraction bars */
math { font-family: "STIX Two Math", "Cambria Math", "Latin Modern Math",
  "DejaVu Math TeX Gyre", math; }
.formula math { font-size: 1.45em; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: .88em; }
.textform { color: var(--muted); margin-top: .15em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15em 1.2em;
  margin: .5em 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .4em 0; }
caption { caption-side: bottom; text-align: left; font-size: .88em; padding-top: .35em; }
th, td { padding: .3em .65em; border-bottom: 1px solid var(--line); text-align: right;
  vertical-align: middle; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
th.left, td.left { text-align: left; }
td.num { white-space: nowrap; }
td.formula-cell { text-align: left; min-width: 16em; }
td.formula-cell math { font-size: 1.1em; math-style: normal; }
math mtext.column { background: #e8eef7; border-radius: 3px; padding: 0 .2em; }
tr.chosen td { background: #fdecea; }
tr.chosen td:first-child { box-shadow: inset 4px 0 var(--chosen); color: var(--chosen); }
tr.changed td { background: #eef4fd; }
.figures { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; align-items: start; }
.figures figure:first-child { grid-column: 1 / -1; }
@media (max-width: 900px) { .figures { grid-template-columns: 1fr; } }
figure { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { font-size: .9em; margin-top: .3em; }
figure.missing { display: flex; align-items: center; min-height: 8em; background: var(--soft); }
details summary { cursor: pointer; color: var(--muted); margin: .5em 0; }
footer { margin-top: 2.5em; font-size: .85em; color: var(--muted); }
@media print { figure, tr { break-inside: avoid; } }
"""


# ------------------------------------------------------------------ the page
def write_report(model, path: str | os.PathLike, X=None, y=None, *,
                 data_name: str | None = None) -> Path:
    """Write the report of a fitted model to ``path``, one self-contained HTML file.

    Parameters
    ----------
    model : CADSRRegressor
        A fitted estimator (one output or several).
    path : str or path-like
        The file to write (UTF-8); an existing one is replaced.
    X : array-like of shape (n_samples, n_features), optional
        Rows to plot predictions against ``y`` on, with the columns the model
        was fitted on. A model keeps no data, so without them the page has
        no predicted-vs-true plot and no row count or target range.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs), optional
        The true targets of ``X``. The page names the target(s) as the model
        does (``target_names_``, from the ``y`` it was fitted on).
    data_name : str, optional
        What ``X, y`` are, as the page names them ("the training data", "the
        held-out rows", a file name); by default "the data given to the report".

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    ValueError
        If only one of ``X`` and ``y`` is given, or they do not fit the model.
    """
    path = Path(path)
    path.write_text(report_html(model, X, y, data_name=data_name), encoding="utf-8")
    return path


def report_html(model, X=None, y=None, *, data_name: str | None = None) -> str:
    """The report of a fitted model as one self-contained HTML document.

    Parameters are those of :func:`write_report`, less ``path``.

    Returns
    -------
    str
        A complete HTML5 page: inline ``<style>``, MathML and SVG; no scripts
        and no references to other files or to the network.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "selections_")
    if (X is None) != (y is None):
        raise ValueError("Give both X and y (the rows and their true targets), or neither.")
    outputs = _outputs(model, y)
    data = None if X is None else _Data(X, data_name or "the data given to the report")
    several = len(outputs) > 1
    body = [_header(model, outputs)]
    for j, (output, y_j) in enumerate(outputs):
        heading = f"Output {j}: {output.target}" if several else None
        body.append(_output_section(output, data, y_j, heading, salt=f"cadsr-{j}"))
    body += [_data_section(outputs, data), _settings_section(model), _footer()]
    title = "; ".join(f"{o.target} = {o.front.chosen.formula}" for o, _ in outputs)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>CADSR report: {html_text(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        "<body>\n<main>\n" + "\n".join(body) + "\n</main>\n</body>\n</html>\n"
    )


@dataclass(frozen=True)
class _Data:
    """The rows given to the report, and what the page calls them."""

    X: Any
    name: str

    @property
    def n_rows(self) -> int:
        return len(self.X)


def _outputs(model, y) -> list[tuple[Output, Any]]:
    """(output, that output's y or None) for each output of ``model``."""
    outputs = outputs_of(model)
    if y is None:
        return [(output, None) for output in outputs]
    values = np.asarray(y, dtype=np.float64)
    values = values.reshape(len(values), -1)
    if values.shape[1] != len(outputs):
        raise ValueError(f"y has {values.shape[1]} column(s); the model has "
                         f"{len(outputs)} output(s).")
    return [(output, values[:, j]) for j, output in enumerate(outputs)]


def _rows(front: FittedFront) -> list[dict]:
    """The rows of the front (:attr:`pareto_front_`), each as ``equations_`` shows it."""
    return [row.record() for row in front.marked]


# -------------------------------------------------------------- the sections
def _header(model, outputs) -> str:
    several = len(outputs) > 1
    lines = ["<header>", "<h1>CADSR symbolic regression report</h1>",
             f"<p class=\"muted\">{len(outputs)} output{'s' if several else ''}; written by "
             f"cadsr-sklearn {html_text(__version__)}; model saved with cadsr-sklearn "
             f"{html_text(str(model.version_))}</p>"]
    if model.interrupted_:
        lines.append("<p class=\"banner\"><strong>Interrupted.</strong> The search was "
                     "stopped with Ctrl-C before its budget ran out; what follows is the best "
                     "it had found by then.</p>")
    lines.append("</header>")
    return "\n".join(lines)


def _output_section(output: Output, data, y, heading: str | None, salt: str) -> str:
    """Formula, run, constants, front and plots of one output."""
    parts = ["<section>", f"<h2>{html_text(heading or 'Chosen formula')}</h2>"]
    parts += [_formula_block(output.front), _run_facts(output.estimator),
              "<h3>Constants of the chosen formula</h3>", _constants_table(output.front),
              "<h3>Pareto front</h3>", _front_table(output.front),
              "<h3>Plots</h3>", _figures(output, data, y, salt), "</section>"]
    return "\n".join(parts)


def _formula_block(front: FittedFront) -> str:
    """The chosen formula: MathML, then its text, LaTeX and full precision for copying."""
    position, row = front.position, front.chosen.record()
    math_ml = formula_mathml(front, position, target=front.target, display="block")
    r2 = row.get("r2")
    target = front.target
    facts = [("Text", f"<code>{html_text(target)} = {html_text(row['formula'])}</code>"),
             ("LaTeX", f"<code>{html_text(front.latex())}</code>"),
             ("Full precision", f"<code>{html_text(str(row['equation']))}</code>"),
             ("Complexity", f"k = {html_text(str(row['complexity']))} "
                            "<span class=\"muted\">(nodes + fitted constants)</span>"),
             ("Training MSE", _num(row["loss"], ".4e"))]
    if r2 is not None:
        facts.append(("Training R²", _num(r2, ".6f")))
    units = front.units()
    if units is not None:
        facts.append(("Units", f"<code>{html_text(units)}</code>"))
    facts.append(("Chosen by", f"<code>model_selection={html_text(repr(front.rule))}</code>"))
    return f"<div class=\"formula\">{math_ml}</div>\n{_facts(facts)}"


def _run_facts(estimator) -> str:
    """What the search did: epochs, scored expressions, time, device, why it stopped."""
    history = estimator.history_
    seconds = history[-1]["time"] if history else 0.0
    stop = str(estimator.stop_reason_)
    if estimator.interrupted_:
        stop += " (Ctrl-C: the best formula found so far is kept)"
    facts = [("Epochs", f"{estimator.n_epochs_}"),
             ("Expressions scored", f"{estimator.n_evaluations_}"),
             ("Time", f"{seconds:.1f} s on {html_text(str(estimator.device_))}"),
             ("Stopped by", html_text(stop))]
    reduced = getattr(estimator, "reduction_", None)
    if reduced is not None:
        facts.append(("Dimensional reduction", html_text(reduced.sentence(estimator.found_by_))))
    return "<h3>Search</h3>\n" + _facts(facts)


def _constants_table(front: FittedFront) -> str:
    """``constants_`` as a table: the displayed formula's constants with their intervals,
    then the numbers fixed to simple ones with what the fit said before."""
    rows = constant_rows(front.chosen)
    if not rows:
        return "<p class=\"muted\">The formula has no fitted constants.</p>"
    any_fixed = any(r["fixed"] for r in rows)
    head = ("<th class=\"left\">constant</th><th class=\"left\">as shown</th><th>value</th>"
            "<th>std. error</th><th>95 % interval</th>"
            "<th title=\"fixed to a simple number: no parameter\">fixed</th>")
    if any_fixed:  # else the columns about fixed numbers say nothing
        head += ("<th>as fitted before</th><th>its 95 % interval</th><th>its std. error</th>"
                 "<th title=\"to the nearest rival simple number: the standard error must be "
                 "small beside it\">gap</th>")
    lines = []
    for r in rows:
        cells = [_cell("name", r["name"]), _cell("shown", r["shown"]), _cell("value", r["value"]),
                 _cell("std_error", r["std_error"]), _interval_cell(r["ci_low"], r["ci_high"]),
                 _cell("fixed", r["fixed"])]
        if any_fixed:
            cells += [_cell("fitted_value", r["fitted_value"]),
                      _interval_cell(r["fitted_ci_low"], r["fitted_ci_high"]),
                      _cell("fitted_std_error", r["fitted_std_error"]), _cell("gap", r["gap"])]
        lines.append("<tr>" + "".join(cells) + "</tr>")
    body = "\n".join(lines)
    caption = ("The numbers of the formula as displayed (c0, c1, … in the order its text "
               "shows them), with standard errors and intervals from its Jacobian on the rows "
               "the constants were fitted on (see <code>constants_</code>). A number fixed to "
               "a simple one (s0, s1, …, by snapping or as round-off from one) is no "
               "parameter and has none; its value, interval and standard error as fitted "
               "before are given, with the gap to the nearest rival simple number. "
               "An infinite error marks a constant the data cannot pin down.")
    return (f"<div class=\"scroll\"><table><caption>{caption}</caption>\n<tr>{head}</tr>\n"
            f"{body}\n</table></div>")


# The front's number columns, in this order: (column, header, format).
_FRONT_COLUMNS = (("complexity", "k", "d"), ("loss", "train MSE", ".3e"),
                  ("r2", "train R²", ".6f"), ("cv_loss", "CV MSE", ".3e"),
                  ("reward", "reward", ".5g"), ("criterion", "criterion", ".5g"))
_NOT_NUMBERS = {"equation", "formula", "expression", "constant_errors", "selected"}


def _front_table(front: FittedFront) -> str:
    """Every row of ``equations_``: its number (as ``index=`` takes it), scores and formula."""
    rows = _rows(front)
    known = [c for c in _FRONT_COLUMNS if c[0] in rows[0]]
    names = {c[0] for c in _FRONT_COLUMNS}
    # columns added to equations_ later are shown too, after the known ones
    extra = [(c, c, ".4g") for c in rows[0] if c not in names | _NOT_NUMBERS]
    columns = known + extra
    head = ("<tr><th title=\"the index= of predict, sympy, latex, export\">row</th>"
            + "".join(f"<th>{html_text(h)}</th>" for _, h, _ in columns)
            + "<th class=\"left\">formula</th></tr>")
    lines = []
    for i, row in enumerate(rows):
        mark = "★ " if row["selected"] else ""
        cells = "".join(f"<td class=\"num\">{_num(row.get(c), f)}</td>" for c, _, f in columns)
        formula = (f"{formula_mathml(front, i)}<div class=\"textform mono\">"
                   f"{html_text(row['formula'])}</div>")
        css = " class=\"chosen\"" if row["selected"] else ""
        lines.append(f"<tr{css}>"
                     f"<td class=\"num\">{mark}{i}</td>{cells}"
                     f"<td class=\"formula-cell\">{formula}</td></tr>")
    caption = ("Simplest first; each row fits the training data better than every row above "
               "it. ★ marks the chosen formula; <code>row</code> is the <code>index=</code> "
               "of <code>predict</code>, <code>sympy</code> and <code>export</code>.")
    return (f"<div class=\"scroll\"><table><caption>{caption}</caption>\n{head}\n"
            + "\n".join(lines) + "\n</table></div>")


def _data_section(outputs, data) -> str:
    """The features (and the symbols that stand for them), the targets, the rows given."""
    first = outputs[0][0].front  # every output has the same features, and their units
    columns, symbols = first.columns, first.symbols
    renamed = any(s != c for s, c in zip(symbols, columns))
    units = list(first.data_units.feature_labels) if first.data_units is not None else None
    head = "<tr><th class=\"left\">feature</th>" + (
        "<th class=\"left\">symbol in the formulas</th>" if renamed else "") + (
        "<th class=\"left\">units</th>" if units else "") + "</tr>"
    body = "\n".join(
        f"<tr><td class=\"left\">{html_text(c)}</td>"
        + (f"<td class=\"left mono\">{html_text(s)}</td>" if renamed else "")
        + (f"<td class=\"left mono\">{html_text(units[i])}</td>" if units else "") + "</tr>"
        for i, (c, s) in enumerate(zip(columns, symbols)))
    facts = [("Features", f"{len(columns)}"),
             ("Target" + ("s" if len(outputs) > 1 else ""),
              ", ".join(html_text(output.target) for output, _ in outputs))]
    for output, y in outputs:
        spread = []
        variance = output.front.y_variance
        if variance is not None:
            spread.append(f"standard deviation {_num(math.sqrt(variance))} in training")
        if y is not None:
            spread.append(f"from {_num(np.nanmin(y), '.6g')} to {_num(np.nanmax(y), '.6g')} in "
                          f"{html_text(data.name)}")
        if spread:
            facts.append((output.target, "; ".join(spread)))
    if data is None:
        facts.append(("Rows", "not recorded: a model keeps no data. Give the data to plot "
                              "predictions and count rows (<code>cadsr report MODEL --data "
                              "DATA.csv --target COLUMN</code>)."))
    else:
        facts.append(("Rows", f"{data.n_rows} in {html_text(data.name)}"))
    return ("<section>\n<h2>Data</h2>\n" + _facts(facts)
            + f"\n<div class=\"scroll\"><table>\n{head}\n{body}\n</table></div>\n</section>")


def _settings_section(model) -> str:
    """``get_params()``: the settings that differ from the defaults first, highlighted."""
    params = model.get_params(deep=False)
    defaults = _defaults(model)
    changed = [n for n in params if n not in defaults or not _same(params[n], defaults[n])]
    kept = [n for n in params if n not in changed]

    def table(names, css):
        lines = "\n".join(
            f"<tr{css}><td class=\"left mono\">{html_text(n)}</td>"
            f"<td class=\"left mono\">{html_text(repr(params[n]))}</td>"
            + (f"<td class=\"left mono muted\">{html_text(repr(defaults.get(n)))}</td>"
               if css else "")
            + "</tr>" for n in names)
        head = ("<tr><th class=\"left\">parameter</th><th class=\"left\">value</th>"
                + ("<th class=\"left\">default</th>" if css else "") + "</tr>")
        return f"<div class=\"scroll\"><table>\n{head}\n{lines}\n</table></div>"

    parts = ["<section>", "<h2>Settings</h2>"]
    if changed:
        parts += [f"<p>{len(changed)} setting{'s' if len(changed) > 1 else ''} differ from "
                  "the defaults:</p>", table(changed, " class=\"changed\"")]
    else:
        parts.append("<p>Every setting is the default.</p>")
    if kept:
        parts += [f"<details><summary>The {len(kept)} settings left at their defaults"
                  "</summary>", table(kept, ""), "</details>"]
    parts.append("</section>")
    return "\n".join(parts)


def _footer() -> str:
    return ("<footer>One self-contained file: no scripts, nothing fetched. Formulas are "
            "MathML, which current browsers draw; their text form is beneath each.</footer>")


# ---------------------------------------------------------------------- plots
def _figures(output: Output, data, y, salt: str) -> str:
    """The three plots as inline SVG, or a note where matplotlib or the data are missing."""
    try:
        import matplotlib  # noqa: F401 - optional: only the plots need it
    except ImportError:
        return f"<p class=\"banner\">{html_text(_NO_MATPLOTLIB)}</p>"
    from . import plotting

    estimator, target = output.estimator, output.target
    figures = [
        (_pareto_front(estimator),
         "The Pareto front: training loss against complexity; the star is the chosen "
         "formula."),
        (_sized(plotting.plot_learning_curve(estimator, y), (5.6, 5.0)),
         "Learning curve: the best formula's criterion (and training R²) after each epoch."),
    ]
    if data is not None:
        figures.append((_predicted_vs_true(estimator, target, data, y),
                        f"Predicted against true {html_text(target)} on {html_text(data.name)} "
                        f"({data.n_rows} rows); points on the dashed line are exact."))
    parts = [f"<figure>{_svg(fig, f'{salt}-{k}')}<figcaption>{caption}</figcaption></figure>"
             for k, (fig, caption) in enumerate(figures)]
    if data is None:
        parts.append("<figure class=\"missing\"><p>No predicted-vs-true plot: a model keeps "
                     "no data. Give some: <code>cadsr report MODEL --data DATA.csv --target "
                     "COLUMN</code>, or <code>write_report(model, path, X, y)</code>.</p>"
                     "</figure>")
    return "<div class=\"figures\">\n" + "\n".join(parts) + "\n</div>"


def _pareto_front(estimator):
    """The front's plot, wide and without the chosen formula's label.

    The formula is typeset above the plot; as a label beside the star it took a
    third of the plot's width.
    """
    from matplotlib.text import Annotation

    from . import plotting

    fig = plotting.plot_pareto_front(estimator, table=False)
    for text in fig.axes[0].texts:
        if isinstance(text, Annotation):
            text.remove()
    return _sized(fig, (10.0, 4.2))


def _sized(fig, inches: tuple[float, float]):
    """``fig`` at ``inches``: the page scales each plot to its column, and so its text too.

    Sized so that a plot's 10-point text shows at about the page's text size.
    """
    fig.set_size_inches(*inches)
    return fig


def _predicted_vs_true(estimator, target: str, data, y):
    from . import plotting

    fig = plotting.plot_predicted_vs_true(estimator, data.X, y,
                                          title=_mpl_text(f"Predicted vs. true, on {data.name}"))
    ax = fig.axes[0]
    ax.set_xlabel(_mpl_text(f"true {target}"))
    ax.set_ylabel(_mpl_text(f"predicted {target}"))
    return _sized(fig, (5.6, 5.0))


def _mpl_text(text: str) -> str:
    """``text`` for a matplotlib label: a ``$`` in a column name is no mathtext."""
    return text.replace("$", r"\$")


_XML_PROLOGUE = re.compile(r"\A.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
# Inline in HTML, SVG needs no namespace declarations; without them the page
# holds no URL at all, not even one that is never fetched.
_XMLNS = re.compile(r"\s+xmlns(:\w+)?=\"[^\"]*\"")


def _svg(fig, salt: str) -> str:
    """``fig`` as an ``<svg>`` element to inline in HTML: no prologue, metadata or namespaces.

    Each figure gets its own ``salt`` so that the ids of clip paths and markers
    of the several SVGs of one page never collide (and the page is the same
    each time it is written).
    """
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg")
    svg = _XML_PROLOGUE.sub("", buffer.getvalue(), count=1)
    return _XMLNS.sub("", _METADATA.sub("", svg, count=1))


# -------------------------------------------------------------------- helpers


def _num(value, spec: str = ".4g") -> str:
    """A number for a table: formatted, with NaN and infinities spelled out."""
    if value is None:
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return html_text(str(value))
    if math.isnan(x):
        return "<span class=\"muted\" title=\"not a number\">–</span>"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return format(int(x) if spec == "d" else x, spec)


def _cell(column: str, value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return f"<td>{'yes' if value else ''}</td>"
    if isinstance(value, (int, float, np.number)):
        # errors to three digits; values and interval ends to six, so that they differ
        spec = ".3g" if column in ("std_error", "fitted_std_error", "gap") else ".6g"
        return f"<td class=\"num\">{_num(value, spec)}</td>"
    return f"<td class=\"left mono\">{html_text(value)}</td>"


def _interval_cell(low, high) -> str:
    """An interval's ends to six digits, as ``[low, high]``; a dash when there is none."""
    if np.isnan(low) and np.isnan(high):
        return f"<td class=\"num\">{_num(low)}</td>"
    return f"<td class=\"num\">[{_num(low, '.6g')}, {_num(high, '.6g')}]</td>"


def _facts(pairs) -> str:
    """``(label, html)`` pairs as a definition list; the labels are escaped, the values not."""
    return ("<dl class=\"facts\">"
            + "".join(f"<dt>{html_text(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>")


def _defaults(model) -> dict:
    """The estimator's default parameters, read from its constructor."""
    parameters = inspect.signature(type(model).__init__).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not p.empty}


def _same(value, default) -> bool:
    """Whether a parameter is at its default: a list of operators equals the same tuple."""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return tuple(value) == tuple(default)
    try:
        return bool(value == default)
    except Exception:  # noqa: BLE001 - an array or an object without a truth value
        return repr(value) == repr(default)
