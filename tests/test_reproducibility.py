"""Reproducibility: the same random_state gives the same search on CPU, in fresh processes.

Two interpreters (with different hash seeds, so set orders of strings differ)
fit the same data with ``random_state=0``; ``expression_``, the fitted
constants, ``equations_`` and ``history_`` must agree exactly, except the
wall-clock fields of the history. The first interpreter also fits with
``n_jobs=2`` and ``n_jobs=None`` (every core: a batch's constants fitted and its
formulas evaluated on several threads), which must give the same search again:
so a threaded search in one fresh process equals a serial one in another. The
data has more rows than ``const_screen_samples``, so screening and the refits
of the batch leaders are part of what must agree.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import json
    import sys

    import numpy as np
    from cadsr_sklearn import CADSRRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 300)

    def summary(model):
        return {
            "expression": str(model.expression_),
            "tokens": list(model.best_expression_.tokens),
            "constants": [c.hex() for c in model.best_expression_.constants.tolist()],
            "equations": [[r["complexity"], repr(r["loss"]), repr(r["reward"]), str(r["equation"]),
                           bool(r["selected"])] for r in model.equations_.to_dict("records")],
            # wall-clock fields ("time", "time_sampling", ...) differ between runs by nature
            "history": [{k: repr(v) for k, v in h.items() if not k.startswith("time")}
                        for h in model.history_],
            "n_evaluations": model.n_evaluations_,
            "stop": model.stop_reason_,
        }

    out = {}
    for n_jobs in ((1, 2, None) if sys.argv[1] == "both" else (1,)):
        model = CADSRRegressor(n_epochs=4, batch_size=100, ff_dim=64, max_length=16,
                               steps_per_epoch=2, const_screen_samples=100, device="cpu",
                               random_state=0, n_jobs=n_jobs).fit(X, y)
        out[str(n_jobs)] = summary(model)
    print(json.dumps(out))
    """
)


@pytest.mark.slow  # a fresh interpreter: imports torch
def test_same_random_state_same_search_in_fresh_processes(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), which],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
        )
        for seed, which in (("1", "both"), ("2", "serial"))
    ]
    runs = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        runs.append(json.loads(out.strip().splitlines()[-1]))
    first, second = runs
    assert first["1"]["history"], "no epoch ran"
    assert len(first["1"]["history"]) == 4 and first["1"]["stop"] == "n_epochs"
    assert first["1"]["n_evaluations"] > 400  # the policy's 4 × 100, and the proposers'

    for field in first["1"]:
        assert first["1"][field] == second["1"][field], field
    # constants fitted and formulas evaluated on threads: the same search again
    for n_jobs in ("2", "None"):
        for field in first["1"]:
            assert first[n_jobs][field] == second["1"][field], (n_jobs, field)
