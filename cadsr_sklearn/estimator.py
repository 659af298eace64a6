"""``CADSRRegressor``: the CADSR search behind scikit-learn's estimator interface."""

from __future__ import annotations

import math
import os
import warnings
from types import MappingProxyType
from numbers import Integral, Real
from typing import Any

import numpy as np
import sympy
import torch
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._version import __version__
from . import levenberg_marquardt
from .devices import blas_threads, resolve_device, torch_threads
from .display import (DISPLAY_DIGITS, check_precision, faithful_digits, r2_from_loss, round_floats,
                      rounded_latex, symbol_names)
from .expression import Expression
from .library import DEFAULT_BINARY, DEFAULT_UNARY, Library, check_operators
from .policy import Policy
from .progress import Progress
from .simplification import simplest_equivalent
from .uncertainty import ConstantUncertainty, constant_uncertainty
from .scoring import MIN_RESIDUAL_DOF, Candidate, fittable_constants
from . import checkpoint
from .checkpoint import CheckpointWriter, data_fingerprint
from .search import Search, build_search
from .selection import RULES, cross_validated_errors, select

__all__ = ["CADSRRegressor", "SmallDataWarning"]

# Squared errors of targets beyond these scales overflow (or underflow to zero) in
# float64, so no formula could be scored: such y is rejected with a hint to rescale.
_Y_MAX = 1e150
_Y_MIN_SPREAD = 1e-150


