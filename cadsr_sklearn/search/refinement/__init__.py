"""The stage after the loop: from the loop's τ* and front to the answer.

- :mod:`~.refinement.stage`: the stage, in order (:func:`~.stage.refine`);
- :mod:`~cadsr_sklearn.search.refinement.baselines`: the constant and the affine
  formulas, scored beside the search's own;
- :mod:`~cadsr_sklearn.search.refinement.pruning`: node-removing edits of τ*;
- :mod:`~cadsr_sklearn.search.refinement.snapping`: constants fixed to simple numbers.
"""
