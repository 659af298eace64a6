"""Choosing the operator set.

The operators decide which formulas can be written at all, and fewer operators
means a smaller search space. Here the law is a damped oscillation,
y = exp(-x0) * cos(3 x0) (constants fitted by Levenberg–Marquardt). We search
with a small set that contains what is needed, and list every operator
available. Then we register an operator of our own, a Gaussian bump, and
find a law written with it.

Run:  python examples/custom_operators.py    (about 30 s on 2 cores)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.expressions.library import BINARY_OPERATORS, UNARY_OPERATORS

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
    CADSRRegressor(unary_operators=("sech",), n_epochs=1).fit(X, y)
except ValueError as err:
    print("\nValueError:", err)

# an operator of your own: its NumPy function, its derivative (for the constant fit) and
# its SymPy form; registration checks all three on a probe grid, and numba compiles the
# function and derivative for the same kernels the built-in operators run in
import sympy  # noqa: E402

from cadsr_sklearn import register_operator  # noqa: E402

gauss = register_operator(
    "gauss",
    function=lambda a: np.exp(-a * a),
    derivative=lambda a: -2 * a * np.exp(-a * a),
    sympy_function=lambda a: sympy.exp(-a**2),
)
print("\ngauss compiled for the kernels:", gauss.compiled is not None)
y_bump = 2.5 * np.exp(-((1.3 * X[:, 0] - 2.0) ** 2))  # a Gaussian bump
model = CADSRRegressor(binary_operators=("add", "mul"), unary_operators=("gauss",),
                       device="cpu", random_state=0, **BUDGET)
model.fit(X, y_bump)
print("\nwith gauss:", model.expression_)
