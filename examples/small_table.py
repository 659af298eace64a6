"""A small real table: Kepler's third law from the six classical planets.

Six rows (semi-major axis a in AU, orbital period P in days; public values). With
this few rows a formula with as many constants as rows passes through any data, so
the search allows two constants, or one per three rows where that is more
(``max_constants="auto"``: two here)
and judges the answer by its description length (``criterion="mdl"``): a formula
gains nothing by fitting six points more closely than its residual degrees of freedom
can vouch for, and every literal and every digit of a constant is paid for. Then the
law is judged where it matters, on planets the fit never saw: Uranus and Neptune,
twice and three times as far out as Saturn.

Run:  python examples/small_table.py    (about 20 s)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = dict(n_epochs=2, batch_size=32, ff_dim=64) if QUICK else dict(max_time=20)

a = np.array([0.387098, 0.723332, 1.000000, 1.523679, 5.2044, 9.5826])  # AU
P = np.array([87.9691, 224.701, 365.256, 686.980, 4332.59, 10759.22])  # days

# The defaults. With four constants allowed (max_constants=10, held to rows - 2 = 4,
# which fit warns about with a SmallDataWarning) the criterion can prefer a formula that
# reproduces all six periods to their last digit with a correction term for Saturn,
# a**(3/2)*(365.3 - 0.001654*a**(13/4)), which misses Neptune by 29 %.
model = CADSRRegressor(random_state=0, **BUDGET).fit(a[:, None], P)

print("Law found:  P =", model.sympy(precision=4).subs("x0", "a"))
print("P at 3 AU:  %.0f days (Kepler: 365.256 * 3**1.5 = %.0f)"
      % (model.predict([[3.0]])[0], 365.256 * 3**1.5))
print(model.equations_[["complexity", "loss", "criterion", "formula"]].to_string())

# Planets the fit never saw: Uranus and Neptune (a in AU, P in days)
a_far, P_far = np.array([19.1913, 30.0690]), np.array([30688.5, 60182.0])
for name, predicted, true in zip(("Uranus", "Neptune"), model.predict(a_far[:, None]), P_far):
    print(f"{name}: predicted {predicted:.0f} days, observed {true:.0f} "
          f"({100 * (predicted - true) / true:+.1f} %)")
