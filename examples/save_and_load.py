"""Saving and loading a fitted model, and sharing its formula.

A fitted CADSRRegressor pickles with joblib (or pickle): the file holds the
formula, the Pareto front and the search history, no neural network. Only load
pickles you trust: unpickling can run code. To share a model with anyone, save
a formula file (``save_formula``): JSON that is data, which ``load_formula``
reads without running code and which predicts exactly as the model did. Or
share the formula alone (``sympy.srepr`` text, which SymPy parses back exactly).

Run:  python examples/save_and_load.py    (about 10 s on 2 cores)
"""

import os
import tempfile
from pathlib import Path

import joblib
import numpy as np
import sympy

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (
    dict(n_epochs=2, batch_size=32, ff_dim=64)
    if QUICK
    else dict(max_time=8.0, batch_size=250)
)

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(200, 2))
y = 3.0 * X[:, 0] * X[:, 1] + X[:, 0]

model = CADSRRegressor(device="cpu", random_state=0, **BUDGET).fit(X, y)
print("fitted:", model.expression_)

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "model.joblib"
    joblib.dump(model, path)
    print(f"saved {path.stat().st_size / 1024:.0f} KiB")
    loaded = joblib.load(path)  # only for files you trust!

assert np.array_equal(loaded.predict(X), model.predict(X), equal_nan=True)
print("loaded model predicts the same:", loaded.expression_)
print("fitted with cadsr-sklearn", loaded.version_, "on", loaded.device_)

# the safe way to share the model: a formula file, JSON that is data
with tempfile.TemporaryDirectory() as folder:
    path = model.save_formula(Path(folder) / "law.json")
    shared = CADSRRegressor.load_formula(path)  # reads data only: safe from anyone
y_std, shared_std = model.predict(X, return_std=True)[1], shared.predict(X, return_std=True)[1]
assert np.array_equal(shared.predict(X), model.predict(X), equal_nan=True)
assert np.array_equal(shared_std, y_std, equal_nan=True)
print("formula file loaded, the same predictions and standard errors:", shared.expression_)

# or the formula alone, as text. srepr() round-trips exactly
# whatever the column names; str() is for reading (see the FAQ)
text = sympy.srepr(model.expression_)
formula = sympy.sympify(text)  # parse it back anywhere
assert formula == model.expression_
used = {s.name: s for s in formula.free_symbols}
x0, x1 = (used.get(name, sympy.Symbol(name)) for name in ("x0", "x1"))  # NumPy columns' names
f = sympy.lambdify((x0, x1), formula, "numpy")
with np.errstate(all="ignore"):
    again = np.broadcast_to(f(X[:, 0], X[:, 1]), len(X))
print("shared formula:", model.expression_)
print(
    "re-evaluated from the text, max difference:", float(np.max(np.abs(again - model.predict(X))))
)
print("LaTeX:", model.latex())
print("the same expression in the CLI:  cadsr show law.json  (or model.joblib)")
