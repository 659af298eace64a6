"""Tune alpha, beta and epsilon with a scikit-learn Pipeline and GridSearchCV.

CADSRRegressor is an ordinary scikit-learn regressor, so it fits in a Pipeline
and in any model-selection tool. Every candidate is a full search, so keep each
one's budget small: here 2 x 2 x 2 settings x 2 folds = 16 searches of 10
epochs each (an epoch budget, unlike max_time, gives the same result on any machine).
This law is easy, so every setting recovers it; on harder data the scores differ.

Run:  python examples/grid_search.py        (about 20 s on 2 cores)
      CADSR_EXAMPLES_QUICK=1 python examples/grid_search.py   (a smoke test)
"""

import os

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
# a tiny budget per candidate; "quick" is only a smoke test of the code
BUDGET = dict(n_epochs=2, batch_size=32, ff_dim=64) if QUICK else dict(n_epochs=10, batch_size=200)

rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, size=(200, 2))
y = X[:, 0] ** 2 - 0.5 * X[:, 1]

pipeline = make_pipeline(
    # any preprocessing goes here; the formula is then in the transformed features
    FunctionTransformer(),
    # a polynomial law: arithmetic operators are enough, and a small library keeps
    # each of the 17 searches (16 + the refit) to about a second
    CADSRRegressor(binary_operators=("add", "sub", "mul"), unary_operators=(),
                   device="cpu", random_state=0, **BUDGET),
)
grid = GridSearchCV(
    pipeline,
    param_grid={
        "cadsrregressor__alpha": [5.0, 20.0],  # risk-seeking percentage α
        "cadsrregressor__beta": [0.01, 0.1],  # KL weight β
        "cadsrregressor__epsilon": [0.1, 0.2],  # trust-region half-width ε
    },
    cv=KFold(n_splits=2, shuffle=True, random_state=0),
    scoring="r2",
)
grid.fit(X, y)

print("best parameters:", grid.best_params_)
print(f"best cross-validated R²: {grid.best_score_:.4f}")
best = grid.best_estimator_[-1]
print("formula of the refitted best model:", best.expression_)
for params, score in zip(
    grid.cv_results_["params"], grid.cv_results_["mean_test_score"], strict=True
):
    short = {k.split("__")[1]: v for k, v in params.items()}
    print(f"  {short}  R² = {score:.4f}")
