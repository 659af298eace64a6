"""How sure are the constants? Standard errors, confidence intervals, prediction errors.

Noisy measurements of a decay, y = 2.5·exp(−0.8·t) + noise. After the fit,
``constants_`` lists every number of the formula as it is displayed with its
standard error and 95 % confidence interval (and a number snapping fixed to a
simple one, such as −4/5, with the interval it was fitted with), and
``predict(X, return_std=True)`` gives the standard error of the formula's
value at new points: relative to the value, small inside the data and growing
outside it.

Run:  python examples/constant_uncertainty.py    (a 15 s search)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = dict(n_epochs=2, batch_size=32, ff_dim=32) if QUICK else dict(max_time=15.0,
                                                                         batch_size=250)

rng = np.random.default_rng(0)
t = rng.uniform(0, 4, size=(150, 1))
y = 2.5 * np.exp(-0.8 * t[:, 0]) + rng.normal(0, 0.05, 150)

model = CADSRRegressor(binary_operators=("add", "mul"), unary_operators=("exp", "neg"),
                       device="cpu", random_state=0, **BUDGET)
model.fit(t, y)
print("formula:", model.expression_)
chosen = next(row for row in model.pareto_front_ if row.selected)
print("with its constants named:", chosen.constants.form)
# c0, c1, … are the formula's own numbers; s0, s1, … numbers fixed to simple ones (snapping
# may fix -0.8 to the -4/5 it is): no standard error, but fitted_value and its interval
# say what the data gave before (snap_constants=False keeps every constant fitted)
for c in chosen.constants.rows():
    if c.fixed:
        print(f"{c.name} = {c.shown}: fixed; fitted {c.fitted_value:.6g}, "
              f"95 % [{c.fitted_ci_low:.6g}, {c.fitted_ci_high:.6g}]")
    else:
        print(f"{c.name} = {c.shown}: {c.value:.6g} ± {c.std_error:.2g}, "
              f"95 % [{c.ci_low:.6g}, {c.ci_high:.6g}]")

grid = np.array([[1.0], [3.0], [6.0]])  # the last is outside the data (t ≤ 4)
y_pred, y_std = model.predict(grid, return_std=True)
for (x,), mean, std in zip(grid, y_pred, y_std):
    print(f"t = {x:3.1f}: {mean:.4f} ± {1.96 * std:.4f} (95 %, {196 * std / mean:.1f} % of it)")
