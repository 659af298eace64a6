"""Noisy data: the BIC reward keeps formulas short; a fit-only reward chases the noise.

y = 1.5 x0 + x1² with 10 % noise (SRBench's noise model). We fit twice with the
same budget (40 epochs, so the result does not depend on the machine's speed)
and seed: with the paper's BIC reward (the default) and with DSR's fit-only
reward 1/(1 + NRMSE). Compare the formulas, their complexity, and the R² on
noise-free held-out data.

Run:  python examples/noisy_data_bic_vs_nrmse.py    (about 30 s on 2 cores)
"""

import os

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (
    dict(n_epochs=2, batch_size=32, ff_dim=64)
    if QUICK
    else dict(n_epochs=40, batch_size=250)
)

rng = np.random.default_rng(1)
X = rng.uniform(-2, 2, size=(400, 2))
y_true = 1.5 * X[:, 0] + X[:, 1] ** 2
noise = 0.10 * np.sqrt(np.mean(y_true**2))  # 10 % of the RMS of y
y = y_true + rng.normal(0, noise, size=len(y_true))
X_train, y_train, X_test, y_test = X[:300], y[:300], X[300:], y_true[300:]

print(f"truth: y = 1.5*x0 + x1**2, noise std {noise:.3f}\n")
for reward in ("bic", "nrmse"):
    model = CADSRRegressor(reward=reward, device="cpu", random_state=0, **BUDGET)
    model.fit(X_train, y_train)
    print(f"reward={reward!r}")
    print(f"  formula:     {model.expression_}")
    print(f"  complexity:  {model.best_expression_.complexity}")
    print(
        f"  R² (train):  {model.score(X_train, y_train):.4f}   (noise caps it near "
        f"{1 - noise**2 / np.var(y_train):.4f})"
    )
    print(f"  R² (test, noise-free): {model.score(X_test, y_test):.4f}\n")
