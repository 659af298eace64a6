"""Reproducibility: the same random_state gives the same search on CPU, in fresh processes.

Two interpreters (with different hash seeds, so set orders of strings differ)
fit the same data with ``random_state=0``; ``expression_``, the fitted
constants, ``equations_`` and ``history_`` must agree exactly, except the
wall-clock fields of the history. The first interpreter also fits with
``n_jobs=2`` (constants fitted in two worker processes), which must give the
same search again: so ``n_jobs=2`` in one fresh process equals ``n_jobs=None``
in another. (Starting the workers is most of the cost, so only one run has them.)
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
    X = rng.uniform(-2, 2, size=(120, 2))
    y = np.sin(2 * X[:, 0]) * np.exp(X[:, 1] / 3) + X[:, 1] ** 3 + rng.normal(0, 0.05, 120)

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
    for n_jobs in ((None, 2) if sys.argv[1] == "both" else (None,)):
        model = CADSRRegressor(n_epochs=4, batch_size=100, ff_dim=64, max_length=16, steps_per_epoch=2,
                               device="cpu", random_state=0, n_jobs=n_jobs).fit(X, y)
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
            [sys.executable, str(script), which], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
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
    assert first["None"]["history"], "no epoch ran"
    assert first["None"]["n_evaluations"] == 400 and first["None"]["stop"] == "n_epochs"
    for field in first["None"]:
        assert first["None"][field] == second["None"][field], field
    # constants fitted in two worker processes: the same search again
    for field in first["None"]:
        assert first["2"][field] == second["None"][field], ("n_jobs=2", field)
