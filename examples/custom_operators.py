"""Choosing the operator set.

The operators decide which formulas can be written at all, and fewer operators
means a smaller search space. Here the law is a damped oscillation,
y = exp(-x0) * cos(3 x0) (constants fitted by Levenberg–Marquardt). We search
with a small set that contains what is needed, and list every operator
available.

Run:  python examples/custom_operators.py    (about 15 s on 2 cores)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.library import BINARY_OPERATORS, UNARY_OPERATORS

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (
    dict(n_epochs=2, batch_size=32, ff_dim=64)
    if QUICK
    else dict(max_time=15.0, batch_size=250)
)

print("binary operators:", ", ".join(BINARY_OPERATORS))
print("unary operators: ", ", ".join(UNARY_OPERATORS))

rng = np.random.default_rng(0)
X = rng.uniform(0, 3, size=(300, 1))
y = np.exp(-X[:, 0]) * np.cos(3 * X[:, 0])

model = CADSRRegressor(
    binary_operators=("add", "mul"),  # no sub/div/pow: constants can carry signs
    unary_operators=("cos", "exp", "neg"),  # neg gives exp(-x)
    use_constants=True,  # the token c, fitted per formula
    use_one=False,  # no literal 1
    max_length=16,  # at most 16 nodes per tree
    # on noise-free data the search stops at the first exact fit (tol), which can carry
    # a vanishing extra term; tol=0 keeps searching for the shortest exact formula
    tol=0.0,
    device="cpu",
    random_state=0,
    **BUDGET,
)
model.fit(X, y)
print("\nformula:", model.expression_)
print(f"R²: {model.score(X, y):.6f}, complexity {model.best_expression_.complexity}")

# an unknown name is rejected at fit time with the list of valid ones
try:
    CADSRRegressor(unary_operators=("sinh",), n_epochs=1).fit(X, y)
except ValueError as err:
    print("\nValueError:", err)
