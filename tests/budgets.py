"""Tiny search budgets shared by the test files: one place to make the suite faster.

Each is a partial set of :class:`~cadsr_sklearn.CADSRRegressor` parameters for
a search that takes a second or two on 2 cores. Tests override only what they
check (``CADSRRegressor(**{**TINY, "n_epochs": 6})``); ``TINY_MODEL`` leaves the
epoch budget to the test (``CADSRRegressor(n_epochs=100, **TINY_MODEL)``).
"""

#: A small policy and batch, seeded, on the CPU: for tests of plumbing, not of recovery.
TINY_MODEL = dict(batch_size=48, ff_dim=32, max_length=14, steps_per_epoch=1,
                  learning_rate=1e-3, device="cpu", random_state=0)

#: TINY_MODEL for three epochs.
TINY = dict(TINY_MODEL, n_epochs=3)

#: Enough search to recover a one- or two-term law on a few hundred rows (set n_epochs).
SMALL = dict(batch_size=200, ff_dim=64, learning_rate=1e-3, device="cpu", random_state=0)
