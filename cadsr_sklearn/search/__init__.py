"""One search, from its settings to its answer (appendix Algorithm 4 and around it).

- :mod:`~cadsr_sklearn.search.build`: the search's pieces, built from its settings;
- :mod:`~cadsr_sklearn.search.training`: the epoch loop and its state;
- :mod:`~cadsr_sklearn.search.refinement`: the stage after the loop (baselines,
  pruning, snapping);
- :mod:`~cadsr_sklearn.search.session`: one fit's session of its search (threads,
  progress, saving, Ctrl-C);
- :mod:`~cadsr_sklearn.search.continuation` and :mod:`~cadsr_sklearn.search.checkpoint`:
  warm starts, checkpoints and resumes;
- :mod:`~cadsr_sklearn.search.guesses`: the user's formulas, seeded and scored;
- :mod:`~cadsr_sklearn.search.devices`: the torch device and thread counts.
"""
