"""``CADSRRegressor``: the CADSR search behind scikit-learn's estimator interface.

The estimator holds the parameters and ``fit``, which does four things:
validate the input (:mod:`cadsr_sklearn.validation`), build the search or take
up the one to continue (:mod:`cadsr_sklearn.search.build`,
:mod:`cadsr_sklearn.search.continuation`), run it (:mod:`cadsr_sklearn.search.session`), and
keep the record of its front (:mod:`cadsr_sklearn.front.rows`); a 2-D ``y`` is one
such fit per column (:mod:`cadsr_sklearn.multioutput`). What reads the fit
(``expression_``, ``predict``, ``sympy``…) is :mod:`cadsr_sklearn.fitted_model`,
and ``print`` :mod:`cadsr_sklearn.reporting.summary`. The parameters' constraints and
the paper's settings are in :mod:`cadsr_sklearn.parameters`.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._version import __version__
from .search.checkpoint import data_fingerprint
from .search.continuation import SearchSaver, continued_search
from .search.devices import resolve_device
from .expressions.notation import symbol_names, target_names
from .front.fitted import column_names
from .fitted_model import FittedModelMixin
from .front.rows import constant_target, record_search
from .expressions.library import DEFAULT_BINARY, DEFAULT_UNARY
from .multioutput import each_output, fit_outputs, target_columns
from .parameters import PAPER_SETTINGS, PARAMETER_CONSTRAINTS, required_columns
from .reporting.progress import Progress
from .front.rows import GuessRow
from .search.guesses import formula_row, guess_rows, seed_search
from .search.reduction import plan_reduction
from .scoring.rewards import sample_size
from .search.interruption import reported
from .search.session import check_found, run_session
from .search.build import build_search
from .search.islands import build_archipelago, islands_loop, scored_candidates
from .settings import SearchSettings
from .reporting.summary import FittedDisplay
from .units.quantities import data_units
from .units.rule import UnitsRule
from .validation import (SmallDataWarning, check_numeric_target, check_target_scale,
                         frequency_weighted, warn_if_small, with_numeric_hint)

__all__ = ["CADSRRegressor", "SmallDataWarning", "PAPER_SETTINGS"]


class CADSRRegressor(FittedModelMixin, FittedDisplay, RegressorMixin, BaseEstimator):
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
        "tanh", "abs", "asin", "acos", "atan", "sinh", "cosh". Either list may also
        hold the names of operators registered with
        :func:`~cadsr_sklearn.register_operator`, or :class:`~cadsr_sklearn.Operator`
        objects.
    use_constants : bool, default=True
        Include the constant token ``c`` whose values are fitted by
        Levenberg–Marquardt.
    use_one : bool, default=True
        Include the literal ``1``.
    max_length : int, default=32
        Maximum number of nodes ν of a tree (the paper's "max depth 32").
    max_constants : int or "auto", default="auto"
        Maximum number of constant tokens in a tree. ``"auto"`` allows 10, and
        on small tables two or one per three training rows, whichever is more
        (six rows: two, the most they can pin; see :ref:`small-tables`). Never
        more than the training rows minus 2, so that every formula keeps
        residual degrees of freedom.
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
        ``complexity_of_operators``), integers ≥ 1: ``{"sin": 3, "pow": 2}``.
        A formula's complexity k (the BIC's k ln S, the description length,
        the front's slots, the ``complexity`` shown) counts each node so;
        variables, ``1`` and ``c`` count 1, and a fitted constant one more.
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
    genetic_generations : int, default=0
        Generations of the genetic stage of every epoch (:mod:`cadsr_sklearn.search.genetic`,
        DSO's GP meld; see :ref:`genetic-stage`): the epoch's batch and the replay buffer
        seed a population that tournament selection, sub-tree crossover and mutation
        recombine; its best new formulas join the epoch beside the policy's samples.
        0 is off (the paper's loop, the default: on Feynman fits of 60 s it did not raise
        the share of laws, see :ref:`genetic-stage`); 5 is a measured setting to try
        where noise is low. Not in the paper.
    genetic_population : int, default=200
        Formulas of the genetic stage's population (a random subset of the batch and the
        replay buffer when they are more), and children per generation.
    genetic_elites : int, default=25
        The genetic stage's best new formulas (by reward) that enter each epoch's top α %
        selection beside the batch; those selected train the policy teacher-forced, with no
        importance weight, as the replay buffer does. Every formula it scores can become τ*
        and join the hall of fame.
    crossover_rate : float, default=0.5
        Probability that two parents swap a random sub-tree each.
    mutation_rate : float, default=0.5
        Probability that a child is mutated once: a random sub-tree replaces one, a node
        becomes another token of its arity, an operator is inserted above a sub-tree, or
        a node is replaced by one of its sub-trees.
    tournament_size : int, default=5
        Parents are the highest reward of this many drawn at random.
    linear_terms : int, default=3
        Linear leaves (:mod:`cadsr_sklearn.search.linear`): every epoch, sums
        ``c0 + c1·b1 + … + cm·bm`` of up to this many terms, chosen by greedy forward
        selection among the features, their products and ratios and the sub-trees of
        the epoch's best formulas, fitted by least squares, join the epoch's selection;
        and so do the epoch's best formulas with a leaf over monomials of the features
        in place of one of their sub-trees (uDSR's ``poly`` token): a sum (``1 -
        v**2/c**2`` under the root of ``m0/sqrt(…)``), a ratio of sums (``1/(1 -
        v/c)``) or a unary operator of a sum (``sqrt(Bx**2 + By**2 + Bz**2)``), each
        of up to this many terms. Each coefficient is a fitted constant the criterion
        charges. 0 is off (the paper). On by default, with ``unary_edits=2``: on
        Feynman fits of 60 s without units the two together solved 42 of 60 laws
        against the paper's loop's 29 at 10 % noise (see :ref:`genetic-stage`).
        Not in the paper.
    unary_edits : int, default=2
        Unary edits (:mod:`cadsr_sklearn.search.unary_edits`): every epoch, each one-node
        change of a unary operator of this many of the formulas of highest reward that no
        edit wrote (τ*, the replay buffer, the epoch's) is fitted and scored: each unary
        operator put above each sub-tree, each unary node swapped for another or removed.
        ``asin(n*sin(theta2))`` is one such edit of ``n*sin(theta2)``, the approximation
        the search holds on to. An edit can become τ* or join the hall of fame; none
        trains the policy. 0 is off (the paper). With the linear leaves (both on by
        default) Feynman fits of 60 s without units solved 42 of 60 laws against the
        paper's loop's 29 at 10 % noise, and 51 against 35 without noise; at 10 % noise
        the laws both found took a median 15.2 s against 12.3 s (see
        :ref:`genetic-stage`). Not in the paper.
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
        Standard deviation of the initial token embeddings (see :doc:`tuning`).
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
        −½((size − L)/(L/4))² (:mod:`cadsr_sklearn.sampling.priors`). ``None`` is off
        (the paper). Raise it when the law is expected to be long.
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
        formula's minimum description length (the fit, each constant to the
        precision the data give it, each node and literal; see
        :ref:`mdl-reward`): unlike the BIC, its large-S limit, it gains a
        formula nothing for interpolating a small table. "reward" judges by the
        reward too (the paper).
    bic_variance : {"mle", "target"}, default="mle"
        σ² of the BIC's Gaussian likelihood (the description length always
        profiles it): each expression's own mean squared residual (the profile
        likelihood) or the variance of the training targets (the paper's text;
        see :ref:`bic-reward`).
    likelihood : {"gaussian", "student_t"}, default="gaussian"
        Likelihood p(τ) inside the BIC.
    spl_eta : float, default=0.99
        η of the SPL reward.
    tpsr_lambda : float, default=0.1
        λ of the TPSR reward.
    const_fit_samples : int, default=1000
        Rows (a random subsample) on which the search fits constants; rewards
        use the rows of ``row_batch``. After the search, the answer and the
        rest of the front are fitted on every row (up to a million; see
        ``row_batch``).
    const_screen_samples : int or None, default=256
        When the rows constants are fitted on are more than this, every new
        formula's constants are first fitted on a random subsample of this
        many, and only the batch's 2·αB/100 best formulas, and those of
        ``equations_``, are refitted on all of them. ``None`` fits every
        formula on all.
    row_batch : int or None, default=10000
        Row batches for large tables: with more rows than this, the search
        fits and scores its formulas on a batch of this many rows (one from
        each of as many runs of the rows in the order of y), drawn once per
        search and weighted to count as all S observations;
        ``const_fit_samples`` then counts rows of the batch. After the loop the
        front and τ* are refitted on all rows (a stratified million of a larger
        table), then scored, chosen, pruned and snapped there: ``equations_``
        reports fits on the whole table. ``None`` scores every formula on all
        rows.
    max_time : float or None, default=None
        Wall-clock budget in seconds; the search stops before an epoch that
        would overrun it, and pruning and snapping stop at its end (the
        answer's snapping may take one epoch's time more; reporting the front
        comes after it, typically a fraction of a second, a few seconds with
        units, where the search on dimensionless groups reports its own front).
    max_evaluations : int or None, default=None
        Budget of scored expressions, whoever proposed them (counted per proposal: the
        search stops after the first batch or proposer's candidates that reach it).
    tol : float, default=1e-20
        Early stop once the best expression's training MSE is at most
        ``tol`` times the variance of the targets (or float64's resolution at the
        targets' magnitude, if larger), with at least 2 rows left beyond its
        fitted constants: an exact recovery stops at once (exact formulas
        score 1e-32 to 1e-28; see :ref:`when-the-search-stops`).
    patience : int or None, default=None
        Stop after this many epochs without a better best expression.
    guesses : list of str or sympy.Expr, or None, default=None
        Formulas you already believe in, such as ``["1.5*m*v**2"]``, in the
        features' symbols (:attr:`symbol_names_`), or SymPy expressions in
        them (see :ref:`your-own-guesses`). Before the first epoch each is
        written as a tree of the search's tokens (numbers become constants
        fitted from the value written; :mod:`cadsr_sklearn.expressions.formula_parser`),
        fitted and scored as every sampled formula, and put in the replay
        buffer, the hall of fame and τ* if the ``criterion`` ranks it best:
        the policy learns from it from the first update, and the answer is
        never worse on the criterion than the best guess. Each is reported in
        :attr:`guesses_` and by ``print(model)``. A guess the search could not
        sample (an operator it lacks, longer than ``max_length``, more
        constants than ``max_constants``, against a hard constraint such as
        ``exp(log(x))``) raises ValueError saying why. The same guesses seed
        every output of a 2-D ``y``. Text is read by ``sympy.sympify``, which
        evaluates it as Python: pass only text you trust.
    dimensional_reduction : bool, default=True
        With ``X_units`` and ``y_units``, search the law's dimensionless
        groups too (Buckingham's π theorem): the target is a prefactor with
        its units times f(groups). The search on the original table runs
        first with half the budget; unless it fits exactly, f is then searched
        on the groups with the rest, and its formulas, written back in the
        features, join the first search's, which the ``criterion`` on the
        original rows chooses from
        (:mod:`cadsr_sklearn.search.reduction`, :ref:`physical-units`). Which groups
        and prefactor were used is :attr:`reduction_`. Not in the paper.
    prune : bool, default=True
        After the search, improve τ* by greedy node-removing edits, refitted,
        while the ``criterion`` rises (:mod:`cadsr_sklearn.search.refinement.pruning`): dead
        weight such as ``2.718**x - exp(x)`` goes. Not in the paper; ``False``
        returns the sampled τ* as it is.
    snap_constants : bool, default=True
        After pruning, fix fitted constants of τ* and of the Pareto front to
        0 or to simple numbers (p/q of two-digit numbers, 2π, 7π/6, 4π², √2…)
        that the data resolve (they reject every rival number as short to
        write by three standard errors), when that raises the ``criterion``
        and passes the profile-likelihood BIC test
        (:mod:`cadsr_sklearn.search.refinement.snapping`): ``x0 - 0.99647`` becomes
        ``x0 - 1`` where the data cannot tell them apart, but a noisy 0.4545
        stays, never 5/11. Not in the paper; ``False``
        keeps every constant as fitted (as :attr:`unsnapped_expression_` does).
    model_selection : {"criterion", "accuracy", "score", "cv"}, default="criterion"
        Which formula of the Pareto front :attr:`expression_`,
        :attr:`best_expression_` and ``predict`` use: "criterion" τ*, the one
        the ``criterion`` ranks highest (the paper's choice; "reward", its
        former name, is accepted and means the same); "accuracy" the lowest
        training loss; "score" PySR's rule; "cv" the simplest within one
        standard error of the lowest cross-validated error (column ``cv_loss``;
        see :ref:`choosing-from-the-front`). ``index=`` uses any other row. It
        can change after fitting, without a refit (``set_params``); "cv" needs
        a fit with it, which computes the cross-validated errors.
    simplify : bool, default=True
        Report each formula (:attr:`expression_`, ``equations_``) in the
        shortest SymPy form that predicts what its tree predicts on the training
        rows to within round-off (:mod:`cadsr_sklearn.front.simplification`):
        ``cos(u + 1.5707963267949)`` is ``-sin(u)``. ``predict`` always
        evaluates the tree. ``False`` reports the tree as SymPy reads it.
    device : str, default="auto"
        Torch device of the policy: "auto" (CUDA when available, else CPU),
        "cpu", "cuda", "cuda:N" or "mps".
    n_jobs : int or None, default=None
        Threads that fit constants and evaluate formulas: ``None`` or −1 every
        core this process may use (``os.sched_getaffinity``), −2 all but one,
        1 serial. The formula found does not depend on ``n_jobs``. With
        ``n_islands`` above 1, the islands share them: each fits on
        ``n_jobs // n_islands`` threads (at least one).
    n_islands : int, default=1
        k, the searches that run side by side as one (PySR's populations, here
        each a whole CADSR search with its own policy, optimizer, replay buffer
        and seeds), each on a Dask worker of its own, exchanging their best
        formulas every ``migration_every`` epochs (see :ref:`islands`). It
        changes the search, so unlike ``n_jobs`` it changes the formula found;
        the same ``random_state`` and ``n_islands`` give the same formula on an
        epoch budget. ``n_epochs`` counts each island's epochs, ``max_time``
        the wall clock of all of them, ``max_evaluations`` their sum. Needs
        ``dask.distributed`` above 1 (``pip install 'cadsr-sklearn[distributed]'``).
    migration_every : int, default=10
        M, the epochs each island runs between two exchanges: its best formulas
        join the hall of fame of all, and the best of all replace the weakest of
        its replay buffer (at most ``migrant_share`` of it).
    migrant_share : float in [0, 1], default=0.5
        The share of each island's replay buffer (its weaker part) that the best
        formulas of all may take at an exchange (PySR's ``fraction_replaced``).
        0 (or a share too small for one place): none travel; the islands search
        independently, and the head joins their fronts and keeps the best of all.
    island_params : list of dict or None, default=None
        What each island sets for itself, where it differs from the values
        above (uDSR's portfolio): island i takes entry ``i % len(island_params)``,
        a dict of the loop's parameters (the policy update's ``batch_size``,
        ``alpha``, ``beta``, ``epsilon``, ``learning_rate``, …, the genetic stage's,
        ``linear_terms`` and ``unary_edits``; not the budgets, which the islands share). E.g.
        ``[{}, {"genetic_generations": 5}]``: every other island also runs the
        genetic stage. None: every island runs with the estimator's values.
        With one island, the search runs with the first entry.
    scheduler : str or None, default=None
        Where the islands run: a Dask scheduler's address (``"tcp://host:8786"``,
        ``client.scheduler.address`` of a client you hold); None uses the client
        of an active ``joblib.parallel_config(backend="dask")``, else starts a
        local cluster of one process per island for the fit.
    random_state : int, RandomState instance or None, default=None
        Seed; the same seed gives the same formula on CPU.
    verbose : int, default=0
        0 is silent; 1 shows a progress bar with the best formula, its training
        R² and complexity; 2 also prints the current Pareto front every few
        seconds (:mod:`cadsr_sklearn.reporting.progress`).
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
        ``checkpoint_every`` seconds, when it stops and on Ctrl-C. If it exists
        when ``fit`` starts, the search resumes from it (same data and package
        version, else ValueError; see :ref:`continuing-a-search`). Beside it,
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
        ``criterion`` seen), in the feature names, its constants at full precision;
        with ``simplify``, its shortest form equal to it on the training rows.
    best_expression_ : Expression
        The same formula as a token tree with fitted constants (and the fixed
        literals of snapping); ``predict`` evaluates it exactly as it was scored.
    unsnapped_expression_ : Expression
        τ* as the search and pruning left it, every constant as fitted, before
        snapping; the same tree as :attr:`best_expression_` when nothing was
        snapped and ``model_selection="criterion"``.
    equations_ : pandas.DataFrame or list of dict
        The Pareto front of the hall of fame, simplest first: each row has a
        strictly lower training loss than every row above it. Columns:
        ``complexity`` (k), ``loss`` (training MSE), ``r2`` (training R²),
        ``reward``, ``criterion``, ``equation`` (SymPy, full precision),
        ``formula`` (readable text, faithful digits), ``constant_errors`` (of
        the numbers the formula shows, ``c0, c1, …`` as ``constants_`` names
        them), ``selected`` (the row ``model_selection`` chose), ``expression``
        (the token tree); with ``X_units``, ``units``. It, ``expression_``,
        ``best_expression_``, ``pareto_front_``, ``constants_`` and ``units_``
        are read from the fitted front by the current ``model_selection`` (see
        :attr:`selections_`), and cannot be assigned.
    pareto_front_ : list of FrontRow
        The same rows as typed records (:class:`~cadsr_sklearn.front.rows.FrontRow`)
        with the covariance of the tree's constants (``uncertainty``) and of
        those its formula shows (``constants``), and the tree before snapping:
        what programs read, where ``equations_`` is the table people read.
    constants_ : pandas.DataFrame or list of dict
        The numbers of the selected formula as its text shows them (not those
        of the tree behind it), one row each (see :ref:`constant-uncertainty`).
        First its constants: ``name`` (``c0, c1, …`` in reading order),
        ``shown`` (as the text rounds it, with its sign), ``value`` (full
        precision), ``std_error``, the 95 % interval ``ci_low``, ``ci_high``,
        ``fixed`` False. Then each number fixed to a simple one by snapping or
        as round-off (``s0, s1, …``, ``shown`` exact such as ``2*pi``,
        ``fixed`` True): no standard error, but ``fitted_value``,
        ``fitted_ci_low``, ``fitted_ci_high`` and ``fitted_std_error`` as
        fitted before, and the ``gap`` to the nearest rival simple number that
        standard error was judged against (NaN in the constants' rows). The
        intervals take the formula as given, not the search that chose it.
    front_rows_ : list of FrontRow
        Every row of the front as the fit reported it, unmarked by any rule:
        :attr:`pareto_front_` is these rows with the one ``model_selection``
        chooses marked ``selected``.
    selections_ : dict of str to int
        The row of the front each rule of ``model_selection`` chooses, by the
        rule's name (``"criterion"``, ``"accuracy"``, ``"score"``; ``"cv"`` only
        after a fit with it, or for a front of one row): what lets
        ``model_selection`` change after the fit.
    target_names_ : list of str
        The name of each target: a pandas or polars Series' name, a
        DataFrame's column names, else ``["y"]`` (``["y0", "y1", …]``); shown
        wherever the formula is (progress bar, ``print``, plots, report, CLI).
    y_variance_ : float
        (Weighted) variance of the training targets; training R² of a front
        member is ``1 - loss / y_variance_``.
    candidates_ : pandas.DataFrame or list of dict
        With ``keep_candidates``: every distinct formula the search scored,
        one row each (``complexity``, ``loss``, ``reward``, ``criterion``,
        ``formula``: the tree in infix, constants to 6 significant digits),
        best reward first; not pruned, snapped or simplified. Without, absent.
    units_ : str or None
        The chosen formula's physical units (with ``X_units``; see
        :ref:`physical-units`), in the units ``fit`` was given where they can
        be written so (else SI): the target's, and a constant factor's where
        it carries units. None without units.
    data_units_ : Units or None
        The units ``fit`` was given, as exponent vectors over base dimensions.
    history_ : list of dict
        Per epoch, before pruning and snapping: τ*'s reward, criterion, loss
        and complexity, ``n_unique`` (distinct formulas of the batch),
        ``invalid_fraction`` and ``units_rejected_fraction`` (not finite, and
        rejected by the dimensional check), evaluations, time (seconds into its
        ``fit`` call) and the update's diagnostics (approximate KL, clip
        fraction, KL to θ_ref, entropy); per proposer (``policy``, ``genetic``,
        ``linear``, ``unary_edit``), ``proposed_<origin>`` (the formulas it scored),
        ``top_<origin>`` (of them, in the top α % that trained the policy) and
        ``time_<origin>``; with ``warm_start``, of every call.
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
        Expressions scored in the loop: each batch in full, and whatever the other
        proposers scored (the genetic stage's children, the linear leaves, the unary
        edits; pruning's are not counted).
    found_by_ : str or None
        The proposer that first wrote τ* as the loop found it (before pruning and
        snapping): "policy" (sampled), "genetic" (a child of the genetic stage),
        "linear" (a linear leaf), "unary_edit" (a unary edit of one of the best
        formulas), "guess" (one of ``guesses``) or "reduction"
        (the search on dimensionless groups); None for a constant target.
    reduction_ : ReducedSearch or None
        With ``dimensional_reduction`` and units that reduce the problem: the
        groups and prefactor used (``reduction_.description``, e.g.
        ``"m_0 * f(v/c)"``), the formulas that search handed over, what it
        spent, and in ``note`` why it did not run where it did not. None
        where nothing reduces (no units, all dimensionless) and for a
        continued search.
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
        Each of ``guesses`` with its constants fitted, scored on the
        ``criterion`` as the search scored it, to compare with
        :attr:`pareto_front_` (:class:`~cadsr_sklearn.front.rows.GuessRow`, a
        :class:`~cadsr_sklearn.front.rows.FrontRow` with the ``guess`` as written).
        Empty without guesses, and for a constant target.
    search_state_ : bytes or None
        With ``warm_start``, the whole search as it stopped, which the next
        ``fit`` continues (:mod:`cadsr_sklearn.search.checkpoint`); None otherwise.
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
        # the genetic stage of every epoch
        genetic_generations=0, genetic_population=200, genetic_elites=25, crossover_rate=0.5,
        mutation_rate=0.5, tournament_size=5, linear_terms=3, unary_edits=2,
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
        guesses=None, dimensional_reduction=True,
        # the answer
        prune=True, snap_constants=True, model_selection="criterion", simplify=True,
        # running
        device="auto", n_jobs=None, n_islands=1, migration_every=10, migrant_share=0.5,
        island_params=None,
        scheduler=None, random_state=None, verbose=0, warm_start=False,
        checkpoint=None, checkpoint_every=60.0, keep_candidates=False,
    ):
        # each parameter as given, in the signature's groups (scikit-learn's rule for __init__)
        self.binary_operators, self.unary_operators = binary_operators, unary_operators
        self.use_constants, self.use_one, self.max_length = use_constants, use_one, max_length
        self.max_constants, self.required_features = max_constants, required_features
        self.nested_constraints, self.operator_complexity = nested_constraints, operator_complexity
        self.batch_size, self.oversampling, self.n_epochs = batch_size, oversampling, n_epochs
        self.learning_rate, self.alpha, self.beta = learning_rate, alpha, beta
        self.epsilon, self.lam, self.entropy_coef = epsilon, lam, entropy_coef
        self.steps_per_epoch, self.ref_update_every = steps_per_epoch, ref_update_every
        self.genetic_generations, self.genetic_population = genetic_generations, genetic_population
        self.genetic_elites, self.crossover_rate = genetic_elites, crossover_rate
        self.mutation_rate, self.tournament_size = mutation_rate, tournament_size
        self.linear_terms, self.unary_edits = linear_terms, unary_edits
        self.embedding_dim, self.dct_dim, self.n_layers = embedding_dim, dct_dim, n_layers
        self.n_heads, self.ff_dim, self.attention = n_heads, ff_dim, attention
        self.position_encoding, self.embedding_std = position_encoding, embedding_std
        self.parent_sibling, self.arity_prior = parent_sibling, arity_prior
        self.length_prior, self.policy = length_prior, policy
        self.reward, self.criterion, self.bic_variance = reward, criterion, bic_variance
        self.likelihood, self.spl_eta, self.tpsr_lambda = likelihood, spl_eta, tpsr_lambda
        self.const_fit_samples, self.const_screen_samples = const_fit_samples, const_screen_samples
        self.row_batch = row_batch
        self.max_time, self.max_evaluations, self.tol = max_time, max_evaluations, tol
        self.patience, self.guesses = patience, guesses
        self.dimensional_reduction = dimensional_reduction
        self.prune, self.snap_constants = prune, snap_constants
        self.model_selection, self.simplify = model_selection, simplify
        self.device, self.n_jobs, self.random_state = device, n_jobs, random_state
        self.n_islands, self.migration_every = n_islands, migration_every
        self.migrant_share = migrant_share
        self.island_params, self.scheduler = island_params, scheduler
        self.verbose, self.warm_start, self.checkpoint = verbose, warm_start, checkpoint
        self.checkpoint_every, self.keep_candidates = checkpoint_every, keep_candidates

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
            Targets; a 2-D ``y`` gets one search per column (see the Notes).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights, as scikit-learn means them: a row of weight w
            counts as w observations of it (2 is the row twice, 0 no row) in
            the constant fit, the likelihood and S = Σw (the BIC's k ln S, the
            description length). Scale relative weights, such as 1/σᵢ², to the
            number of rows first: ``w * len(w) / w.sum()`` (see the FAQ).
        X_units : sequence or dict, default=None
            The physical units of each feature: a unit string pint reads
            (``"m/s^2"``, ``"kg*m^2/s^2"``, ``"1"`` for dimensionless), or an
            exponent vector over base dimensions of your own; a sequence in
            column order or a dict by feature name. With them every formula the
            search scores and returns is dimensionally consistent (see
            :ref:`physical-units`).
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
            to do (see :ref:`small-tables`).
        """
        return self._fit(X, y, sample_weight, X_units=X_units, y_units=y_units)

    def _fit(self, X, y, sample_weight, names: list[str] | None = None, X_units=None,
             y_units=None) -> "CADSRRegressor":
        """:meth:`fit`, the targets named ``names`` (by default the names ``y`` carries);
        each output of a 2-D ``y`` is fitted by its copy's ``_fit`` with its own name."""
        # validate
        settings = SearchSettings.from_params(self.get_params())  # checked across parameters
        check_numeric_target(y)
        given, given_y = X, y
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, multi_output=True)
        except ValueError as err:
            raise with_numeric_hint(err, X) from err
        names = target_names(given_y, 1 if y.ndim == 1 else y.shape[1]) if names is None else names
        y = y.astype(np.float64, copy=False)  # booleans, integers
        if y.ndim == 2:  # one search per column, by copies fitted with this _fit, handed over
            self._keep(fit_outputs(self, given, y, sample_weight, names, X_units, y_units,
                                   fit_one=type(self)._fit), drop=("front_rows_", "candidates_"))
            return self
        self.n_outputs_, self.target_names_ = 1, names
        self.__dict__.pop("estimators_", None)  # of a fit of several outputs before
        X, y, sample_weight = frequency_weighted(X, y, sample_weight)
        self.device_, self.version_ = resolve_device(self.device), __version__
        self.symbol_names_ = symbol_names(column_names(self))
        self.data_units_ = data_units(X_units, y_units, column_names(self))
        # by column index from here on: what the search is built with and compared by
        required = required_columns(settings.sampling.required_features, column_names(self))
        settings = settings.with_required(required)
        torch_seed, numpy_seed = self._seeds()
        self.interrupted_, self.reduction_ = False, None
        report = settings.report
        if np.ptp(y) == 0:  # y = c is exact: no search to run, seed or continue
            self.search_state_, self.guesses_ = None, []
            self._keep(constant_target(X, y, self.symbol_names_, report), drop=("candidates_",))
            return self
        check_target_scale(y)
        warn_if_small(sample_size(len(y), sample_weight), settings.sampling.max_constants,
                      weighted=sample_weight is not None)

        # build, or take up the search to continue
        fingerprint = data_fingerprint(X, y, sample_weight)
        kept = getattr(self, "search_state_", None) if self.warm_start else None
        units = (UnitsRule(self.data_units_) if self.data_units_ and self.data_units_.constrains
                 else None)
        search = continued_search(settings, X, y, sample_weight, fingerprint, self.device_, kept,
                                  units)
        # with units that reduce the law, a search on its dimensionless groups too
        groups = (None if search is not None else
                  plan_reduction(self, settings, X, y, sample_weight, units,
                                 self.symbol_names_, numpy_seed))
        if search is None:
            loop_settings = settings if groups is None else groups.loop_settings()

            def new_search(seeds: tuple[int, int], settings=loop_settings):
                # every island scores on the head's rows (row batch, constant-fit subsample)
                search = build_search(settings, X, y, sample_weight, self.device_, *seeds, units,
                                      scoring_seed=numpy_seed)
                seed_search(search, settings.guesses, self.symbol_names_)
                if groups is not None:
                    groups.before_loop(search)
                return search

            search = new_search((torch_seed, numpy_seed))
            # with islands, the search above is the head: it joins what they find
            search.archipelago = build_archipelago(new_search, loop_settings,
                                                   (torch_seed, numpy_seed))
        # before the run: a guess undefined on these rows is reported before the time is spent
        guesses = guess_rows(search, settings.guesses, self.symbol_names_, X, y, sample_weight,
                             report.simplify)

        # run
        saver = SearchSaver(settings.checkpoint, self.checkpoint_every, fingerprint,
                            self.warm_start, self.symbol_names_)
        progress = partial(Progress, settings.training.n_epochs, settings.training.max_time,
                           self.verbose, search.y_variance, self.symbol_names_, X,
                           target=names[0])
        with islands_loop(search, settings.islands, saver.due) as (loop, scheduler):
            if groups is not None:  # its copy runs its islands on the same workers
                groups.scheduler = scheduler
            result = run_session(search, saver, progress, self.device_,
                                 after_loop=None if groups is None else groups.after_loop,
                                 loop=loop)
        self.reduction_ = groups and groups.done
        self.search_state_ = saver.state
        check_found(result, search)

        # keep its record: the front, each rule's row, how the search went
        kept_candidates = scored_candidates(search) if self.keep_candidates else None
        record = partial(record_search, result, X, y, sample_weight, self.symbol_names_,
                         y_variance=search.y_variance,
                         keep=[self.symbol_names_[i] for i in required],
                         candidates=kept_candidates)
        self._keep(reported(result, record, report), drop=("candidates_",))
        self.guesses_ = guesses
        return self

    def _keep(self, record, drop: tuple[str, ...] = ()) -> None:
        """Set the fitted attributes of ``record`` (a fit's typed record, by its
        ``attributes()``), first dropping those of ``drop`` that a previous fit left."""
        for name in drop:
            self.__dict__.pop(name, None)
        vars(self).update(record.attributes())

    def _seeds(self) -> tuple[int, int]:
        """(torch, NumPy) seeds of a search: the policy's and the constant fitter's."""
        rng = check_random_state(self.random_state)
        torch_seed, numpy_seed = (int(s) for s in rng.randint(0, 2**31 - 1, size=2))
        return torch_seed, numpy_seed

    def set_params(self, **params) -> "CADSRRegressor":
        """Set the parameters of this estimator (see scikit-learn's ``set_params``).

        ``model_selection`` acts on a fitted model too: the formula
        :attr:`expression_`, :meth:`predict` and the rest use follows it at
        once, without a refit. With several outputs it is passed on to
        :attr:`estimators_`, the copies that carry this estimator's parameters.
        """
        super().set_params(**params)
        if "model_selection" in params:
            for estimator in vars(self).get("estimators_", ()):
                estimator.set_params(model_selection=self.model_selection)
        return self

    # ------------------------------------------------------- your own formula
    def score_formula(self, formula, X, y, sample_weight=None) -> GuessRow:
        """Fit and score a formula of your own on ``(X, y)`` as the search scores its
        formulas, to set beside :attr:`pareto_front_`.

        The formula is read as ``guesses`` are (numbers are constants fitted from
        the value written; see :mod:`cadsr_sklearn.expressions.formula_parser`), with this
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
            ``constants``…; compare its ``criterion`` with the front's on the
            same data. A list of one per output for a model of several.

        Raises
        ------
        ValueError
            For a formula that cannot be read or written with this model's
            operators, or that is not finite on every row; for data as
            :meth:`fit` refuses it.
        """
        check_is_fitted(self, "selections_")
        return each_output(  # y: one column per output, for a model of several
            self, lambda output, y: output.estimator._score_formula(formula, X, y, sample_weight),
            target_columns(self, y))

    def _score_formula(self, formula, X, y, sample_weight) -> GuessRow:
        """:meth:`score_formula` of this estimator of one output."""
        check_numeric_target(y)
        try:
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=False)
        except ValueError as err:
            raise with_numeric_hint(err, X) from err
        X, y, sample_weight = frequency_weighted(X, y.astype(np.float64, copy=False),
                                                 sample_weight)
        return formula_row(formula, SearchSettings.from_params(self.get_params()), X, y,
                           sample_weight, self.symbol_names_, self._seeds()[1])

