"""``CADSRRegressor``: the CADSR search behind scikit-learn's estimator interface.

The estimator is the facade scikit-learn users meet, and does four things in
``fit``: validate the input (:mod:`cadsr_sklearn.validation`), build the search
or take up the one to continue (:mod:`cadsr_sklearn.search`,
:mod:`cadsr_sklearn.continuation`), run it (:mod:`cadsr_sklearn.run`), and
present its front (:mod:`cadsr_sklearn.front`); a 2-D ``y`` is one such fit
per column (:mod:`cadsr_sklearn.multioutput`). The parameters' constraints and
the paper's settings are in :mod:`cadsr_sklearn.parameters`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import sympy
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._version import __version__
from .checkpoint import data_fingerprint
from .continuation import SearchSaver, continued_search
from .devices import resolve_device
from .display import (DISPLAY_DIGITS, check_precision, column_labels, round_floats,
                      rounded_latex, symbol_names, target_names)
from .expression import Expression
from .library import DEFAULT_BINARY, DEFAULT_UNARY, Library
from .multioutput import fit_outputs, join_outputs, per_output
from .parameters import PAPER_SETTINGS, PARAMETER_CONSTRAINTS, check_settings, required_columns
from .progress import Progress
from .guesses import GuessRow, formula_row, guess_rows, seed_search
from .front import (CANDIDATE_COLUMNS, CONSTANT_COLUMNS, FrontRow, as_table, candidate_rows,
                    constant_rows, report_front, row_position)
from .rewards import sample_size
from .run import check_found, run
from .scoring import Candidate, HallOfFame
from .search import build_search
from .selection import chosen_row
from .training import SearchResult
from .units import data_units, describe_units
from .validation import (SmallDataWarning, check_numeric_target, check_target_scale,
                         frequency_weighted, warn_if_small, with_numeric_hint)

__all__ = ["CADSRRegressor", "SmallDataWarning", "PAPER_SETTINGS"]

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
    max_constants : int or "auto", default="auto"
        Maximum number of constant tokens in a tree. ``"auto"`` allows 10, and
        on small tables two or one per three training rows, whichever is more:
        six rows are searched with two constants, the most they can pin, so
        that a formula cannot buy a closer fit of a small table with a
        correction term. Never
        more than the training rows minus 2, so that every formula keeps
        residual degrees of freedom (one with as many constants as rows passes
        through any data).
    required_features : list of str or int, or None, default=None
        Features every formula must contain: column names as ``fit`` sees
        them (pandas or polars column names, else ``"x0"``, ``"x1"``, …) or
        column indices. A hard rule of sampling: no tree without them is ever
        drawn, pruned to or reported (see :ref:`shaping-the-formulas`). At
        most ``(max_length + 1) // 2`` of them; two or more need a binary
        operator that ``nested_constraints`` leaves unlimited.
    nested_constraints : dict or None, default=None
        PySR's nesting limits, ``{outer: {inner: n}}``: at most ``n`` of the
        ``inner`` operator on any path below an ``outer`` one, e.g.
        ``{"sin": {"sin": 0, "cos": 0}, "exp": {"exp": 1}}`` (no trig below
        ``sin``; ``exp(exp(x))`` but no ``exp(exp(exp(x)))``). Trigonometric
        operators are never nested by default; a limit given here for two of
        them replaces that ban for the pair (see :ref:`shaping-the-formulas`).
    operator_complexity : dict or None, default=None
        The complexity of an operator's node where it is not 1 (PySR's
        ``complexity_of_operators``), integers ≥ 1: ``{"sin": 3, "exp": 3,
        "pow": 2}``. A formula's complexity k (the BIC's k ln S, the
        description length's tree term, the Pareto front's axis and slots,
        the ``complexity`` shown) counts each node so; variables, ``1`` and
        ``c`` count 1, and a fitted constant one more.
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
        Standard deviation of the initial token embeddings (0.7, as strong as
        the position encoding, measured no different; see :doc:`tuning`).
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
        formula's minimum description length (the fit, each fitted constant
        stated to the precision the data give it within its reach, each node,
        each literal; see :ref:`mdl-reward`): a formula that interpolates a
        small table gains nothing by it, where the BIC, its large-S limit, has
        no such protection, and a small term the noise put next to a law of a
        large table pays as much as a real one. "reward" judges by the reward
        too (the paper).
    bic_variance : {"mle", "target"}, default="mle"
        σ² of the BIC's Gaussian likelihood (the description length always
        profiles it): each expression's own mean squared residual (the profile
        likelihood) or the variance of the training targets (the paper's text,
        which on small data lets no fit win back a node; see :ref:`bic-reward`).
    likelihood : {"gaussian", "student_t"}, default="gaussian"
        Likelihood p(τ) inside the BIC.
    spl_eta : float, default=0.99
        η of the SPL reward.
    tpsr_lambda : float, default=0.1
        λ of the TPSR reward.
    const_fit_samples : int, default=1000
        Rows (a random subsample) on which constants are fitted; rewards use
        the rows of ``row_batch``.
    const_screen_samples : int or None, default=256
        When the rows constants are fitted on are more than this, every new
        formula's constants are first fitted on a random subsample of this many
        of them, and only the batch's 2·αB/100 best formulas, and those of
        ``equations_``, are refitted on all those rows. Rewards use the rows
        of ``row_batch`` either way. ``None`` fits every formula on all
        the rows.
    row_batch : int or None, default=10000
        Row batches for large tables. When the data have more rows than this,
        the search fits and scores its formulas on a batch of this many rows
        (one drawn from each of as many runs of the rows in the order of y),
        drawn once per search, each weighted so that the batch counts as all S
        observations (the reward and the criterion see the true S, and the
        batch's mean squared error stands for the table's); ``const_fit_samples``
        then counts rows of the batch. After the loop, the Pareto front and τ*
        are refitted and scored on all rows, and the answer is chosen, pruned
        and snapped there: ``equations_`` always reports fits on the whole
        table. ``None`` scores every formula on all rows.
    max_time : float or None, default=None
        Wall-clock budget in seconds; the search stops before an epoch that
        would overrun it, and pruning and snapping stop at its end (reporting
        the front comes after it, typically a fraction of a second).
    max_evaluations : int or None, default=None
        Budget of scored expressions (counted per batch).
    tol : float, default=1e-20
        Early stop once the best expression's training MSE is at most
        ``tol`` times the variance of the targets (or float64's resolution at the
        targets' magnitude, if larger), with at least 2 rows left beyond its
        fitted constants: an exact recovery stops at once (exact formulas
        score 1e-32 to 1e-28; see :ref:`when-the-search-stops`).
    patience : int or None, default=None
        Stop after this many epochs without a better best expression.
    guesses : list of str or sympy.Expr, or None, default=None
        Formulas you already believe in, such as ``["1.5*m*v**2"]`` or
        ``["sin(x0)*x1 + 2"]``, in the features' symbols (:attr:`symbol_names_`:
        the column names, ``x0, x1, …`` without), or SymPy expressions in them.
        Before the first epoch each is written as a tree of the search's tokens
        (numbers become fitted constants started at the value written, but an
        exact 1 is the literal ``1``; ``x**2`` is ``square`` where the library has
        it, else ``pow(x, c)`` with c started at 2; see
        :mod:`cadsr_sklearn.formula_parser`), its constants fitted and scored
        as every sampled formula, and put in the replay buffer, the hall of
        fame and τ* if the ``criterion`` ranks it best: the policy learns from it
        from the first update, and the answer is never worse on the criterion
        than the best guess (one that fits exactly stops the search at once,
        the ``tol`` rule). Each is reported in :attr:`guesses_`, and by
        ``print(model)`` beside the front. A guess the search's operators
        cannot write, or that its sampler could not sample (longer than
        ``max_length``, more constants than ``max_constants``, against a hard
        constraint such as ``exp(log(x))``), raises ValueError saying why. The
        same guesses seed every output of a 2-D ``y``. Text is read by
        ``sympy.sympify``, which evaluates it as Python: pass only text you trust.
        See :ref:`your-own-guesses`.
    prune : bool, default=True
        After the search, improve τ* by greedy node-removing edits, refitted,
        while the ``criterion`` rises (:mod:`cadsr_sklearn.pruning`): dead
        weight such as ``2.718**x - exp(x)`` goes. Not in the paper; ``False``
        returns the sampled τ* as it is.
    snap_constants : bool, default=True
        After pruning, fix fitted constants of τ* and of the Pareto front to
        0 or to nearby simple numbers (p/q of two-digit numbers, 2π, 4π², √2…)
        when that raises the ``criterion`` and passes the profile-likelihood BIC
        test (:mod:`cadsr_sklearn.snapping`): on noisy data ``x0 - 0.99647``
        becomes ``x0 - 1`` when the data cannot tell them apart, and a term
        ``+ 0.0015`` the data cannot tell from zero goes. Not in the paper;
        ``False`` keeps every constant as fitted (as :attr:`unsnapped_expression_`
        does anyway).
    model_selection : {"reward", "accuracy", "score", "cv"}, default="reward"
        Which formula of the Pareto front :attr:`expression_`,
        :attr:`best_expression_` and ``predict`` use: "reward" τ*, the one the
        ``criterion`` ranks highest (the paper's choice), after pruning and
        snapping; "accuracy" the lowest training loss; "score" PySR's rule;
        "cv" the simplest within one standard error of the lowest
        cross-validated error (column ``cv_loss``). See
        :ref:`choosing-from-the-front`. Any row can be used with ``index=``
        in :meth:`predict`, :meth:`sympy` and :meth:`latex`. It can change
        after fitting, without a refit (``set_params``): the attributes that
        describe the chosen formula follow it; "cv" needs a fit with it, which
        computes the cross-validated errors.
    simplify : bool, default=True
        Report each formula (:attr:`expression_`, ``equations_``) in the
        shortest SymPy form that predicts what its tree predicts on the training
        rows to within round-off (:mod:`cadsr_sklearn.simplification`):
        ``cos(u + 1.5707963267949)`` is ``-sin(u)``. ``predict`` always
        evaluates the tree. ``False`` reports the tree as SymPy reads it.
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
        R² and complexity; 2 also prints the current Pareto front every few
        seconds (:mod:`cadsr_sklearn.progress`).
    warm_start : bool, default=False
        When True, a second ``fit`` continues the search of the first (policy,
        optimizer, replay buffer, hall of fame, τ*, random generators) instead
        of starting over; ``n_epochs``, ``max_time`` and ``max_evaluations``
        count the new call, and the parameters that shape the search must stay
        the same (see :ref:`continuing-a-search`). The state is kept in
        :attr:`search_state_` only when the search stopped by a rule: after
        Ctrl-C the next fit starts afresh (or from ``checkpoint``).
    checkpoint : str, path or None, default=None
        File the whole search is written to, atomically, every
        ``checkpoint_every`` seconds, when the search stops and when Ctrl-C
        interrupts it. If the file exists when ``fit`` starts, the search
        resumes from it (same data and package version, else ValueError) and,
        from a file written at an epoch's end, ends as the uninterrupted one
        would have (see :ref:`continuing-a-search`). Beside it,
        ``<checkpoint>.front.csv`` holds the current Pareto front while the
        search runs. A checkpoint is a pickle: resume only files you trust.
    checkpoint_every : float, default=60.0
        Seconds between checkpoints; 0 writes one after every epoch.
    keep_candidates : bool, default=False
        Keep every distinct formula the search scored in :attr:`candidates_`
        (tens of thousands in a long search: a larger model).

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
        ``reward``, ``criterion``, ``equation`` (SymPy, full precision),
        ``formula`` (readable text, faithful digits), ``constant_errors``
        (standard errors of the numbers the formula shows, as ``constants_``
        names them: ``c0, c1, …``), ``selected`` (the row
        ``model_selection`` chose) and ``expression`` (the token tree); in a
        fit with ``X_units``, ``units`` (each formula's, as :attr:`units_`
        writes them).
        ``expression_``, ``best_expression_``, ``equations_``,
        ``pareto_front_`` and ``constants_`` are read from the fitted front
        with the current ``model_selection`` (see :attr:`selections_`), and
        cannot be assigned.
    pareto_front_ : list of FrontRow
        The same rows as typed records (:class:`~cadsr_sklearn.front.FrontRow`),
        each with the covariance of its tree's constants (``uncertainty``, BFS
        order), that of the constants its formula is shown with
        (``constants``), and the tree before snapping: what programs read,
        where ``equations_`` is the table people read.
    constants_ : pandas.DataFrame or list of dict
        The numbers of the selected formula as :attr:`expression_` and
        ``equations_["formula"]`` show it (not those of the tree behind it),
        one row each; see :ref:`constant-uncertainty`. First its constants:
        ``name`` (``c0, c1, …`` in the order the formula's text shows them),
        ``shown`` (as the text rounds it, with its sign), ``value`` (full
        precision), ``std_error`` and the 95 % confidence interval ``ci_low``,
        ``ci_high``, ``fixed`` False. Then each number fixed to a simple one,
        by snapping or because it was round-off away from one (``name`` ``s0,
        s1, …``, ``shown`` exact, such as ``1/2`` or ``2*pi``, ``fixed``
        True): no standard error, but ``fitted_value``, ``fitted_ci_low`` and
        ``fitted_ci_high``, its value and 95 % interval as fitted before it
        was fixed (NaN in the constants' rows). The intervals take the formula
        as given, not the search that chose it.
    front_rows_ : list of FrontRow
        Every row of the front as the fit reported it, unmarked by any rule:
        :attr:`pareto_front_` is these rows with the one ``model_selection``
        chooses marked ``selected``.
    selections_ : dict of str to int
        The row of the front each rule of ``model_selection`` chooses
        (``"cv"`` only after a fit with it, or for a front of one row): what
        lets ``model_selection`` change after the fit.
    target_names_ : list of str
        The name of each target: a pandas or polars Series' name, a
        DataFrame's column names; ``["y"]`` (``["y0", "y1", …]`` for several
        outputs) without. Shown wherever the formula is (the progress bar,
        ``print``, the plots, the report, ``cadsr predict``'s column).
    y_variance_ : float
        (Weighted) variance of the training targets; training R² of a front
        member is ``1 - loss / y_variance_``.
    candidates_ : pandas.DataFrame or list of dict
        With ``keep_candidates``: every distinct formula the search scored,
        one row each (``complexity``, ``loss``, ``reward``, ``criterion``,
        ``formula``: the tree in infix, constants to 6 significant digits),
        best reward first; not pruned, snapped or simplified. Without, absent.
    units_ : str or None
        The chosen formula's physical units (with ``X_units``), in the units
        ``fit`` was given where they can be written so (else in SI symbols):
        the target's, and where a constant factor carries units (see
        "Physical units" in the user guide), that factor's. None without units.
    data_units_ : Units or None
        The units ``fit`` was given, as exponent vectors over base dimensions.
    history_ : list of dict
        Per epoch: τ*'s reward, criterion, loss and complexity, ``n_unique``
        (distinct formulas among the batch's B), ``invalid_fraction`` and
        ``units_rejected_fraction`` (of the batch: not finite, and rejected by
        the dimensional check), evaluations, time (seconds
        into the ``fit`` call that ran the epoch), and the update's diagnostics
        (approximate KL, clip fraction, KL to θ_ref, entropy); with
        ``warm_start``, the epochs of every call. Before pruning and snapping.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.
    symbol_names_ : list of str
        The symbol of each feature in the formulas: its column name where that
        is a Python identifier, else one that parses back (``force [N]`` is
        ``force_N``); ``x0, x1, …`` without column names.
    n_epochs_ : int
        Epochs run (over every call, with ``warm_start``).
    n_evaluations_ : int
        Sampled expressions scored (a batch counts in full; pruning's are not).
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
    guesses_ : list of GuessRow
        One row per entry of ``guesses`` (:class:`~cadsr_sklearn.guesses.GuessRow`,
        a :class:`~cadsr_sklearn.front.FrontRow` with the ``guess`` as
        written): the guess with its constants fitted, scored on the
        ``criterion`` as the search scored it, to compare with the chosen
        formula (``row.criterion`` against :attr:`pareto_front_`'s). Empty
        without guesses, and for a constant target.
    search_state_ : bytes or None
        With ``warm_start``, the whole search as it stopped, which the next
        ``fit`` continues (:mod:`cadsr_sklearn.checkpoint`); None otherwise.
    """

    _parameter_constraints: dict = PARAMETER_CONSTRAINTS

    def __init__(
        self, *,
        # the token library and its trees
        binary_operators=DEFAULT_BINARY, unary_operators=DEFAULT_UNARY, use_constants=True,
        use_one=True, max_length=32, max_constants="auto", required_features=None,
        nested_constraints=None, operator_complexity=None,
        # appendix Algorithm 4
        batch_size=500, oversampling=2.0, n_epochs=600, learning_rate=2e-3, alpha=5.0,
        beta=0.01, epsilon=0.2, lam=0.2, entropy_coef=0.005, steps_per_epoch=5,
        ref_update_every=5,
        # the policy and its priors
        embedding_dim=10, dct_dim=8, n_layers=1, n_heads=1, ff_dim=2048, attention="dct",
        position_encoding="dpe", embedding_std=0.02, parent_sibling=True, arity_prior=True,
        length_prior=12, policy="grpo",
        # rewards and constants
        reward="bic", criterion="mdl", bic_variance="mle", likelihood="gaussian", spl_eta=0.99,
        tpsr_lambda=0.1, const_fit_samples=1000, const_screen_samples=256, row_batch=10_000,
        # budgets and stops
        max_time=None, max_evaluations=None, tol=1e-20, patience=None,
        # the user's hypotheses
        guesses=None,
        # the answer
        prune=True, snap_constants=True, model_selection="reward", simplify=True,
        # running
        device="auto", n_jobs=None, random_state=None, verbose=0, warm_start=False,
        checkpoint=None, checkpoint_every=60.0, keep_candidates=False,
    ):
        self.binary_operators = binary_operators
        self.unary_operators = unary_operators
        self.use_constants = use_constants
        self.use_one = use_one
        self.max_length = max_length
        self.max_constants = max_constants
        self.required_features = required_features
        self.nested_constraints = nested_constraints
        self.operator_complexity = operator_complexity
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
        self.row_batch = row_batch
        self.max_time = max_time
        self.max_evaluations = max_evaluations
        self.tol = tol
        self.patience = patience
        self.guesses = guesses
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
        self.keep_candidates = keep_candidates

    @classmethod
    def paper(cls, **params) -> "CADSRRegressor":
        """An estimator with the paper's settings, ``params`` on top.

        The settings are :data:`~cadsr_sklearn.parameters.PAPER_SETTINGS`: the
        SRBench column of the paper's hyperparameter table, with every
        departure of this package's defaults switched off: for ablations and
        comparisons with the paper's numbers. ``CADSRRegressor.paper(max_time=60)``.
        """
        return cls(**{**PAPER_SETTINGS, **params})

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # a 2-D y: one search per column
        return tags

    # ----------------------------------------------------------------- fitting
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, X_units=None, y_units=None) -> "CADSRRegressor":
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
            Frequency weights, as scikit-learn means them: a row of weight w
            counts as w observations of it (2 is the row twice, 0 no row) in
            the constant fit, the likelihood and S, the number of observations
            (the BIC's k ln S, the description length), which is Σw. Scale
            relative weights, such as 1/σᵢ², to the number of rows first:
            ``w * len(w) / w.sum()`` (see the FAQ). The same for every output.
        X_units : sequence or dict, default=None
            The physical units of each feature: a unit string pint reads
            (``"m/s^2"``, ``"kg*m^2/s^2"``, ``"1"`` for dimensionless), or an
            exponent vector over base dimensions of your own; a sequence in
            column order or a dict by feature name. With them every formula the
            search scores and returns is dimensionally consistent (the sampler
            keeps to the units as trees grow, and a final check rejects the few
            it cannot settle; see the user guide's "Physical units").
        y_units : str or sequence of float, default=None
            The target's units (with ``X_units``); None leaves them free (then
            only the formula's inner consistency is required). With several
            outputs, a list with one entry per output.

        Returns
        -------
        self : CADSRRegressor

        Notes
        -----
        **Several outputs.** With ``y`` of shape ``(n, m)`` each column is
        searched on its own by a copy of this estimator (:attr:`estimators_`),
        exactly as ``fit(X, y[:, j])`` would; the fitted attributes that
        describe a formula or a search become lists with one entry per output,
        :meth:`predict` returns ``(n, m)``, and :meth:`sympy`, :meth:`latex`
        and :meth:`export` return lists (see :ref:`several-outputs`).

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
            When the table has fewer than six rows, or fewer than three rows
            per constant that an explicit ``max_constants`` allows, with what
            to do (see the user guide's "Small
            tables").
        """
        return self._fit(X, y, sample_weight, X_units=X_units, y_units=y_units)

    def _fit(self, X, y, sample_weight, names: list[str] | None = None, X_units=None,
             y_units=None) -> "CADSRRegressor":
        """:meth:`fit`, the targets named ``names`` (by default the names ``y`` carries);
        each output of a 2-D ``y`` is fitted by its copy's ``_fit`` with its own name."""
        # validate
        params = self.get_params()
        check_settings(params)
        check_numeric_target(y)
        given, given_y = X, y
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True)
        except ValueError as err:
            raise with_numeric_hint(err, X) from err
        names = target_names(given_y, 1 if y.ndim == 1 else y.shape[1]) if names is None else names
        y = y.astype(np.float64, copy=False)  # booleans, integers
        if y.ndim == 2:
            fit_outputs(self, given, y, sample_weight, names, X_units, y_units)
            return self
        self.n_outputs_ = 1
        self.target_names_ = names
        self.__dict__.pop("estimators_", None)
        X, y, sample_weight = frequency_weighted(X, y, sample_weight)
        self.device_ = resolve_device(self.device)
        self.version_ = __version__
        self.symbol_names_ = symbol_names(self._column_names())
        self.data_units_ = data_units(X_units, y_units, self._column_names())
        # by column index from here on: what the search is built with and compared by
        required = required_columns(self.required_features, self._column_names())
        params = {**params, "required_features": required}
        torch_seed, numpy_seed = self._seeds()
        self.interrupted_ = False
        if np.ptp(y) == 0:
            return self._fit_constant_target(X, y)
        check_target_scale(y)
        warn_if_small(sample_size(len(y), sample_weight), self.max_constants,
                      weighted=sample_weight is not None)

        # build, or take up the search to continue
        fingerprint = data_fingerprint(X, y, sample_weight)
        kept = getattr(self, "search_state_", None) if self.warm_start else None
        units = self.data_units_ if self.data_units_ and self.data_units_.constrains else None
        search = continued_search(params, X, y, sample_weight, fingerprint, self.device_, kept,
                                  units)
        if search is None:
            search = build_search(params, X, y, sample_weight, self.device_, torch_seed,
                                  numpy_seed, units)
            seed_search(search, self.guesses, self.symbol_names_)
        # before the run: a guess undefined on these rows is reported before the time is spent
        guesses = guess_rows(search, self.guesses, self.symbol_names_, X, y, sample_weight,
                             self.simplify)

        # run
        saver = SearchSaver(self.checkpoint, self.checkpoint_every, fingerprint, self.warm_start,
                            self.symbol_names_)
        self.search_state_ = None
        result = run(search, saver, partial(Progress, self.n_epochs, self.max_time, self.verbose,
                                            search.y_variance, self.symbol_names_, X,
                                            target=names[0]),
                     self.device_)
        self.search_state_ = saver.state
        check_found(result, search)

        self._present(result, X, y, sample_weight, search.y_variance,
                      search.final_scorer.fitted_rows,
                      required=required)
        self.guesses_ = guesses
        self.__dict__.pop("candidates_", None)  # a previous fit's
        if self.keep_candidates:
            self.candidates_ = as_table(candidate_rows(search.scorer.cache.values(),
                                                       self.symbol_names_), CANDIDATE_COLUMNS)
        return self

    @property
    def _several_outputs(self) -> bool:
        """Fitted on a 2-D ``y``: one estimator per output in :attr:`estimators_`."""
        return "estimators_" in self.__dict__

    def _fit_constant_target(self, X: np.ndarray, y: np.ndarray) -> "CADSRRegressor":
        """A constant target has the exact formula y = c; no search is needed."""
        library = Library(X.shape[1], (), ("neg",), use_constants=True, use_one=False)
        best = Candidate(Expression((library.const_id,), library, [float(y[0])]), math.inf, 0.0)
        self.search_state_ = None
        self._present(SearchResult(best, HallOfFame(), best, stop_reason="constant target"),
                      X, y, None, 0.0)
        self.guesses_ = []  # y = c is exact: no search to seed
        return self

    def _seeds(self) -> tuple[int, int]:
        """(torch, NumPy) seeds of a search: the policy's and the constant fitter's."""
        rng = check_random_state(self.random_state)
        torch_seed, numpy_seed = (int(s) for s in rng.randint(0, 2**31 - 1, size=2))
        return torch_seed, numpy_seed

    def _present(self, result: SearchResult, X: np.ndarray, y: np.ndarray,
                 sample_weight: np.ndarray | None, y_variance: float,
                 fitted_rows=None, required: tuple[int, ...] = ()) -> None:
        """The fitted attributes of a finished search: its Pareto front, the row each
        rule of ``model_selection`` chooses, and the search's record. ``required``: the
        columns of ``required_features``, which simplification keeps in every formula."""
        self.y_variance_ = y_variance
        report = report_front(
            result.hall_of_fame.pareto_front(keep=result.best), result.best, X, y,
            sample_weight, self.symbol_names_, simplify=self.simplify, y_variance=y_variance,
            model_selection=self.model_selection, const_fit_samples=self.const_fit_samples,
            fitted_rows=fitted_rows, snapped_from=result.snapped_from,
            keep=[self.symbol_names_[i] for i in required])
        # the chosen formula's attributes (expression_, constants_…) are read from these
        self.front_rows_, self.selections_ = report.rows, report.choices
        self.unsnapped_expression_ = result.unsnapped.expression
        self.history_, self.n_epochs_ = [r.row() for r in result.history], result.n_epochs
        self.n_evaluations_, self.stop_reason_ = result.n_evaluations, result.stop_reason
        self.interrupted_ = result.interrupted

    # ------------------------------------------------- the row model_selection chooses
    # A fit keeps the whole front and the row each rule chooses (selections_); what
    # describes the chosen formula is derived from them and the current model_selection
    # at each access, so that set_params(model_selection=...) on a fitted model takes
    # effect without a refit, and no attribute can disagree with the parameter (as
    # scikit-learn's SelectFromModel derives threshold_ from threshold). With several
    # outputs each is a list over estimators_, chosen by this estimator's parameter.
    @property
    def pareto_front_(self) -> list[FrontRow]:
        return self._chosen_by_rule(CADSRRegressor._front)

    @property
    def equations_(self):
        return self._chosen_by_rule(CADSRRegressor._table)

    @property
    def units_(self) -> str | None:
        """The chosen formula's physical units (None for a fit without ``X_units``)."""
        return self._chosen_by_rule(lambda e, rule: e._units_of(e._chosen(rule)))

    def _units_of(self, row: FrontRow) -> str | None:
        return describe_units(row.expression, self.data_units_)

    @property
    def expression_(self) -> sympy.Expr:
        return self._chosen_by_rule(lambda e, rule: e._chosen(rule).equation)

    @property
    def best_expression_(self) -> Expression:
        return self._chosen_by_rule(lambda e, rule: e._chosen(rule).expression)

    @property
    def constants_(self):
        return self._chosen_by_rule(lambda e, rule: e._constants_table(e._chosen(rule)))

    def _chosen_by_rule(self, attribute):
        """``attribute(estimator, model_selection)``, a list over the outputs if several."""
        if self._several_outputs:
            return [attribute(e, self.model_selection) for e in self.estimators_]
        return attribute(self, self.model_selection)

    def _position(self, rule: str | None = None) -> int:
        """The row of the front that ``rule`` (by default ``model_selection``) chooses."""
        check_is_fitted(self, "selections_")
        return chosen_row(self.selections_, self.model_selection if rule is None else rule)

    def _front(self, rule: str) -> list[FrontRow]:
        """The front's rows, the one ``rule`` chooses marked ``selected``."""
        chosen = self._position(rule)
        return [row if row.selected == (i == chosen) else replace(row, selected=i == chosen)
                for i, row in enumerate(self.front_rows_)]

    def _chosen(self, rule: str) -> FrontRow:
        return self._front(rule)[self._position(rule)]

    def _table(self, rule: str):
        """``equations_``: the front as a table (pandas when installed)."""
        rows = self._front(rule)
        records = [row.record() for row in rows]
        if self.data_units_ is not None:  # a fit with units: each row's
            for record, row in zip(records, rows):
                record["units"] = self._units_of(row)
        return as_table(records, list(records[0]))

    @staticmethod
    def _constants_table(row: FrontRow):
        """``constants_``: one row per constant of ``row``'s formula."""
        return as_table(constant_rows(row), CONSTANT_COLUMNS)

    def _output_rows(self, index):
        """``index`` for :func:`per_output`: without one, each output's row by this
        estimator's ``model_selection`` (its copies may hold another, set directly)."""
        if index is None:
            return [e._position(self.model_selection) for e in self.estimators_]
        return index

    def set_params(self, **params) -> "CADSRRegressor":
        """Set the parameters of this estimator (see scikit-learn's ``set_params``).

        ``model_selection`` acts on a fitted model too: the formula
        :attr:`expression_`, :meth:`predict` and the rest use follows it at once,
        without a refit (``"cv"`` needs a fit with it, which computes the
        cross-validated errors). With several outputs it is passed on to
        :attr:`estimators_`, the copies that carry this estimator's parameters.
        """
        super().set_params(**params)
        if "model_selection" in params and self._several_outputs:
            for estimator in self.estimators_:
                estimator.set_params(model_selection=params["model_selection"])
        return self

    def _column_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(n) for n in names]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def _labels(self) -> dict[str, str]:
        """Symbol → column name, where they differ (``force_N`` → ``force [N]``)."""
        return column_labels(self.symbol_names_, self._column_names())

    def _row(self, index: int | None) -> FrontRow:
        """Row ``index`` of the front (the selected one when None)."""
        if index is None:
            return self._chosen(self.model_selection)
        check_is_fitted(self, "selections_")
        return self.front_rows_[row_position(self.front_rows_, index)]

    def _shown(self, index: int | None, precision) -> tuple[sympy.Expr, int]:
        """Row ``index``'s equation and the digits (≥ ``precision``) that show it faithfully."""
        row = self._row(index)
        return row.equation, max(check_precision(precision), row.digits)

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
            method (:ref:`constant-uncertainty`): the uncertainty of the
            formula's value at ``X`` given its form, not that of a new
            observation; the same for the tree and for the displayed form,
            reparametrised. When snapping fixed every constant, that of the
            fit before snapping (the data pin the value down no better for
            the snap). 0 for a formula that never had fitted constants; NaN
            where the prediction is.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        y_std : ndarray of the same shape
            Only with ``return_std``.
        """
        check_is_fitted(self, "selections_")
        if self._several_outputs:
            columns = per_output(self.estimators_, "predict", self._output_rows(index), X=X,
                                 return_std=return_std)
            if return_std:
                return tuple(np.column_stack(part) for part in zip(*columns))
            return np.column_stack(columns)
        expression = self.best_expression_ if index is None else self._row(index).expression
        try:
            X = validate_data(self, X, dtype=np.float64, reset=False)
        except ValueError as err:
            raise with_numeric_hint(err, X) from err
        y = expression.evaluate(X)
        y = np.where(np.isfinite(y), y, np.nan)
        if not return_std:
            return y
        std = self._front_row_of(expression).prediction_std(X)
        return y, np.where(np.isnan(y), np.nan, std)

    def _front_row_of(self, expression: Expression) -> FrontRow:
        """The row of ``equations_`` whose tree ``expression`` is, with its covariances."""
        for row in self.pareto_front_:
            if row.expression.key == expression.key:
                return row
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

    def score_formula(self, formula, X, y, sample_weight=None) -> GuessRow:
        """Fit and score a formula of your own on ``(X, y)`` as the search scores its
        formulas, to set beside :attr:`pareto_front_`.

        The formula is read as ``guesses`` are (numbers are constants fitted from
        the value written; see :mod:`cadsr_sklearn.formula_parser`), with this
        model's operators, reward, ``criterion`` and constant fitter (seeded as
        ``fit`` seeds it, so on the training data a guess scores as in
        :attr:`guesses_`). The sampler's limits do not apply: nothing is sampled.

        Parameters
        ----------
        formula : str or sympy.Expr
            In the features' symbols (:attr:`symbol_names_`), e.g. ``"1.5*m*v**2"``.
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights, as in :meth:`fit`.

        Returns
        -------
        row : GuessRow
            The formula fitted: ``complexity``, ``loss`` (MSE on ``(X, y)``),
            ``r2``, ``reward``, ``criterion``, ``equation``, ``formula``,
            ``constants`` with their standard errors…; compare its
            ``criterion`` with the front's on the same data. A list of one per
            output for a model of several outputs.

        Raises
        ------
        ValueError
            For a formula that cannot be read or written with this model's
            operators, or that is not finite on every row; for data as
            :meth:`fit` refuses it.
        """
        check_is_fitted(self, "selections_")
        if self._several_outputs:
            Y = np.asarray(y)
            if Y.ndim != 2 or Y.shape[1] != len(self.estimators_):
                raise ValueError(f"y must have one column per output ({len(self.estimators_)}), "
                                 f"got shape {Y.shape}.")
            return [e.score_formula(formula, X, Y[:, j], sample_weight)
                    for j, e in enumerate(self.estimators_)]
        check_numeric_target(y)
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        except ValueError as err:
            raise with_numeric_hint(err, X) from err
        X, y, sample_weight = frequency_weighted(X, y.astype(np.float64, copy=False),
                                                 sample_weight)
        return formula_row(formula, self.get_params(), X, y, sample_weight, self.symbol_names_,
                           self._seeds()[1])

    def sympy(self, *, index: int | None = None, precision: int | None = None) -> sympy.Expr:
        """The selected formula (or row ``index`` of :attr:`equations_`) as a SymPy expression.

        With ``precision``, its floats are rounded for reading: to ``precision``
        significant digits, or as many more as it takes for the rounded form to
        predict what the formula predicts on the training rows (see
        :mod:`cadsr_sklearn.display`). By default they are exact.
        """
        if self._several_outputs:
            return per_output(self.estimators_, "sympy", self._output_rows(index),
                              precision=precision)
        if precision is None:
            return self._row(index).equation
        return round_floats(*self._shown(index, precision))

    def latex(self, precision: int = DISPLAY_DIGITS, *, index: int | None = None) -> str:
        """The selected formula (or row ``index`` of :attr:`equations_`) in LaTeX.

        Floats to ``precision`` significant digits, or as many more as it takes
        for the shown formula to predict what the formula predicts on the
        training rows (``1.0000061**rho - 0.9999896`` is never shown as
        ``1.0^rho - 1.0``).
        """
        if self._several_outputs:
            return per_output(self.estimators_, "latex", self._output_rows(index),
                              precision=precision)
        return rounded_latex(*self._shown(index, precision), labels=self._labels())

    def report(self, path, X=None, y=None, *, data_name: str | None = None):
        """Write one self-contained HTML page about the fit to ``path``: the chosen
        formula and the front (MathML), the constants, the plots (inline SVG, the
        predicted-vs-true one on ``X, y`` when given, described as ``data_name``), the
        data and the settings; see :mod:`cadsr_sklearn.html_report`. Returns the path."""
        from .html_report import write_report

        check_is_fitted(self, "selections_")
        return write_report(self, path, X, y, data_name=data_name)

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
            After a fit with units, each states them: the sources in comments
            and docstrings (each column's units and the formula's), the
            functions and the module in a ``units`` attribute
            (:class:`~cadsr_sklearn.export.FormulaUnits`).
        index : int, optional
            Row of :attr:`equations_` to export instead of the selected one.
        """
        from . import export

        if target not in export.TARGETS:
            raise ValueError(f"target must be one of {list(export.TARGETS)}, got {target!r}.")
        check_is_fitted(self, "selections_")
        if self._several_outputs:
            return per_output(self.estimators_, "export", self._output_rows(index), target=target)
        row = self._row(index)
        data_units = self.data_units_
        units = None if data_units is None else export.FormulaUnits(
            data_units.feature_labels, describe_units(row.expression, data_units))
        return export.export(row.expression, self.symbol_names_, target, units=units)

    # ---------------------------------------------------------------- formula files
    def save_formula(self, path):
        """Write the fitted model to ``path`` as a formula file: JSON that is data.

        The file holds the feature and target names and units, every row of
        the front (its text, SymPy form, tree, constants with their
        covariance, complexity, loss, criterion), the row each rule of
        ``model_selection`` chooses, the guesses, the search's history and the
        parameters (see :mod:`cadsr_sklearn.formula_file`). Unlike a pickle,
        reading it runs no code: it is the format to share a model in. A custom
        operator is written by name; whoever loads the file registers it under
        that name (:func:`~cadsr_sklearn.register_operator`). Returns the path.
        """
        from .formula_file import write_formula_file

        check_is_fitted(self, "selections_")
        write_formula_file(self, path)
        return path

    @classmethod
    def load_formula(cls, path) -> "CADSRRegressor":
        """The fitted model in the formula file at ``path`` (:meth:`save_formula`).

        It predicts (``return_std`` too), prints, exports and reports as the
        saved model did, and agrees with it to the last bit; it holds no search
        to continue (``warm_start``) and no ``candidates_``. Raises ValueError,
        naming the file and the reason, for a file that is not a formula file
        (a pickle or joblib file is refused unread), one from a later schema,
        or one whose formulas use an operator that is not registered.
        """
        from .formula_file import read_formula_file

        saved = read_formula_file(path)
        try:
            outputs = [cls(**saved.settings) for _ in saved.outputs]
        except TypeError as err:  # a parameter this version does not have
            raise ValueError(f"{path}: {err}; it was written by another version of "
                             "cadsr-sklearn.") from None
        for output, attributes, target in zip(outputs, saved.outputs,
                                              saved.shared["target_names_"]):
            vars(output).update(saved.shared, **attributes, target_names_=[target],
                                n_outputs_=1, version_=__version__)
        if len(outputs) == 1:
            return outputs[0]
        model = cls(**saved.settings)
        vars(model).update(saved.shared)
        join_outputs(model, outputs, saved.shared["target_names_"])
        return model

    # ---------------------------------------------------------------- display
    # repr() stays scikit-learn's parameter repr: a pipeline's repr embeds it, and
    # scikit-learn's pretty printer wraps long parameter lists only for estimators
    # that keep BaseEstimator.__repr__. print() and the notebook add the fitted
    # formula and front (cadsr_sklearn.summary).
    def __str__(self) -> str:
        """scikit-learn's parameter repr; when fitted, also the chosen formula and the
        front (:mod:`cadsr_sklearn.summary`)."""
        params = self.__repr__()
        if "selections_" not in vars(self):
            return params
        from .summary import text_summary

        return f"{params}\n{text_summary(self)}"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text display: what ``print`` shows."""
        printer.text(f"{type(self).__name__}(...)" if cycle else str(self))

    def _repr_html_inner(self) -> str:
        """The notebook's HTML: the summary of a fitted model above scikit-learn's
        diagram of the estimator (:mod:`cadsr_sklearn.summary`)."""
        from sklearn.utils import estimator_html_repr

        diagram = estimator_html_repr(self)
        if "selections_" not in vars(self):
            return diagram
        from .summary import html_summary

        return html_summary(self) + diagram

    def _repr_mimebundle_(self, **kwargs) -> dict[str, str]:
        """What Jupyter shows: ``print``'s text, and the HTML unless scikit-learn's
        ``display`` configuration is ``"text"`` (as for any estimator)."""
        from sklearn import get_config

        output = {"text/plain": str(self)}
        if get_config()["display"] == "diagram":
            output["text/html"] = self._repr_html_inner()
        return output

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A pickle loads only into the version that wrote it, up to patch releases: the
        # fitted state is private and changes between minor versions (see the FAQ).
        saved = state.get("version_")
        if saved is not None and str(saved).split(".")[:2] != __version__.split(".")[:2]:
            raise ValueError(
                f"This model was saved with cadsr-sklearn {saved}, which is incompatible with the "
                f"installed {__version__}. Refit it, or install cadsr-sklearn=={saved} to load it."
            )
        super().__setstate__(state)
