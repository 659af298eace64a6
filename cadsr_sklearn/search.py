"""One search's pieces, built from the estimator's parameters.

:func:`build_search` is the seam between the estimator (which validates input
and reports the result) and the search (which knows nothing of scikit-learn):
it turns a parameter mapping — an estimator's ``get_params()`` — and the
training data into the token library, the policy and its sampler (with the
constraints and priors), the constant fitter and reward behind the scorer, and
the loop's settings. Data then flows one way: sampler → expressions → constants
→ rewards → policy update (:func:`~cadsr_sklearn.training.run_search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import torch

from .constants import ConstantFitter
from .constraints import Constraints
from .library import Library
from .policy import Policy
from .priors import Priors
from .rewards import make_reward
from .sampler import Sampler
from .scoring import Scorer
from .training import SearchResult, TrainingConfig, run_search

__all__ = ["Search", "build_search"]


@dataclass
class Search:
    """Everything one run of appendix Algorithm 4 needs."""

    library: Library
    policy: Policy
    sampler: Sampler
    scorer: Scorer
    config: TrainingConfig
    generator: torch.Generator  # every draw of the sampler
    exact_loss: float  # training MSE at or below which τ* is exact: the "tol" stop
    y_variance: float  # (weighted) variance of the training targets

    def run(self, on_epoch: Callable[[dict, SearchResult], None] | None = None) -> SearchResult:
        return run_search(self.policy, self.sampler, self.scorer, self.library, self.config,
                          self.exact_loss, self.generator, on_epoch=on_epoch)


def build_search(params: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, device: torch.device, torch_seed: int,
                 numpy_seed: int) -> Search:
    """The pieces of a search on validated ``X`` (S, n) and ``y`` (S,), seeded.

    ``params`` holds the estimator's parameters by name; ``torch_seed`` seeds the
    policy's initial weights and the sampler, ``numpy_seed`` the constant
    fitter's row subsample and starting points.
    """
    library = Library(X.shape[1], params["binary_operators"], params["unary_operators"],
                      use_constants=params["use_constants"], use_one=params["use_one"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_seed)  # weight initialisation without touching global RNG state
        policy = Policy(
            len(library),
            max_length=params["max_length"],
            embedding_dim=params["embedding_dim"],
            dct_dim=params["dct_dim"],
            n_layers=params["n_layers"],
            n_heads=params["n_heads"],
            ff_dim=params["ff_dim"],
            attention=params["attention"],
            position_encoding=params["position_encoding"],
            embedding_std=params["embedding_std"],
            parent_sibling=params["parent_sibling"],
        ).to(device)
    generator = torch.Generator(device=device).manual_seed(torch_seed)
    constraints = Constraints(library, max_length=params["max_length"],
                              max_constants=params["max_constants"])
    priors = Priors(library, uniform_arity=params["arity_prior"], length=params["length_prior"])
    sampler = Sampler(policy, library, constraints, priors)
    fitter = ConstantFitter(X, y, sample_weight=sample_weight,
                            const_fit_samples=params["const_fit_samples"],
                            random_state=np.random.default_rng(numpy_seed),
                            n_jobs=params["n_jobs"])
    reward = make_reward(params["reward"], y, sample_weight=sample_weight,
                         bic_variance=params["bic_variance"], likelihood=params["likelihood"],
                         spl_eta=params["spl_eta"], tpsr_lambda=params["tpsr_lambda"],
                         max_length=params["max_length"])
    screen = (None if params["const_screen_samples"] is None
              else fitter.screening_fitter(params["const_screen_samples"]))
    config = TrainingConfig.from_params(params)
    scorer = Scorer(fitter, reward, reward.loss, X, screen=screen, n_refine=2 * config.n_top)
    y_mean = np.average(y, weights=sample_weight)
    y_variance = float(np.average((y - y_mean) ** 2, weights=sample_weight))
    # Exact to round-off: tol·Var(y), but never below what float64 can resolve
    # at y's magnitude (the reward's floor), or a y far from 0 never stops.
    tol = params["tol"]
    exact_loss = max(tol * y_variance, reward.floor) if tol > 0 else 0.0
    return Search(library, policy, sampler, scorer, config, generator, exact_loss, y_variance)
