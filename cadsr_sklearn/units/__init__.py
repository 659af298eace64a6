"""Physical units: every formula dimensionally consistent with the data.

- :mod:`~cadsr_sklearn.units.quantities`: the data's units, as users write them and as
  exponent vectors;
- :mod:`~cadsr_sklearn.units.check`: what makes a formula consistent, and the final check;
- :mod:`~cadsr_sklearn.units.masks`: the constraint while trees grow breadth-first;
- :mod:`~cadsr_sklearn.units.reach`: how few nodes a subtree needs to have given units,
  which the masks and the units prior ask;
- :mod:`~cadsr_sklearn.units.rule`: the one rule object a search plugs in (mask, prior,
  batch flag, final check).
"""
