"""What a fit shows while it runs: the live front, in a terminal and in a notebook."""

import sys
import types

import numpy as np
import pytest

from cadsr_sklearn import Expression, Library
from cadsr_sklearn.reporting import progress
from cadsr_sklearn.scoring.scorer import Candidate

LIB = Library(1)


def _front():
    exprs = [Expression.from_names(["x0"], LIB),
             Expression.from_names(["mul", "c", "x0"], LIB, [2.5]),
             Expression.from_names(["add", "mul", "c", "c", "x0"], LIB, [0.125, 2.5])]
    return [Candidate(e, -float(k), loss) for k, (e, loss) in
            enumerate(zip(exprs, [4.0, 0.5, 0.01]))]


class _Handle:
    def __init__(self, shown):
        self.shown = [shown]

    def update(self, obj):
        self.shown.append(obj)


@pytest.fixture
def notebook(monkeypatch):
    """A fake Jupyter kernel: IPython's modules with a ZMQ shell and display handles."""
    handles = []

    class ZMQInteractiveShell:
        pass

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: ZMQInteractiveShell()
    display = types.ModuleType("IPython.display")

    def show(obj, display_id=False):
        assert display_id is True  # a handle, to update in place
        handles.append(_Handle(obj))
        return handles[-1]

    display.display = show
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return handles


def _progress(verbose):
    X = np.linspace(1, 2, 20)[:, None]
    return progress.Progress(10, None, verbose, 1.0, ["L<sub>"], X)


def test_in_a_notebook_the_front_is_one_html_table_updated_in_place(notebook):
    shown = _progress(2)
    assert len(notebook) == 1
    front = _front()
    shown.show_front(front[:2])
    shown.close(front)  # the fit's last front stays on the page
    assert len(notebook) == 1 and len(notebook[0].shown) == 3  # placeholder, then two updates
    last = notebook[0].shown[-1]._repr_html_()
    assert last.count("<tr>") == 4  # header and three formulas
    assert "2.5*L&lt;sub&gt; + 0.125" in last  # the column name escaped, not markup
    assert "<td>0.99000</td>" in last  # R² = 1 − 0.01 / 1


def test_outside_a_notebook_there_is_no_handle(monkeypatch, notebook):
    monkeypatch.delitem(sys.modules, "IPython")
    assert _progress(2).live is None and notebook == []
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    sys.modules["IPython"].get_ipython = lambda: None  # IPython imported, no kernel
    assert _progress(2).live is None and notebook == []


def test_the_bar_alone_shows_no_table(notebook):
    assert _progress(1).live is None and notebook == []


def test_in_a_terminal_the_front_is_text_above_the_bar(capsys):
    shown = _progress(2)
    shown.show_front(_front())
    shown.close()
    err = capsys.readouterr().err
    assert "   k        R2  formula" in err and "2.5*L<sub> + 0.125" in err
