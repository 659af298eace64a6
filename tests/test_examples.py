"""Every script in examples/ runs to the end with a tiny budget (CADSR_EXAMPLES_QUICK=1).

All examples run in one child process, each as ``__main__`` in a fresh namespace
and a scratch working directory, so torch is imported once; each example still
gets its own pass/fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))

_DRIVER = r"""
import contextlib, io, json, os, runpy, sys, traceback
results = {}
for path in sys.argv[1:]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        results[os.path.basename(path)] = {"ok": True, "out": out.getvalue()}
    except BaseException:
        error = traceback.format_exc()
        results[os.path.basename(path)] = {"ok": False, "out": out.getvalue(), "error": error}
print("@@RESULTS@@" + json.dumps(results))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    pytest.importorskip("pandas")  # pareto_front.py and pandas_named_columns.py need it
    cwd = tmp_path_factory.mktemp("examples")
    env = dict(os.environ, CADSR_EXAMPLES_QUICK="1", MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *(str(EXAMPLES / s) for s in SCRIPTS)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    marker = done.stdout.rfind("@@RESULTS@@")
    assert marker >= 0, f"the example driver crashed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return json.loads(done.stdout[marker + len("@@RESULTS@@") :])


def test_there_are_examples():
    assert len(SCRIPTS) >= 6


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs(results, script):
    result = results[script]
    assert result["ok"], f"{script} failed:\n{result['out'][-2000:]}\n{result.get('error')}"
    assert result["out"].strip(), f"{script} printed nothing"