class CADSRRegressor(RegressorMixin, BaseEstimator):
    """Complexity-Aware Deep Symbolic Regression (Bastiani et al., AISTATS 2026).

    A decoder-only transformer policy with attention on the DCT coefficients of
    its embeddings and a dual-indexed (depth, horizontal) position encoding
    generates expression trees breadth-first. Constants are fitted by
    Levenberg–Marquardt, each tree is scored by the Bayesian information
    criterion, and the policy is trained with a rank-based risk-seeking policy
    gradient inside a GRPO update. The result is a short formula,
    :attr:`expression_`, that predicts exactly what the search scored.

    Parameters
    ----------
    binary_operators : tuple of str, default=("add", "sub", "mul", "div", "pow")
        Binary operators; also available: none beyond these five.
    unary_operators : tuple of str, default=("sin", "cos", "log", "sqrt", "exp")
        Unary operators; also available: "tan", "square", "cube", "neg", "inv",
        "tanh", "abs". Either list may also hold the names of operators
        registered with :func:`~cadsr_sklearn.register_operator`, or
        :class:`~cadsr_sklearn.Operator` objects.
    use_constants : bool, default=True
        Include the constant token ``c`` whose values are fitted by
        Levenberg–Marquardt.
    use_one : bool, default=True
        Include the literal ``1``.
    max_length : int, default=32
        Maximum number of nodes ν of a tree (the paper's "max depth 32").
    max_constants : int, default=10
        Maximum number of constant tokens in a tree; never more than the
        training rows minus 2, so that every formula keeps residual degrees of
        freedom (one with as many constants as rows passes through any data).
    batch_size : int, default=500
        Expressions per epoch, B. The paper uses 1000; within minutes 500
        recovers more, sooner (more, cheaper epochs; see the tuning guide).
    oversampling : float, default=2
        Oversampling factor γ: γ·B trees are drawn to keep B unique ones.
    n_epochs : int, default=600
        Maximum number of epochs T.
    learning_rate : float, default=2e-3
        Adam learning rate l. The paper uses 1e-4 over 600 epochs of a 4-hour
        budget; within minutes 2e-3 recovers far more (see the tuning guide).
    alpha : float, default=5
        Risk-seeking percentage α ∈ (0, 100]: the top α % of each batch train
        the policy.
    beta : float, default=0.01
        Weight β of the KL penalty to the reference policy, eq. (13).
    epsilon : float, default=0.2
        Trust-region half-width ε of the clipped ratio (the objective Ĵ before eq. (13)).
    lam : float, default=0.2
        Scale λ of the rank-based reward mapping, eq. (11).
    entropy_coef : float, default=0.005
        Entropy bonus weight λ_H.
    steps_per_epoch : int, default=5
        Gradient steps C per epoch.
    ref_update_every : int, default=5
        Epochs G between updates of the reference policy θ_ref.
    embedding_dim : int, default=10
        Token embedding width E (the paper's r).
    dct_dim : int, default=8
        Number M of low-frequency DCT coefficients attention runs on.
    n_layers : int, default=1
        Decoder layers.
    n_heads : int, default=1
        Attention heads; must divide the attention width (M, or E for
        ``attention="standard"``).
    ff_dim : int, default=2048
        Width of the decoder's feed-forward block.
    attention : {"dct", "standard"}, default="dct"
        Attention on DCT coefficients (the paper) or plain attention
        (the "Drop DCT" ablation).
    position_encoding : {"dpe", "1d"}, default="dpe"
        Dual-indexed (depth, horizontal) encoding (the paper) or the sinusoidal
        encoding of the BFS index (the "Drop DPE" ablation).
    embedding_std : float, default=0.02
        Standard deviation of the initial token embeddings. At 0.02 a token's
        vector is some 30 times weaker than the position encoding; 0.7 makes
        both about as strong, which measured no difference (the embeddings are
        trained from the first update).
    parent_sibling : bool, default=True
        Also feed the policy the tokens of each node's parent and left sibling
        (DSO's observations), each through its own embedding. Not in the paper.
    arity_prior : bool, default=True
        DSO's uniform-arity prior on the logits: an untrained policy picks a
        terminal, a unary and a binary operator equally often, instead of in
        proportion to how many tokens of each kind the library has (which grows
        most untrained trees to ``max_length``). Not in the paper.
    length_prior : float or None, default=12
        Location L of a soft length prior on the logits: an operator that would
        make the tree larger than L nodes gets a log-weight of
        −½((size − L)/(L/4))², a soft version of ``max_length`` (see
        :mod:`cadsr_sklearn.priors`). ``None`` is off (the paper). Raise it
        when the law is expected to be long.
    policy : {"grpo", "risk_seeking"}, default="grpo"
        GRPO update (the paper) or the plain rank-weighted risk-seeking policy
        gradient, eq. (12), one step per epoch (the "Drop GRPO" ablation).
    reward : {"bic", "mdl", "nrmse", "spl", "tpsr"}, default="bic"
        Reward R(τ) that ranks each batch for the policy update: the paper's
        negative BIC, k ln S − 2 ln p (eq. 10); the description length (see
        ``criterion``); or the ablation rewards.
    criterion : {"mdl", "reward"}, default="mdl"
        What judges the answer: τ* (the best formula seen), the hall of fame
        behind ``equations_``, pruning and snapping. "mdl" is −2 × the
        formula's minimum description length (the codelength of Exhaustive
        Symbolic Regression: the fit, each fitted constant stated to the
        precision the data give it, each node, each literal; see
        :mod:`cadsr_sklearn.rewards`), right on small tables: a formula that
        interpolates the rows gains nothing by it, and large or unlikely
        literals (17459/2, π) are not free; the BIC is its large-S limit and
        has no such protection. "reward" judges by the reward too (the paper).
        Neither has a knob to tune. The search itself ranks by the reward,
        whose lenience on constants lets the policy reach long laws sooner
        (see the user guide).
    bic_variance : {"mle", "target"}, default="mle"
        σ² of the BIC's Gaussian likelihood (the BIC only: the description
        length always profiles it): each expression's own mean squared
        residual (the profile likelihood, what BIC means by a fitted Gaussian,
        floored at float64 round-off of the targets) or the variance of the
        training targets (the paper's text). With "target" the data-fit term is
        bounded by S, so on small data every node costs more than any fit can
        win back (on Nguyen-1, 20 rows, it prefers sin(x) to x³+x²+x).
    likelihood : {"gaussian", "student_t"}, default="gaussian"
        Likelihood p(τ) inside the BIC.
    spl_eta : float, default=0.99
        η of the SPL reward.
    tpsr_lambda : float, default=0.1
        λ of the TPSR reward.
    const_fit_samples : int, default=1000
        Rows (a random subsample) on which constants are fitted; rewards use all rows.
    const_screen_samples : int or None, default=256
        When the rows constants are fitted on (``min(n_samples,
        const_fit_samples)``) are more than this, every new formula's constants
        are first fitted on a random subsample of this many of them, and only
        the batch's 2·αB/100 best formulas (its top α % twice over) are refitted
        on all those rows from there, the better fit kept; so are the formulas
        of ``equations_`` at the end (unless the fit is interrupted). Rewards
        use all rows either way. ``None`` fits every formula on all the rows.
    max_time : float or None, default=None
        Wall-clock budget in seconds; the search stops before an epoch that
        would overrun it, and pruning and snapping stop at its end. Reporting
        the front (simplifying its formulas for display) comes after it,
        typically a fraction of a second.
    max_evaluations : int or None, default=None
        Budget of scored expressions (counted per batch).
    tol : float, default=1e-20
        Early stop once the best expression's training MSE is at most
        ``tol`` times the variance of the targets (or float64's resolution at the
        targets' magnitude, if larger): an exact recovery stops at once. An
        exact fit must also leave at least 2 rows beyond its fitted constants
        (a formula with as many constants as rows fits any data). Exact
        formulas score 1e-32 to 1e-28 here (float64 round-off); a looser
        ``tol`` such as 1e-12 also stops at near-interpolating formulas with
        many constants on small data (20 rows, 10 constants).
    patience : int or None, default=None
        Stop after this many epochs without a better best expression.
    prune : bool, default=True
        After the search, improve τ* by greedy local search on the same reward:
        replace a subtree by one of its children, by ``c`` or by ``1``, refit,
        and keep the edit that raises the reward most, until none does (see
        :mod:`cadsr_sklearn.pruning`). It removes dead weight such as
        ``2.718**x - exp(x)``, which fits as well as nothing. Not in the paper;
        ``False`` returns the sampled τ* as it is.
    snap_constants : bool, default=True
        After pruning, fix fitted constants of τ* and of the Pareto front to
        nearby simple numbers (within 5 %: integers, p/q with q ≤ 6 or 8,
        p·π/q and p/(q·π) with a numerator of at most 4) when that raises the
        ``criterion`` and passes the profile-likelihood BIC
        test, the other constants refitted (see
        :mod:`cadsr_sklearn.snapping`): on noisy data, ``x0 - 0.99647`` becomes
        ``x0 - 1`` when the data cannot tell them apart, and 0.426 stays where
        they can. A fixed literal is a node but no longer a parameter, so the
        BIC's ``k`` counts it once. Not in the paper; ``False`` keeps every
        constant as fitted (:attr:`unsnapped_expression_` keeps them anyway).
    model_selection : {"reward", "accuracy", "score", "cv"}, default="reward"
        Which formula of the Pareto front :attr:`expression_`,
        :attr:`best_expression_` and ``predict`` use: "reward" τ*, the
        formula the ``criterion`` ranks highest of all the search scored (the
        paper's choice, by its reward), after pruning and snapping;
        "accuracy" the one of lowest training loss; "score" PySR's rule, the
        largest drop in log-loss per unit of complexity from the row before,
        among the formulas whose loss is at most 1.5 times the lowest; "cv"
        the simplest formula whose cross-validated error (constants refitted
        without the held-out rows: leave-one-out up to 100 rows, else 10
        folds) is within one standard error of the lowest, reported in the
        ``cv_loss`` column of ``equations_`` (see
        :mod:`cadsr_sklearn.selection`); for small tables. Any row
        can be used with ``index=`` in :meth:`predict`, :meth:`sympy` and
        :meth:`latex`.
    simplify : bool, default=True
        Report each formula (:attr:`expression_`, ``equations_``) in the
        shortest SymPy form that predicts what its tree predicts on the training
        rows to within round-off (see :mod:`cadsr_sklearn.simplification`):
        features are real (``sqrt(x**4)`` is ``x**2``), constants round-off
        from 0, an integer, p/q, p·π/q, p/(q·π) or e^(p/q) become that number (``cos(u +
        1.5707963267949)`` is ``-sin(u)``), logs of products are split and
        products of sums multiplied out where that is shorter. ``predict``
        always evaluates the tree. ``False`` reports the tree as SymPy reads it.
    device : str, default="auto"
        Torch device of the policy: "auto" (CUDA when available, else CPU),
        "cpu", "cuda", "cuda:N" or "mps".
    n_jobs : int or None, default=None
        Threads that fit constants and evaluate formulas, a batch's expressions
        shared among them: ``None`` or −1 every core this process may use
        (``os.sched_getaffinity``), −2 all but one, 1 serial. The formula found
        does not depend on ``n_jobs``.
    random_state : int, RandomState instance or None, default=None
        Seed; the same seed gives the same formula on CPU.
    verbose : int, default=0
        0 is silent; 1 shows a progress bar with the best formula, its training
        R² and complexity, in one line that fits the terminal; 2 also prints
        the current Pareto front as a small table every few seconds (see
        :mod:`cadsr_sklearn.progress`).
    warm_start : bool, default=False
        When True, a second ``fit`` continues the search of the first instead
        of starting over: the policy and its optimizer, the reference policy,
        the replay buffer, the hall of fame, τ* and the random generators go on
        from where the last epoch left them (before pruning and snapping, which
        are redone on the result). ``n_epochs``, ``max_time`` and
        ``max_evaluations`` count the new call; on the same data, ``n_epochs=a``
        then ``n_epochs=b`` ends as one fit of ``a + b`` epochs would (unless
        an early stop fires). On new data (same features) the replay buffer,
        τ* and the hall of fame are refitted and rescored on it. The parameters
        that shape the search (operators, policy, reward, constant fitting)
        must stay the same; ``random_state`` is not used again. The state is
        kept in :attr:`search_state_` (and so in pickles) only when True, and
        only when the search stopped by a rule: after Ctrl-C the next fit
        starts afresh (or from ``checkpoint``).
    checkpoint : str, path or None, default=None
        File the whole search is written to, atomically, every
        ``checkpoint_every`` seconds and when the search stops. If the file
        exists when ``fit`` starts, the search resumes from it (same data and
        same package version; otherwise ``fit`` raises ValueError): with the
        same parameters and an epoch budget, the resumed fit ends with the
        formula the uninterrupted one would have found; with ``max_time`` the
        resumed call has what the interrupted one left. A crash loses at most
        one interval. A checkpoint is a pickle: resume only files you trust.
    checkpoint_every : float, default=60.0
        Seconds between checkpoints; 0 writes one after every epoch.

    Attributes
    ----------
    expression_ : sympy.Expr
        The selected formula (``model_selection``; by default τ*, the highest
        reward seen), in the feature names, its constants at full precision;
        with ``simplify``, its shortest form equal to it on the training rows.
    best_expression_ : Expression
        The same formula as a token tree with fitted constants (and the fixed
        literals of snapping); ``predict`` evaluates it exactly as it was scored.
    unsnapped_expression_ : Expression
        τ* as the search and pruning left it, every constant as fitted, before
        snapping; the same tree as :attr:`best_expression_` when nothing was
        snapped and ``model_selection="reward"``.
    equations_ : pandas.DataFrame or list of dict
        The Pareto front of the hall of fame, simplest first: each row has a
        strictly lower training loss than every row above it. Columns:
        ``complexity`` (k), ``loss`` (training MSE), ``r2`` (training R²),
        ``reward``, ``criterion`` (what chose the row, see ``criterion``),
        ``equation`` (SymPy, in the feature names, full precision),
        ``formula`` (readable text: constants to 4 significant digits, or as
        many as it takes to predict the same on the training rows, see
        :mod:`cadsr_sklearn.display`), ``constant_errors`` (the standard
        error of each constant of the tree, BFS order; see ``constants_``),
        ``selected`` (the row ``model_selection`` chose) and ``expression``
        (the token tree).
    constants_ : pandas.DataFrame or list of dict
        The constants of the selected tree, one row each: ``name`` (``c0,
        c1, …`` in BFS order, the symbols of
        ``best_expression_.to_sympy(symbolic_constants=True)``), ``value``,
        ``std_error`` and the 95 % confidence interval ``ci_low``,
        ``ci_high`` (from the Jacobian at the fitted optimum and the residual
        variance on the rows the constants were fitted on, at most
        ``const_fit_samples``, weights respected; see
        :mod:`cadsr_sklearn.uncertainty`), and ``fixed`` (snapped to a simple
        number: no standard error). An infinite standard error marks a
        constant the data cannot pin down.
        The intervals take the formula as given, not the search that chose it.
    y_variance_ : float
        (Weighted) variance of the training targets; training R² of a front
        member is ``1 - loss / y_variance_``.
    history_ : list of dict
        Per epoch: τ*'s reward, criterion, loss and complexity (τ* is the
        formula of highest criterion so far), ``n_unique`` (distinct
        formulas among the batch's B: a policy collapsing onto a few formulas
        shows as it falls), evaluations, time (seconds into the ``fit`` call
        that ran the epoch), and the update's diagnostics (approximate KL, clip
        fraction, KL to θ_ref, entropy). With ``warm_start``, the epochs of
        every call, numbered on.
        These are the search's own: with ``prune``, the final formula's
        criterion (in ``equations_``) can be higher than the last epoch's best.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    symbol_names_ : list of str
        The symbol of each feature in the formulas: its column name where that
        is a Python identifier, else a readable one that parses back (``force
        [N]`` is ``force_N``; see :func:`cadsr_sklearn.display.symbol_names`);
        ``x0, x1, …`` without column names. :meth:`latex` shows the column
        names themselves.
    n_epochs_ : int
        Epochs run (over every call, with ``warm_start``).
    n_evaluations_ : int
        Sampled expressions scored (a batch counts in full); the few hundred
        that pruning scores after the search are not counted.
    device_ : torch.device
        Where the policy ran.
    stop_reason_ : str
        Which rule stopped the search: "tol", "max_time", "max_evaluations",
        "patience", "n_epochs" or "interrupted"; "constant target" when ``y``
        is constant (then ``y = c`` is returned without a search).
    interrupted_ : bool
        True when ``fit`` was stopped by Ctrl-C; the best formula so far is kept.
    n_outputs_ : int
        Number of outputs: 1 for a 1-D ``y``, else its number of columns.
    estimators_ : list of CADSRRegressor
        Only for a 2-D ``y``: the estimator of each output (see the Notes of
        :meth:`fit`); the per-formula attributes are then lists over them.
    search_state_ : bytes or None
        With ``warm_start``, the whole search as its last epoch left it (see
        :mod:`cadsr_sklearn.checkpoint`), which the next ``fit`` continues;
        None otherwise.
    """

    _parameter_constraints: dict = {
        "binary_operators": ["array-like"],
        "unary_operators": ["array-like"],
        "use_constants": ["boolean"],
        "use_one": ["boolean"],
        "max_length": [Interval(Integral, 2, None, closed="left")],
        "max_constants": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "oversampling": [Interval(Real, 1, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, 100, closed="right")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "epsilon": [Interval(Real, 0, 1, closed="neither")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "entropy_coef": [Interval(Real, 0, None, closed="left")],
        "steps_per_epoch": [Interval(Integral, 1, None, closed="left")],
        "ref_update_every": [Interval(Integral, 1, None, closed="left")],
        "embedding_dim": [Interval(Integral, 2, None, closed="left")],
        "dct_dim": [Interval(Integral, 1, None, closed="left")],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "ff_dim": [Interval(Integral, 1, None, closed="left")],
        "attention": [StrOptions({"dct", "standard"})],
        "position_encoding": [StrOptions({"dpe", "1d"})],
        "embedding_std": [Interval(Real, 0, None, closed="neither")],
        "parent_sibling": ["boolean"],
        "arity_prior": ["boolean"],
        "length_prior": [Interval(Real, 1, None, closed="left"), None],
        "policy": [StrOptions({"grpo", "risk_seeking"})],
        "reward": [StrOptions({"mdl", "bic", "nrmse", "spl", "tpsr"})],
        "criterion": [StrOptions({"mdl", "reward"})],
        "bic_variance": [StrOptions({"target", "mle"})],
        "likelihood": [StrOptions({"gaussian", "student_t"})],
        "spl_eta": [Interval(Real, 0, 1, closed="right")],
        "tpsr_lambda": [Interval(Real, 0, None, closed="left")],
        "const_fit_samples": [Interval(Integral, 1, None, closed="left")],
        "const_screen_samples": [Interval(Integral, 1, None, closed="left"), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "max_evaluations": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "patience": [Interval(Integral, 1, None, closed="left"), None],
        "prune": ["boolean"],
        "snap_constants": ["boolean"],
        "model_selection": [StrOptions(set(RULES))],
        "simplify": ["boolean"],
        "device": [str, torch.device],
        "n_jobs": [
            Interval(Integral, None, -1, closed="right"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "checkpoint": [str, os.PathLike, None],
        "checkpoint_every": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        binary_operators=DEFAULT_BINARY,
        unary_operators=DEFAULT_UNARY,
        use_constants=True,
        use_one=True,
        max_length=32,
        max_constants=10,
        batch_size=500,
        oversampling=2.0,
        n_epochs=600,
        learning_rate=2e-3,
        alpha=5.0,
        beta=0.01,
        epsilon=0.2,
        lam=0.2,
        entropy_coef=0.005,
        steps_per_epoch=5,
        ref_update_every=5,
        embedding_dim=10,
        dct_dim=8,
        n_layers=1,
        n_heads=1,
        ff_dim=2048,
        attention="dct",
        position_encoding="dpe",
        embedding_std=0.02,
        parent_sibling=True,
        arity_prior=True,
        length_prior=12,
        policy="grpo",
        reward="bic",
        criterion="mdl",
        bic_variance="mle",
        likelihood="gaussian",
        spl_eta=0.99,
        tpsr_lambda=0.1,
        const_fit_samples=1000,
        const_screen_samples=256,
        max_time=None,
        max_evaluations=None,
        tol=1e-20,
        patience=None,
        prune=True,
        snap_constants=True,
        model_selection="reward",
        simplify=True,
        device="auto",
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        checkpoint=None,
        checkpoint_every=60.0,
    ):
        self.binary_operators = binary_operators
        self.unary_operators = unary_operators
        self.use_constants = use_constants
        self.use_one = use_one
        self.max_length = max_length
        self.max_constants = max_constants
        self.batch_size = batch_size
        self.oversampling = oversampling
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.beta = beta
        self.epsilon = epsilon
        self.lam = lam
        self.entropy_coef = entropy_coef
        self.steps_per_epoch = steps_per_epoch
        self.ref_update_every = ref_update_every
        self.embedding_dim = embedding_dim
        self.dct_dim = dct_dim
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.ff_dim = ff_dim
        self.attention = attention
        self.position_encoding = position_encoding
        self.embedding_std = embedding_std
        self.parent_sibling = parent_sibling
        self.arity_prior = arity_prior
        self.length_prior = length_prior
        self.policy = policy
        self.reward = reward
        self.criterion = criterion
        self.bic_variance = bic_variance
        self.likelihood = likelihood
        self.spl_eta = spl_eta
        self.tpsr_lambda = tpsr_lambda
        self.const_fit_samples = const_fit_samples
        self.const_screen_samples = const_screen_samples
        self.max_time = max_time
        self.max_evaluations = max_evaluations
        self.tol = tol
        self.patience = patience
        self.prune = prune
        self.snap_constants = snap_constants
        self.model_selection = model_selection
        self.simplify = simplify
        self.device = device
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every

    # ----------------------------------------------------------------- fitting
    @classmethod
    def paper(cls, **params) -> "CADSRRegressor":
        """An estimator with the paper's settings (:data:`PAPER_SETTINGS`), ``params`` on top.

        The SRBench column of the paper's hyperparameter table, with every
        departure of this package's defaults switched off: for ablations and
        comparisons with the paper's numbers. ``CADSRRegressor.paper(max_time=60)``.
        """
        return cls(**{**PAPER_SETTINGS, **params})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # a 2-D y: one search per column
        return tags

    def _check_settings(self) -> None:
        """Cross-parameter checks that ``_parameter_constraints`` cannot express."""
        Policy.check_widths(self.embedding_dim, self.dct_dim, self.n_heads, self.attention)
        check_operators(self.binary_operators, self.unary_operators)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> "CADSRRegressor":
        """Search for a formula y ≈ τ(X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs; pandas and polars column names become the
            formula's symbols.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets. A 2-D ``y`` gets one independent search per column (see
            "Several outputs" below).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; they enter the likelihood and the constant fit
            (of every output).

        Returns
        -------
        self : CADSRRegressor

        Notes
        -----
        **Several outputs.** With ``y`` of shape ``(n, m)`` each column is
        searched on its own by a copy of this estimator with the same
        parameters (:attr:`estimators_`), so output j's formula is exactly the
        one ``fit(X, y[:, j])`` finds with the same ``random_state``. The fitted
        attributes that describe a formula or a search (:attr:`expression_`,
        :attr:`best_expression_`, :attr:`equations_`, :attr:`constants_`,
        :attr:`history_`, :attr:`n_epochs_`, :attr:`stop_reason_` …) are then
        lists with one entry per output, and :meth:`predict` returns ``(n, m)``;
        :meth:`sympy`, :meth:`latex` and :meth:`export` return lists, and their
        ``index`` may be one row per output. A ``checkpoint`` path gets the
        suffix ``.output{j}`` per output.

        Raises
        ------
        ValueError
            For non-numeric, non-finite or empty input, inconsistent settings,
            an unavailable device, or a non-constant y whose squared errors
            float64 cannot hold (|y| above 1e150 or a spread below 1e-150:
            rescale y).
        KeyboardInterrupt
            Only when Ctrl-C comes before the first epoch ends; later, the best
            formula so far is kept and :attr:`interrupted_` is True.

        Warns
        -----
        SmallDataWarning
            When the table has fewer than three rows per allowed constant
            (``max_constants``), with what to do (see the user guide's "Small
            tables").
        """
        self._check_settings()
        _check_numeric_target(y)
        given = X
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True)
        except ValueError as err:
            raise _with_numeric_hint(err, X) from err
        y = y.astype(np.float64, copy=False)  # booleans, integers
        if y.ndim == 2:
            return self._fit_outputs(given, y, sample_weight)
        self.n_outputs_ = 1
        self.__dict__.pop("estimators_", None)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                                 ensure_non_negative=True)
        self.device_ = resolve_device(self.device)
        self.version_ = __version__
        self.symbol_names_ = symbol_names(self._column_names())
        rng = check_random_state(self.random_state)
        torch_seed, numpy_seed = (int(s) for s in rng.randint(0, 2**31 - 1, size=2))

        self.interrupted_ = False
        if np.ptp(y) == 0:
            return self._fit_constant_target(X, y)
        _check_target_scale(y)
        _warn_if_small(len(y), self.max_constants)

        params = self.get_params()
        fingerprint = data_fingerprint(X, y, sample_weight)
        search = self._continued_search(params, X, y, sample_weight, fingerprint)
        if search is None:
            search = build_search(params, X, y, sample_weight, self.device_, torch_seed,
                                  numpy_seed)
        writer = (None if self.checkpoint is None
                  else CheckpointWriter(self.checkpoint, self.checkpoint_every, fingerprint))
        self.search_state_ = None

        def after_epoch(record: dict, search: Search) -> None:
            progress.update(record, search.state)
            if writer is not None:
                writer.after_epoch(search)

        def at_stop(search: Search) -> None:
            # the loop's state before pruning and snapping: what goes on from here
            if writer is not None:
                writer.write(search)
            if self.warm_start:
                self.search_state_ = checkpoint.dumps_for_warm_start(search, fingerprint)

        # The compiled kernels, before the budget's clock starts: the first run on a
        # machine compiles them (tens of seconds, once), which max_time does not count.
        levenberg_marquardt.warm_up()
        progress = Progress(self.n_epochs, self.max_time, self.verbose, search.y_variance,
                            self._feature_names(), X)
        try:
            # NumPy's BLAS on one thread too: its vectors here are one column
            # (np.dot over S rows), where waking a second thread costs more than
            # it saves, up to 100x more on a busy machine.
            n_torch_threads = 1 if self.device_.type == "cpu" else None
            with torch_threads(n_torch_threads), blas_threads(1):
                result = search.run(on_epoch=after_epoch, on_stop=at_stop)
            progress.show(result.best)  # τ* after pruning, not the last epoch's
        finally:
            progress.close()
        _warn_if_fits_raised(search)
        if result.best is None and result.interrupted:
            raise KeyboardInterrupt  # Ctrl-C before the first epoch ended: nothing to keep
        if result.best is None:
            raise RuntimeError(
                "The search found no valid expression (every candidate was non-finite on the "
                "training data). Try other operators, more epochs, or rescaling X and y."
            )
        self.unsnapped_expression_ = result.unsnapped.expression
        self.y_variance_ = search.y_variance
        front = result.hall_of_fame.pareto_front(keep=result.best)
        self._set_front(front, result.best, X, y, sample_weight, search.scorer.fitted_rows)
        self.history_ = result.history
        self.n_epochs_ = result.n_epochs
        self.n_evaluations_ = result.n_evaluations
        self.stop_reason_ = result.stop_reason
        self.interrupted_ = result.interrupted
        return self

    def _fit_outputs(self, X, Y: np.ndarray, sample_weight) -> "CADSRRegressor":
        """One search per column of ``Y`` (n, m), each by a copy of this estimator."""
        previous = getattr(self, "estimators_", None)
        if self.warm_start and previous is not None and len(previous) == Y.shape[1]:
            outputs = previous  # each continues its own search
        else:
            outputs = [clone(self) for _ in range(Y.shape[1])]
        for j, output in enumerate(outputs):
            checkpoint_path = (None if self.checkpoint is None
                               else f"{os.fspath(self.checkpoint)}.output{j}")
            output.set_params(**self.get_params()).set_params(checkpoint=checkpoint_path)
            output.fit(X, Y[:, j], sample_weight)
        self.estimators_ = outputs
        self.n_outputs_ = Y.shape[1]
        first = outputs[0]
        self.device_, self.version_ = first.device_, first.version_
        self.symbol_names_ = first.symbol_names_
        self.interrupted_ = any(o.interrupted_ for o in outputs)
        self.search_state_ = None  # each output keeps its own
        for name in _PER_OUTPUT:
            setattr(self, name, [getattr(o, name) for o in outputs])
        return self

    def _per_output(self, method: str, index, **kwargs) -> list:
        """``method`` of every output's estimator, ``index`` one row per output or the same."""
        indices = (list(index) if isinstance(index, (list, tuple, np.ndarray))
                   else [index] * len(self.estimators_))
        if len(indices) != len(self.estimators_):
            raise ValueError(f"index must give one row per output ({len(self.estimators_)}), "
                             f"got {len(indices)}.")
        return [getattr(e, method)(index=i, **kwargs)
                for e, i in zip(self.estimators_, indices)]

    @property
    def _several_outputs(self) -> bool:
        """Fitted on a 2-D ``y``: one estimator per output in :attr:`estimators_`."""
        return "estimators_" in self.__dict__

    def _continued_search(self, params: dict, X: np.ndarray, y: np.ndarray,
                          sample_weight: np.ndarray | None, fingerprint: str) -> Search | None:
        """The search this fit goes on with: the last fit's (``warm_start``), the
        ``checkpoint`` file's, or None for a new one."""
        kept = getattr(self, "search_state_", None) if self.warm_start else None
        if kept is not None:
            saved = checkpoint.loads(kept, self.device_, "The warm-started search")
            self._check_continuable(saved.search, params, X, "warm_start cannot continue it",
                                    "Set warm_start=False to start afresh.")
            if saved.fingerprint != fingerprint:  # new data: the kept candidates rescored
                fresh = build_search(params, X, y, sample_weight, self.device_, 0, 0)
                saved.search.adopt_data(fresh)
            saved.search.new_call(params)
            return saved.search
        if self.checkpoint is None:
            return None
        folder = os.path.dirname(os.path.abspath(self.checkpoint))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise ValueError(f"checkpoint={os.fspath(self.checkpoint)!r}: the folder {folder!r} "
                             "does not exist or is not writable.")
        if not os.path.exists(self.checkpoint):
            return None
        saved = checkpoint.read(self.checkpoint, self.device_)
        where = f"The checkpoint {os.fspath(self.checkpoint)!r}"
        advice = "Delete it, or pass another checkpoint path, to start afresh."
        self._check_continuable(saved.search, params, X, f"{where} cannot be resumed", advice)
        if saved.fingerprint != fingerprint:
            raise ValueError(f"{where} was written for other training data (X, y or "
                             f"sample_weight differ). {advice}")
        saved.search.resume(params)
        return saved.search

    @staticmethod
    def _check_continuable(search: Search, params: dict, X: np.ndarray, problem: str,
                           advice: str) -> None:
        """Raise ValueError when ``search`` cannot go on with ``params`` on ``X``'s features."""
        changed = search.changed_structure(params)
        if changed:
            raise ValueError(f"{problem}: it was started with other {', '.join(changed)}. "
                             f"{advice}")
        if search.library.n_features != X.shape[1]:
            raise ValueError(f"{problem}: it was started on {search.library.n_features} "
                             f"features, X has {X.shape[1]}. {advice}")

    def _fit_constant_target(self, X: np.ndarray, y: np.ndarray) -> "CADSRRegressor":
        """A constant target has the exact formula y = c; no search is needed."""
        library = Library(X.shape[1], (), ("neg",), use_constants=True, use_one=False)
        expr = Expression((library.const_id,), library, [float(y[0])])
        self.unsnapped_expression_ = expr
        best = Candidate(expr, math.inf, 0.0)
        self.y_variance_ = 0.0
        self._set_front([best], best, X, y, None)
        self.history_ = []
        self.n_epochs_ = 0
        self.n_evaluations_ = 0
        self.stop_reason_ = "constant target"
        self.search_state_ = None
        return self

    def _column_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(n) for n in names]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def _feature_names(self) -> list[str]:
        """The symbol of each feature in formulas (:attr:`symbol_names_`)."""
        names = getattr(self, "symbol_names_", None)  # absent from older pickles
        return list(names) if names is not None else symbol_names(self._column_names())

    def _labels(self) -> dict[str, str]:
        """Symbol → column name, where they differ (``force_N`` → ``force [N]``)."""
        return {s: c for s, c in zip(self._feature_names(), self._column_names()) if s != c}

    def _formula(self, expression: Expression, X: np.ndarray) -> sympy.Expr:
        """``expression`` in SymPy and the feature names.

        With ``simplify``, its shortest form equal to it on the training rows.
        """
        names = self._feature_names()
        formula = expression.to_sympy(names)
        if not self.simplify:
            return formula
        with np.errstate(all="ignore"):
            reference = expression.evaluate(X)
        return simplest_equivalent(formula, X, reference, [sympy.Symbol(n) for n in names])

    def _set_front(self, front: list[Candidate], best: Candidate, X: np.ndarray, y: np.ndarray,
                   sample_weight: np.ndarray | None, fitted_rows=None) -> None:
        """``equations_`` for the Pareto ``front``; the selected row's formula, tree and
        constants (``constants_``), their uncertainty taken on the rows
        ``fitted_rows(candidate)`` they were fitted on (all rows when None)."""
        symbols = [sympy.Symbol(n) for n in self._feature_names()]
        rows, digits, uncertainties = [], [], []
        for c in front:
            equation = self._formula(c.expression, X)
            if rows and equation == rows[-1]["equation"]:
                # one formula once: the simplest tree of it, unless the other is τ*
                if c.expression.key != best.expression.key:
                    continue
                rows.pop(), digits.pop(), uncertainties.pop()
            with np.errstate(all="ignore"):
                reference = c.expression.evaluate(X)
            d = faithful_digits(equation, symbols, X, reference)
            seen = None if fitted_rows is None else fitted_rows(c)  # the rows its fit saw
            uncertainty = constant_uncertainty(c.expression, X, y, sample_weight, seen)
            rows.append({
                "complexity": c.complexity,
                "loss": c.loss,
                "r2": r2_from_loss(c.loss, self.y_variance_),
                "reward": c.reward,
                "criterion": c.criterion,
                "equation": equation,
                "formula": str(round_floats(equation, d)),
                "constant_errors": tuple(uncertainty.standard_errors.tolist()),
                "selected": False,
                "expression": c.expression,
            })
            digits.append(d)
            uncertainties.append(uncertainty)
        cv_errors = None
        if self.model_selection == "cv":
            cv_errors = cross_validated_errors([r["expression"] for r in rows], X, y,
                                               sample_weight, self.const_fit_samples)
            for row, errors in zip(rows, cv_errors):
                row["cv_loss"] = float(np.mean(errors))
        best_row = next(i for i, r in enumerate(rows) if r["expression"].key == best.expression.key)
        chosen = select([r["loss"] for r in rows], [r["complexity"] for r in rows],
                        self.model_selection, best_row, cv_errors)
        rows[chosen]["selected"] = True
        self._display_digits = digits
        self._uncertainties = uncertainties
        self.best_expression_ = rows[chosen]["expression"]
        self.expression_ = rows[chosen]["equation"]
        self.equations_ = _table(rows, list(rows[0]))
        self.constants_ = _table(_constant_rows(uncertainties[chosen]), _CONSTANT_COLUMNS)

    def _row(self, index: int | None) -> tuple[int, dict]:
        """(position, row) of ``equations_`` row ``index`` (the selected one when None)."""
        check_is_fitted(self, "best_expression_")
        rows = self.equations_
        rows = rows if isinstance(rows, list) else rows.to_dict("records")
        if index is None:
            return next((i, r) for i, r in enumerate(rows) if r["selected"])
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"index must be an integer row of equations_, got {index!r}.")
        if not -len(rows) <= index < len(rows):
            raise IndexError(f"index {index} is out of range: equations_ has {len(rows)} rows.")
        return index % len(rows), rows[index]

    def _shown(self, index: int | None, precision) -> tuple[sympy.Expr, int]:
        """Row ``index``'s equation and the digits (≥ ``precision``) that show it faithfully."""
        position, row = self._row(index)
        precision = check_precision(precision)
        needed = getattr(self, "_display_digits", None)  # absent from older pickles
        return row["equation"], precision if needed is None else max(precision, needed[position])

    # -------------------------------------------------------------- prediction
    def predict(self, X, *, index: int | None = None, return_std: bool = False):
        """Evaluate the selected tree (:attr:`best_expression_`) on ``X``, as it was scored.

        :attr:`expression_` is the same function on the training rows (to
        round-off); off them, a rewrite made for reporting (a split log) may be
        undefined where the tree is not.

        Rows where the formula is undefined (e.g. a log of a negative number
        outside the training domain) get NaN; no exception and no warning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        index : int or list of int, optional
            Row of :attr:`equations_` whose tree to evaluate instead (PySR's
            convention; negative counts from the end); with several outputs,
            the same row of each or a list of one per output.
        return_std : bool, default=False
            Also return the standard error of each prediction, by the delta
            method from the covariance of the fitted constants (see
            :mod:`cadsr_sklearn.uncertainty`): the uncertainty of the formula's
            value at ``X`` given its form, not that of a new observation (the
            residual variance adds to that). 0 for a formula without fitted
            constants; NaN where the prediction is.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        y_std : ndarray of the same shape
            Only with ``return_std``.
        """
        check_is_fitted(self, "best_expression_")
        if self._several_outputs:
            columns = self._per_output("predict", index, X=X, return_std=return_std)
            if return_std:
                return tuple(np.column_stack(part) for part in zip(*columns))
            return np.column_stack(columns)
        expression = self.best_expression_ if index is None else self._row(index)[1]["expression"]
        try:
            X = validate_data(self, X, dtype=np.float64, reset=False)
        except ValueError as err:
            raise _with_numeric_hint(err, X) from err
        y = expression.evaluate(X)
        y = np.where(np.isfinite(y), y, np.nan)
        if not return_std:
            return y
        std = self._uncertainty_of(expression).prediction_std(expression, X)
        return y, np.where(np.isnan(y), np.nan, std)

    def _uncertainty_of(self, expression: Expression) -> ConstantUncertainty:
        """The covariance of the constants of ``expression``, a tree of ``equations_``."""
        uncertainties = getattr(self, "_uncertainties", None)
        if uncertainties is None:
            raise ValueError("This model was saved before standard errors were computed; "
                             "refit it to use return_std=True.")
        rows = self.equations_
        rows = rows if isinstance(rows, list) else rows.to_dict("records")
        for row, uncertainty in zip(rows, uncertainties):
            if row["expression"].key == expression.key:
                return uncertainty
        raise ValueError("No standard errors for this formula: it is not a row of equations_.")

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of :meth:`predict` on ``(X, y)``.

        A formula that is undefined on some row of ``X`` (its prediction is
        NaN there) scores ``-inf``: no finite error describes it. With several
        outputs, the mean of the outputs' R² (scikit-learn's default).
        """
        from sklearn.metrics import r2_score

        y_pred = self.predict(X)
        if not np.all(np.isfinite(y_pred)):
            return -math.inf
        return float(r2_score(y, y_pred, sample_weight=sample_weight))

    def sympy(self, *, index: int | None = None, precision: int | None = None) -> sympy.Expr:
        """The selected formula (or row ``index`` of :attr:`equations_`) as a SymPy expression.

        With ``precision``, its floats are rounded for reading: to ``precision``
        significant digits, or as many more as it takes for the rounded form to
        predict what the formula predicts on the training rows (see
        :mod:`cadsr_sklearn.display`). By default they are exact.
        """
        if self._several_outputs:
            return self._per_output("sympy", index, precision=precision)
        if precision is None:
            return self._row(index)[1]["equation"]
        return round_floats(*self._shown(index, precision))

    def latex(self, precision: int = DISPLAY_DIGITS, *, index: int | None = None) -> str:
        """The selected formula (or row ``index`` of :attr:`equations_`) in LaTeX.

        Floats to ``precision`` significant digits, or as many more as it takes
        for the shown formula to predict what the formula predicts on the
        training rows (``1.0000061**rho - 0.9999896`` is never shown as
        ``1.0^rho - 1.0``).
        """
        if self._several_outputs:
            return self._per_output("latex", index, precision=precision)
        return rounded_latex(*self._shown(index, precision), labels=self._labels())

    def export(self, target: str = "numpy", *, index: int | None = None):
        """The selected formula (or row ``index`` of :attr:`equations_`) for use elsewhere.

        What is exported is the tree :meth:`predict` evaluates, with its
        constants at full precision and the same order of operations and NaN/inf
        semantics, so each export agrees with ``predict`` to round-off (see
        :mod:`cadsr_sklearn.export`), except that ``predict`` reports a
        non-finite value as NaN where an export keeps the arithmetic's inf.
        Features are in the column order of ``fit``. The functions of
        :mod:`cadsr_sklearn.export` export any :class:`~cadsr_sklearn.Expression`.

        Parameters
        ----------
        target : {"numpy", "torch", "jax", "python", "c"}, default="numpy"
            "numpy": a function ``f(X) -> y``. "torch": a
            :class:`torch.nn.Module` whose constants are a trainable parameter.
            "jax": a function ``f(X, constants=fitted)``, differentiable in the
            constants (needs JAX; enable its float64 mode to match ``predict``).
            "python": self-contained source of ``formula(X)`` using NumPy.
            "c": C99 source of ``double formula(const double *x)`` for one row.
        index : int, optional
            Row of :attr:`equations_` to export instead of the selected one.
        """
        from . import export

        if target not in export.TARGETS:
            raise ValueError(f"target must be one of {list(export.TARGETS)}, got {target!r}.")
        check_is_fitted(self, "best_expression_")
        if self._several_outputs:
            return self._per_output("export", index, target=target)
        expression = self._row(index)[1]["expression"]
        names = self._feature_names()
        return {
            "numpy": export.to_numpy, "torch": export.to_torch, "jax": export.to_jax,
            "python": export.to_python_source, "c": export.to_c_source,
        }[target](expression, names)

    def __setstate__(self, state: dict[str, Any]) -> None:
        saved = state.get("version_")
        if saved is not None and str(saved).split(".")[:2] != __version__.split(".")[:2]:
            raise ValueError(
                f"This model was saved with cadsr-sklearn {saved}, which is incompatible with the "
                f"installed {__version__}. Refit it, or install cadsr-sklearn=={saved} to load it."
            )
        state.setdefault("simplify", False)  # pickled before the parameter: reported as found
        state.setdefault("snap_constants", False)  # likewise: constants as fitted
        state.setdefault("model_selection", "reward")
        for name, value in _POLICY_OPTIONS_BEFORE.items():  # pickled before these options
            state.setdefault(name, value)
        if "best_expression_" in state:
            state.setdefault("unsnapped_expression_", state["best_expression_"])
        super().__setstate__(state)


#: The paper's settings (SRBench column of its hyperparameter table, appendix)
#: where this package's defaults differ, and this package's additions switched
#: off: no pruning, snapping or screening, no early stop, all 600 epochs.
#: ``bic_variance="mle"`` is what the authors' code does (the text's σ² is the
#: targets' variance; see the tuning guide). ``CADSRRegressor(**PAPER_SETTINGS)``
#: or :meth:`CADSRRegressor.paper`.
PAPER_SETTINGS = MappingProxyType(dict(
    criterion="reward",
    batch_size=1000,
    n_epochs=600,
    learning_rate=1e-4,
    entropy_coef=0.005,
    embedding_std=0.02,
    parent_sibling=False,
    arity_prior=False,
    length_prior=None,
    bic_variance="mle",
    const_screen_samples=None,
    tol=0.0,
    prune=False,
    snap_constants=False,
))

# The policy's options before they were parameters (for older pickles).
_POLICY_OPTIONS_BEFORE = dict(embedding_std=0.02, parent_sibling=False, arity_prior=False,
                              length_prior=None)


#: The fitted attributes that are lists, one entry per output, when ``y`` is 2-D.
_PER_OUTPUT = ("expression_", "best_expression_", "unsnapped_expression_", "equations_",
               "constants_", "history_", "n_epochs_", "n_evaluations_", "stop_reason_",
               "y_variance_")


def _table(rows: list[dict], columns: list[str]):
    """A pandas DataFrame of ``rows`` when pandas is installed, else the list itself."""
    try:
        import pandas as pd
    except ImportError:  # pandas is optional
        return rows
    return pd.DataFrame(rows, columns=columns)


_CONSTANT_COLUMNS = ["name", "value", "std_error", "ci_low", "ci_high", "fixed"]


def _constant_rows(uncertainty: ConstantUncertainty, level: float = 0.95) -> list[dict]:
    """One row per constant of the tree (``c0, c1, …``, BFS order) for ``constants_``."""
    errors, intervals = uncertainty.standard_errors, uncertainty.intervals(level)
    return [dict(zip(_CONSTANT_COLUMNS, (f"c{k}", float(value), float(errors[k]),
                                         float(intervals[k, 0]), float(intervals[k, 1]),
                                         bool(uncertainty.fixed[k]))))
            for k, value in enumerate(uncertainty.values)]


def _check_numeric_target(y) -> None:
    """Reject text targets with a message that says what to fix.

    scikit-learn converts an object ``y`` to float but passes strings through,
    which would then fail deep inside the search with an unrelated error.
    """
    values = y if hasattr(y, "dtype") else np.asarray(y)
    kind = getattr(values.dtype, "kind", "O")
    if kind == "O":
        try:
            np.asarray(values, dtype=np.float64)
            return
        except (TypeError, ValueError):
            kind = "U"
    if kind in "US":
        example = np.asarray(values).ravel()[:1].tolist()
        raise ValueError(
            f"y must be numeric, but it holds text (dtype {values.dtype}"
            + (f", e.g. {example[0]!r}" if example else "")
            + "). CADSRRegressor is a regressor: convert y to numbers, e.g. with "
            "pandas.to_numeric(y) or y.astype(float)."
        )


def _with_numeric_hint(err: ValueError, X) -> ValueError:
    """``err`` from input validation, naming the non-numeric columns of ``X`` if any."""
    if "could not convert" not in str(err):
        return err
    dtypes = getattr(X, "dtypes", None)  # pandas (or similar) DataFrames
    bad = []
    if hasattr(dtypes, "items"):
        bad = [str(c) for c, dt in dtypes.items() if dt.kind not in "biuf"]
    where = f"column(s) {bad} of X are" if bad else "X is"
    return ValueError(
        f"{where} not numeric ({err}). CADSR needs numbers: encode categorical columns "
        "(e.g. with sklearn.preprocessing.OneHotEncoder) or drop them."
    )


def _warn_if_fits_raised(search: Search) -> None:
    """Report constant fits that raised: a bug in the kernels, which would otherwise only
    turn formulas into invalid ones (numerical faults raise nothing there)."""
    fitters = [f for f in (search.scorer.fitter, search.scorer.screen) if f is not None]
    failed = sum(f.n_failed_ for f in fitters)
    if failed:
        first = next(f.first_error_ for f in fitters if f.first_error_)
        warnings.warn(f"{failed} constant fits raised an error and their formulas were scored "
                      f"as invalid (first: {first}). This is a bug in cadsr-sklearn; please "
                      "report it with the data and parameters of this fit.", RuntimeWarning,
                      stacklevel=4)


class SmallDataWarning(UserWarning):
    """The training table is small for the search's settings (see :meth:`CADSRRegressor.fit`)."""


