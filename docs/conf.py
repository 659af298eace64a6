"""Sphinx configuration for the cadsr-sklearn documentation.

Build (warnings are errors):

    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

from cadsr_sklearn import __version__  # noqa: E402

project = "cadsr-sklearn"
author = "cadsr-sklearn developers"
copyright = "cadsr-sklearn developers; BSD-3-Clause"  # noqa: A001
version = release = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "experiments", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# --- autodoc / numpydoc
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- MyST (for the Markdown pages, e.g. benchmarks.md)
myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3

# --- HTML
html_theme = "furo"
html_title = f"cadsr-sklearn {release}"
html_static_path = ["_static"]
html_theme_options = {"navigation_with_keys": True}


# --- docstrings: plain-text absolute values such as |c| or |y| are not RST substitutions
_ABS = re.compile(r"(?<![\\|`])\|([^|\s`][^|`\n]*?)\|(?![_|])")


def _escape_bars(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if _ABS.search(line) and not line.lstrip().startswith(("+", "|")):
            lines[i] = _ABS.sub(lambda m: "\\|" + m.group(1) + "\\|", line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars, priority=100)
