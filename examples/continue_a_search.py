"""Continuing a search: warm_start, and checkpoints that survive a crash.

A first fit runs a few epochs; ``warm_start=True`` lets a second ``fit`` go on
with the same search (the policy, its optimizer, the replay buffer, the best
formulas) instead of starting over. A checkpoint file holds the same state on
disk: a fit that is killed resumes from it when it is run again.

Run:  python examples/continue_a_search.py    (about 30 s on 2 cores)
"""

import os
import tempfile

import numpy as np

from cadsr_sklearn import CADSRRegressor

QUICK = os.environ.get("CADSR_EXAMPLES_QUICK") == "1"
BUDGET = dict(batch_size=32, ff_dim=32, max_length=12) if QUICK else dict(batch_size=250)
EPOCHS = 2 if QUICK else 15

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 3, size=(300, 2))
y = 1.5 * X[:, 0] ** 2 / X[:, 1]

# 1. warm start: a few epochs, then more of the same search
model = CADSRRegressor(n_epochs=EPOCHS, warm_start=True, device="cpu", random_state=0, **BUDGET)
model.fit(X, y)
print(f"after {model.n_epochs_} epochs: {model.expression_}")
model.set_params(n_epochs=EPOCHS).fit(X, y)  # n_epochs counts the new call
print(f"after {model.n_epochs_} epochs: {model.expression_}")

# 2. a checkpoint: the search is saved as it runs; the same fit again resumes from the file
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "search.ckpt")
    params = dict(n_epochs=2 * EPOCHS, checkpoint=path, checkpoint_every=0, device="cpu",
                  random_state=0, **BUDGET)
    first = CADSRRegressor(**params).fit(X, y)
    print(f"checkpointed fit: {first.expression_} ({os.path.getsize(path) / 1e6:.1f} MB on disk)")
    again = CADSRRegressor(**params).fit(X, y)  # the search had finished: the same answer
    assert again.best_expression_.key == first.best_expression_.key
    print("resumed from the file:", again.expression_)
