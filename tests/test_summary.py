"""What ``print(model)`` and a notebook show: the chosen formula and the front when fitted."""

from __future__ import annotations

import html

import numpy as np
import pytest
from budgets import TINY
from sklearn import config_context
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_html_repr

from cadsr_sklearn import CADSRRegressor

pd = pytest.importorskip("pandas")

TARGET = "T <b>"  # markup, were it not escaped


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0.5, 2.0, (60, 2)), columns=["L", "g & h"])
    y = pd.Series(2 * np.pi * np.sqrt(X["L"] / X["g & h"]), name=TARGET)
    return CADSRRegressor(**TINY).fit(X, y)


def test_unfitted_it_is_scikit_learns_parameter_repr():
    model = CADSRRegressor(max_time=10)
    assert str(model) == repr(model) == "CADSRRegressor(max_time=10)"
    assert model._repr_mimebundle_()["text/plain"] == repr(model)
    page = model._repr_html_inner()
    assert "sk-top-container" in page and "cadsr-summary" not in page


def test_print_shows_the_chosen_formula_and_the_front(fitted):
    text = str(fitted)
    rows = fitted.pareto_front_
    chosen = fitted.selections_["criterion"]
    assert text.startswith(repr(fitted) + "\n")  # the parameters first, then the fit
    lines = text.splitlines()
    assert f"{TARGET} = {rows[chosen].formula}" in lines
    assert "symbols: g_h = 'g & h'" in text
    assert f"model_selection='criterion' chose row {chosen} of {len(rows)}" in text
    for i, row in enumerate(rows):
        mark = "*" if i == chosen else " "
        assert any(line.strip().startswith(f"{mark}{i:3d}".strip()) and row.formula in line
                   for line in lines)
    # repr() stays the parameter repr: pipelines embed it
    assert repr(fitted).startswith("CADSRRegressor(") and " = " not in repr(fitted)


def test_the_text_follows_model_selection_and_never_raises(fitted):
    try:
        fitted.set_params(model_selection="accuracy")
        last = len(fitted.pareto_front_) - 1
        assert f"chose row {last} of" in str(fitted)
        fitted.set_params(model_selection="cv")  # not computed by this fit
        assert "refit" in str(fitted) and "refit" in fitted._repr_html_inner()
        estimator_html_repr(make_pipeline(StandardScaler(), fitted))  # a pipeline draws too
    finally:
        fitted.set_params(model_selection="criterion")


def test_ipython_shows_the_same_text(fitted):
    class Printer:
        def text(self, value):
            self.value = value

    printer = Printer()
    fitted._repr_pretty_(printer, cycle=False)
    assert printer.value == str(fitted)


def test_the_notebook_gets_formula_and_front_above_scikit_learns_diagram(fitted):
    bundle = fitted._repr_mimebundle_()
    assert bundle["text/plain"] == str(fitted)
    page = bundle["text/html"]
    assert "cadsr-summary" in fitted._repr_html_()  # the property sklearn defines, too
    assert html.escape(TARGET) in page and TARGET not in page  # escaped, not markup
    assert "<math" in page and "g &amp; h" in page  # typeset with the column's own name
    for row in fitted.pareto_front_:
        assert html.escape(row.formula) in page
    assert page.index("cadsr-summary") < page.index("sk-top-container")  # then the diagram
    with config_context(display="text"):  # as for any estimator: no HTML then
        assert set(fitted._repr_mimebundle_()) == {"text/plain"}
        assert not hasattr(fitted, "_repr_html_")


def test_a_pipeline_shows_as_it_does_for_any_estimator(fitted):
    pipeline = make_pipeline(StandardScaler(), fitted)
    text = repr(pipeline)
    assert "CADSRRegressor(" in text and " = " not in text
    # scikit-learn's printer wraps the parameters (it would not with an own __repr__)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert str(pipeline) == text
    assert "sk-top-container" in estimator_html_repr(pipeline)
