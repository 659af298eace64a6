"""Several targets at once, from a polars DataFrame.

A 2-D ``y`` gets one independent search per column: here the kinetic energy
and the momentum of a body from its mass and speed. The column names of the
DataFrame (polars here; pandas works the same) become the formulas' symbols.

Run:  python examples/multioutput_polars.py    (about 20 s on 2 cores)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (dict(n_epochs=2, batch_size=32, ff_dim=32) if QUICK
          else dict(max_time=10.0, batch_size=250))

rng = np.random.default_rng(0)
mass, speed = rng.uniform(0.5, 3, 200), rng.uniform(0.5, 3, 200)
try:
    import polars as pl

    X = pl.DataFrame({"mass": mass, "speed": speed})
    Y = pl.DataFrame({"energy": 0.5 * mass * speed**2, "momentum": mass * speed})
except ImportError:  # pip install polars; a NumPy array works too
    X, Y = np.c_[mass, speed], np.c_[0.5 * mass * speed**2, mass * speed]

model = CADSRRegressor(device="cpu", random_state=0, **BUDGET).fit(X, Y)
for name, formula in zip(["energy", "momentum"], model.expression_):
    print(f"{name} = {formula}")
print("predictions:", model.predict(X).shape, " R² (mean over outputs):", model.score(X, Y))
