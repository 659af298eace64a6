"""Ctrl-C injected at evenly spaced moments of a fit: every fit that found a formula keeps it.

Each case runs ``perf/inject_interrupts.py`` for one size of table in a child process: a
real SIGINT at each of the moments, spaced over the fit's run, from its setup to its
report. Every fit must return a model that predicts finite values, whose shown formula
predicts what ``predict`` does and whose formula file and pickle load back to the same
predictions; the same for a warm start cut short, and for a checkpointed fit cut short and
then resumed. Only a Ctrl-C before the first epoch updated the policy may leave ``fit``
(nothing found yet). The sizes reach each path of the stage after the loop: one scorer
(300 rows), constants fitted on a subsample (3000) and a row batch (30 000).
"""

import importlib.util
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "perf" / "inject_interrupts.py"


def _harness():
    spec = importlib.util.spec_from_file_location("inject_interrupts", HARNESS)
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # for dataclasses
    spec.loader.exec_module(module)
    return module


#: Moments per mode: every size gets at least 20 fresh ones, as the issue asks.
MOMENTS = {"fresh": 20, "warm_start": 6, "checkpoint": 6}


@pytest.mark.slow
@pytest.mark.parametrize("rows", [300, 3000, 30_000])
def test_a_ctrl_c_at_any_moment_keeps_what_the_search_found(rows):
    harness = _harness()
    outcomes = harness.run(rows, MOMENTS)
    failures = [f"{o.mode} at {o.share:.0%}: {o.failure}" for o in outcomes if not o.ok]
    assert not failures, "\n\n".join(failures)
    for mode, moments in MOMENTS.items():
        group = [o for o in outcomes if o.mode == mode]
        assert len(group) == moments
        # most moments land in the fit, and most of those after its first update: the
        # moments span the run (a few are lost to a run faster than the one timed)
        interrupted = [o for o in group if o.interrupted]
        assert len(interrupted) >= moments / 2, harness.table(group)


#: Moments per mode for a search of two islands (each fit starts no cluster: the child keeps
#: its local cluster between fits).
ISLAND_MOMENTS = {"fresh": 8, "warm_start": 3, "checkpoint": 3}


@pytest.mark.slow
def test_a_ctrl_c_at_any_moment_keeps_what_the_islands_found():
    pytest.importorskip("dask.distributed")
    harness = _harness()
    outcomes = harness.run(300, ISLAND_MOMENTS, n_islands=2)
    failures = [f"{o.mode} at {o.share:.0%}: {o.failure}" for o in outcomes if not o.ok]
    assert not failures, "\n\n".join(failures)
    assert len(outcomes) == sum(ISLAND_MOMENTS.values())
    assert sum(bool(o.interrupted) for o in outcomes) >= len(outcomes) / 2, harness.table(
        outcomes)
