"""Views of a fitted model, each reading its :class:`~cadsr_sklearn.front.fitted.FittedFront`.

- :mod:`~cadsr_sklearn.reporting.summary`: ``print(model)`` and the notebook's view;
- :mod:`~cadsr_sklearn.reporting.progress`: the progress bar and the live front;
- :mod:`~cadsr_sklearn.reporting.plotting`: the front, the learning curve, predicted
  vs true;
- :mod:`~cadsr_sklearn.reporting.html_report`: one self-contained HTML page;
- :mod:`~cadsr_sklearn.reporting.export`: the formula as NumPy, PyTorch, JAX, Python or C;
- :mod:`~cadsr_sklearn.reporting.formula_file`: a fitted model as JSON that is data.
"""
