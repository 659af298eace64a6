"""The estimator's defaults as the search's components take them, for tests that build one alone.

A component (the policy, the constraints, the constant fitter, a reward) has no
defaults of its own for the estimator's parameters: each is set where the
estimator sets it. A test takes them from there, overriding what it checks:
``Policy(len(library), **policy_options(ff_dim=32))``.
"""

from dataclasses import asdict

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.settings import SearchSettings


def settings(**params) -> SearchSettings:
    """The search settings of ``CADSRRegressor(**params)``."""
    return SearchSettings.from_params(CADSRRegressor(**params).get_params())


def policy_options(**params) -> dict:
    """:class:`~.policy.Policy`'s keywords for ``CADSRRegressor(**params)``."""
    return asdict(settings(**params).policy)


def reward_options(**params) -> dict:
    """:func:`~.rewards.make_reward`'s options for ``CADSRRegressor(**params)``."""
    scoring = settings(**params).scoring
    return dict(bic_variance=scoring.bic_variance, likelihood=scoring.likelihood,
                spl_eta=scoring.spl_eta, tpsr_lambda=scoring.tpsr_lambda,
                max_length=scoring.max_length)
