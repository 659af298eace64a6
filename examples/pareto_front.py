"""Reading the Pareto front and choosing a model from it.

``model.expression_`` is the formula with the best reward (the BIC by default),
but the search also keeps the best formula at each complexity. Its Pareto front,
``model.equations_``, shows what each extra node buys; here we pick the simplest
formula within 1 % of the best held-out error, and use it to predict.

Run:  python examples/pareto_front.py    (about 20 s on 2 cores)
"""

import os
import tempfile
from pathlib import Path

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (
    dict(n_epochs=2, batch_size=32, ff_dim=64)
    if QUICK
    else dict(max_time=15.0, batch_size=250)
)

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 3, size=(400, 2))
y_true = X[:, 0] * np.sin(X[:, 1]) + 0.5 * X[:, 0]
y = y_true + rng.normal(0, 0.05, len(y_true))
X_train, y_train, X_val, y_val = X[:300], y[:300], X[300:], y[300:]

model = CADSRRegressor(device="cpu", random_state=0, **BUDGET).fit(X_train, y_train)

# equations_ is a DataFrame (a list of dicts without pandas): one row per complexity
front = model.equations_
print(front[["complexity", "loss", "reward", "selected", "equation"]].to_string(index=False))
print("\nchosen by the reward:", model.expression_)

# validation error of every formula on the front: Expression.evaluate is what predict uses
val_mse = []
for expression in front["expression"]:
    with np.errstate(all="ignore"):
        pred = expression.evaluate(X_val)
    val_mse.append(np.mean((pred - y_val) ** 2) if np.all(np.isfinite(pred)) else np.inf)
front = front.assign(val_mse=val_mse)
best = front["val_mse"].min()
choice = front[front["val_mse"] <= 1.01 * best].sort_values("complexity").iloc[0]
print(f"\nsimplest within 1 % of the best validation MSE ({best:.4g}):")
print(
    f"  k = {choice['complexity']}: {choice['equation']}  (validation MSE {choice['val_mse']:.4g})"
)

# predict with the chosen formula (the estimator itself always uses expression_)
y_hat = choice["expression"].evaluate(X_val)
print("first predictions:", np.round(y_hat[:3], 4), " truth:", np.round(y_true[300:303], 4))

# optional: the plot of the front, if matplotlib is installed
try:
    from cadsr_sklearn.reporting.plotting import plot_pareto_front
except ImportError:
    pass
else:
    if not QUICK:
        try:
            # into the temporary folder, not wherever the script was started from
            path = Path(tempfile.gettempdir()) / "cadsr_pareto_front.png"
            plot_pareto_front(model).savefig(path, dpi=120)
            print(f"wrote {path}")
        except ImportError:
            print("(install matplotlib for the plot)")
