"""Take the formula anywhere: NumPy, PyTorch, Python and C source.

After the fit, ``export`` writes the formula ``predict`` evaluates, with its
constants at full precision: a NumPy function, a PyTorch module whose
constants can be trained further (here: refined on new data by gradient
descent), self-contained Python source to paste into another project, and C
source for a microcontroller or a simulation code. ``export("jax")`` gives a
JAX function when JAX is installed.

Run:  python examples/export_formula.py    (about 15 s on 2 cores)
"""

import os

import numpy as np
import torch

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = (dict(n_epochs=2, batch_size=32, ff_dim=32) if QUICK
          else dict(max_time=15.0, batch_size=250))

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 3, size=(200, 2))
y = 0.8 * X[:, 0] ** 2 / X[:, 1]
# snap_constants=False: every constant stays a fitted parameter (a constant snapped to a
# simple number is exported as fixed, and PyTorch does not train it)
model = CADSRRegressor(snap_constants=False, device="cpu", random_state=0, **BUDGET).fit(X, y)
print("formula:", model.expression_)

f = model.export("numpy")
print("NumPy export equals predict:", np.array_equal(f(X), model.predict(X)))

# PyTorch: the constants are parameters; a few Adam steps refit them to new data
module = model.export("torch")
if len(module.constants):  # a formula without fitted constants has nothing to train
    y_new = 0.85 * X[:, 0] ** 2 / X[:, 1]
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
    X_t, y_t = torch.as_tensor(X), torch.as_tensor(y_new)
    for _ in range(200):
        optimizer.zero_grad()
        loss = torch.mean((module(X_t) - y_t) ** 2)
        loss.backward()
        optimizer.step()
    print("constants refitted by PyTorch:", module.all_constants().detach().numpy())

print("\nPython source:\n" + model.export("python"))
print("C source:\n" + model.export("c"))
