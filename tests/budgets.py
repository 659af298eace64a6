"""Tiny search budgets shared by the test files: one place to make the suite faster.

Each is a partial set of :class:`~cadsr_sklearn.CADSRRegressor` parameters for
a search that finishes in about a second on 2 cores; tests add what they need
(``CADSRRegressor(**TINY, n_epochs=6)``). Tests that must find a formula use
``SMALL``; those that only exercise the plumbing use ``TINY``.
"""

#: A few epochs of a small policy: for tests of plumbing, not of recovery.
TINY = dict(batch_size=48, n_epochs=3, ff_dim=32, max_length=14, steps_per_epoch=1,
            learning_rate=1e-3, device="cpu", random_state=0)

#: Enough search to recover a one- or two-term law on a few hundred rows.
SMALL = dict(batch_size=200, ff_dim=64, learning_rate=1e-3, device="cpu", random_state=0)
