"""How a formula is fitted and judged: constants, then predictions, then rewards.

- :mod:`~cadsr_sklearn.scoring.levenberg_marquardt`: the compiled fit of a batch of
  programs' constants;
- :mod:`~cadsr_sklearn.scoring.constant_fitter`: what to fit, from which starts, on
  which rows and threads;
- :mod:`~cadsr_sklearn.scoring.rewards`: the BIC, the description length and the
  ablation rewards; the rank mapping of eq. (11);
- :mod:`~cadsr_sklearn.scoring.scorer`: a batch of trees to scored candidates, and the
  hall of fame.
"""
