"""pandas DataFrames: column names become the symbols of the formula.

Kepler's third law, T = sqrt(a³) (T in years, a in astronomical units), with an
extra column the law does not use. Fit on a DataFrame, get the formula in the
column names, and predict from a DataFrame whose columns come in another order.

Run:  python examples/pandas_named_columns.py    (about 15 s on 2 cores)
"""

import os

import numpy as np
import pandas as pd

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (
    dict(n_epochs=2, batch_size=32, ff_dim=64)
    if QUICK
    else dict(max_time=15.0, batch_size=250)
)

rng = np.random.default_rng(0)
df = pd.DataFrame(
    {
        "semi_major_axis": rng.uniform(0.3, 30.0, 200),  # a, in AU
        "eccentricity": rng.uniform(0.0, 0.3, 200),  # irrelevant to the period
    }
)
df["period"] = df["semi_major_axis"] ** 1.5  # T, in years

model = CADSRRegressor(device="cpu", random_state=0, **BUDGET)
model.fit(df[["semi_major_axis", "eccentricity"]], df["period"])

print("formula:", model.expression_)  # in the column names
print("symbols:", sorted(str(s) for s in model.expression_.free_symbols))
print("feature_names_in_:", list(model.feature_names_in_))
print("LaTeX:", model.latex())

# predict() wants the fitted columns in the fitted order (as in scikit-learn, a
# reordered frame is an error, not silently re-read): select them by name
new = pd.DataFrame({"eccentricity": [0.0, 0.1], "semi_major_axis": [1.0, 5.2]})
print(
    "predicted periods for a = 1 and 5.2 AU:",
    model.predict(new[list(model.feature_names_in_)]),
)

# the Pareto front is a DataFrame too (when pandas is installed)
print(model.equations_[["complexity", "loss", "equation"]].to_string(index=False))