#: Rows per fitted constant below which ``fit`` warns that the table is small.
_ROWS_PER_CONSTANT = 3


def _warn_if_small(n_rows: int, max_constants: int) -> None:
    """Warn, saying what to do, when formulas may hold more constants than the rows can pin."""
    if n_rows >= _ROWS_PER_CONSTANT * max_constants:
        return
    held = fittable_constants(max_constants, n_rows)
    cap = "" if held == max_constants else (
        f" (held to {held} here, so that {MIN_RESIDUAL_DOF} rows are left beyond them)")
    warnings.warn(
        f"Only {n_rows} rows for a search whose formulas may fit up to {max_constants} "
        f"constants{cap}: few rows are left to judge a formula by. Read the whole front "
        "(equations_), not one formula; set max_constants to about a third of the rows "
        f"(max_constants={max(1, n_rows // _ROWS_PER_CONSTANT)}) to search only what the "
        "data can determine; judge the choice on rows the fit did not see; and bring more "
        "rows where you can.",
        SmallDataWarning, stacklevel=4)  # the caller of fit, past sklearn's _fit_context


def _check_target_scale(y: np.ndarray) -> None:
    """Reject targets whose squared errors float64 cannot hold (see ``_Y_MAX``)."""
    top = float(np.max(np.abs(y)))
    if top > _Y_MAX:
        raise ValueError(
            f"y has values as large as {top:.3g}: their squared errors overflow float64, so no "
            f"formula can be scored. Rescale y, e.g. divide it by 1e{math.floor(math.log10(top))}, "
            "and scale the predictions back."
        )
    spread = float(np.ptp(y))
    if spread < _Y_MIN_SPREAD:
        raise ValueError(
            f"y varies by only {spread:.3g}: squared errors that small underflow float64, so no "
            "formula can be scored. Rescale y, e.g. standardise it as (y - y.mean()) / y.std()."
        )
