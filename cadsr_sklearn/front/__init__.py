"""The answer: the fitted Pareto front, its rows, the chosen one and what it shows.

- :mod:`~cadsr_sklearn.front.rows`: the front as typed rows (``pareto_front_``), the
  record a fit keeps, the user's guesses as rows;
- :mod:`~.front.fitted`: :class:`~.fitted.FittedFront`, the one view of a fitted
  front that every report reads;
- :mod:`~cadsr_sklearn.front.selection`: which row is the answer (``model_selection``);
- :mod:`~cadsr_sklearn.front.uncertainty` and :mod:`~cadsr_sklearn.front.shown_constants`:
  the constants' standard errors, in the tree and as the formula shows them;
- :mod:`~cadsr_sklearn.front.simplification`: each formula's shortest equal form.
"""
