"""Every script in perf/ runs to the end in its smoke mode (``--smoke``: tiny sizes).

A benchmark nobody runs rots: an API it calls changes and nobody notices until the
day it is needed. Each script runs in a child process of its own, as a user runs it
(``python perf/NAME.py --smoke``), from a scratch working directory; a script without
``--smoke`` fails here (argparse's exit status 2), it is not skipped.

Most of a smoke run is the child's start (imports, loading the compiled kernels), which
waits on the disk as much as on a core, so two run at a time: the module's first test
starts the runs of every script the session selected, and each script's test reads its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PERF = Path(__file__).resolve().parent.parent / "perf"
SCRIPTS = sorted(p.name for p in PERF.glob("*.py"))
TIMEOUT = 180  # seconds: a smoke run takes a few; a hung one fails instead of stalling
AT_ONCE = 2


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess | subprocess.TimeoutExpired:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    try:
        return subprocess.run([sys.executable, str(PERF / script), "--smoke"], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as expired:
        return expired


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory) -> dict:
    """Each selected script's finished run (or its timeout) and its working directory."""
    selected = [item.callspec.params["script"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_the_script_runs_in_smoke_mode"]
    folders = {script: tmp_path_factory.mktemp(script.removesuffix(".py"))
               for script in selected}
    with ThreadPoolExecutor(AT_ONCE) as pool:
        done = dict(zip(folders, pool.map(_run, folders, folders.values())))
    return {script: (done[script], folders[script]) for script in folders}


def test_there_are_scripts():
    assert len(SCRIPTS) >= 18, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_runs_in_smoke_mode(script, runs):
    done, folder = runs[script]
    assert not isinstance(done, subprocess.TimeoutExpired), (
        f"{script} --smoke ran past {TIMEOUT} s")
    assert done.returncode == 0, (f"{script} --smoke exited with {done.returncode}:\n"
                                  f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    assert done.stdout.strip(), f"{script} --smoke printed nothing"
    assert not any(folder.iterdir()), f"{script} --smoke left files in its working directory"
